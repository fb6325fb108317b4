#!/usr/bin/python3
"""Turns callgrind profiles into a link order: the functions that ran, phase by phase.

Usage: link-order.py BINARY STATIC_LIBS PROFILE... > ORDER
Each PROFILE is one phase of a run, in the order the phases ran (callgrind's dumps). A phase's
functions come after the earlier phases' and, within it, most instructions first: so the code a
helper runs from its start on sits together, and what it runs only later (a CLI call, a list
download, the household page) follows, instead of interleaving by heat. Only names that are
functions of BINARY (from `nm`) are kept, so the C library and the loader, which callgrind also saw,
are left out. lld's --symbol-ordering-file places each named function's section in this order,
ahead of everything else (Package.swift).

The toolchain's static libraries in STATIC_LIBS (the Swift runtime, Foundation) come built, most of
their functions sharing one `.text` section per object: naming one such function moves the whole
section, up to 1.5 MB of mostly idle code. Those functions go after all the others, so that the
sections that can be placed function by function stay dense (measured: 1-2 MiB less resident).
"""
import collections
import glob
import os
import re
import subprocess
import sys


def own_cost(path):
    """Instructions per function in one callgrind file (the function's own lines, not its calls)."""
    names, cost = {}, collections.Counter()
    function, skip_next = None, False
    with open(path, errors="replace") as lines:
        for line in lines:
            if line.startswith(("fn=", "cfn=")):
                # "fn=(12) name" names id 12 the first time; later "fn=(12)" alone refers to it.
                key, _, rest = line.rstrip("\n").partition("=")
                match = re.match(r"\((\d+)\)(?: (.*))?$", rest)
                name = rest
                if match:
                    if match.group(2):
                        names[match.group(1)] = match.group(2)
                    name = names.get(match.group(1))
                if key == "fn":
                    function = name
                    cost[function] += 0
            elif line.startswith("calls="):
                skip_next = True  # the next cost line is the call's inclusive cost
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                fields = line.split()
                if function is not None and len(fields) >= 2:
                    cost[function] += int(fields[1])
    return cost


def shared_section_functions(static_libs):
    """Functions that the archives in `static_libs` define in a plain `.text` shared with others."""
    names = set()
    for archive in sorted(glob.glob(os.path.join(static_libs, "*.a"))):
        table = subprocess.run(["objdump", "-t", archive], capture_output=True, text=True).stdout
        for line in table.splitlines():
            # "0000000000000000 g     F .text\t0000000000000041 name"
            fields = line.split()
            if " F " in line and ".text" in fields[:-1]:
                names.add(fields[-1])
    return names


def main():
    binary, static_libs, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
    shared = shared_section_functions(static_libs)
    nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    functions = {fields[2] for fields in (line.split(None, 2) for line in nm.splitlines())
                 if len(fields) == 3 and fields[1] in "tTwW"}
    ran, placed = [], set()
    for profile in profiles:
        cost = own_cost(profile)
        for name, instructions in sorted(cost.items(), key=lambda item: (-item[1], item[0])):
            if instructions > 0 and name in functions and name not in placed:
                placed.add(name)
                ran.append(name)
    ran = [name for name in ran if name not in shared] + [name for name in ran if name in shared]
    if not ran:
        sys.exit("link-order.py: none of the profiled functions is in %s: was it the same build?" % binary)
    sys.stdout.write("\n".join(ran) + "\n")


main()
