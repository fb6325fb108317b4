#!/usr/bin/python3
"""Checks every file of the curated catalog in blocklists/ (SPEC §1, §9).

Run from anywhere: `/usr/bin/python3 scripts/check-catalog.py [blocklists-dir]`.
Prints one `file:line: problem` per finding and exits 1 when there is any, 0 when the catalog is clean.

The rules mirror what the Swift catalog loader (DomainLists) relies on, plus the curation rules in
blocklists/README.md that no loader can see:
  * header `# key: value` lines first, with the keys each kind of file needs, then one domain a line;
  * `#` comment lines may follow the header but never look like a header line, so no parser can
    mistake them for one; no blank lines, no CRLF, no BOM, a final newline;
  * domains are lowercase ASCII (punycode), at least two labels, LDH labels of 1-63 octets, at most
    253 octets, no trailing dot, no wildcard, no duplicate in a file;
  * a service id equals its file name and its category is one of the known set;
  * no service list names a shared apex (google.com, fastly.net, ...): that would break unrelated sites;
  * no two service lists cover the same name, so blocking one service never blocks part of another;
  * no always-allow entry equals or covers a service domain: allow beats block, so that block
    would silently never bite;
  * the category table in blocklists/README.md lists every service under its own category.
Standard library only, so it runs on a fresh Debian with /usr/bin/python3.
"""

from __future__ import annotations

import ipaddress
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The category set of blocklists/README.md. Extend both together.
CATEGORIES = frozenset({
    "social", "video", "gaming", "messaging", "shopping", "news", "dating", "music",
    "streaming", "forums", "ai", "productivity",
})

# Keys each kind of file must and may carry. Unknown keys are errors: a typo would otherwise
# silently drop a field the loader or the CLI shows.
SERVICE_REQUIRED = ("id", "name", "category", "source")
SERVICE_OPTIONAL = ("note", "license")
ALLOW_REQUIRED = ("name", "purpose")
ALLOW_OPTIONAL = ("note",)
DOH_REQUIRED = ("name", "purpose", "source", "license")
DOH_OPTIONAL = ("note",)

# Apexes shared by many unrelated services. A service list may name a service-specific host under
# one of these (yt3.ggpht.com), never the apex itself.
SHARED_APEXES = frozenset({
    "google.com", "gstatic.com", "googleapis.com", "googleusercontent.com", "ggpht.com",
    "gvt1.com", "gvt2.com", "doubleclick.net", "firebaseio.com", "appspot.com", "goo.gl",
    "apple.com", "icloud.com", "cdn-apple.com", "mzstatic.com",
    "microsoft.com", "live.com", "msn.com", "azureedge.net", "msedge.net", "windows.net",
    "akamai.net", "akamaihd.net", "akamaized.net", "akamaiedge.net", "edgesuite.net", "edgekey.net",
    "akadns.net", "fastly.net", "fastlylb.net", "cloudflare.com", "cloudflare.net",
    "cloudfront.net", "amazonaws.com", "amazon.com", "media-amazon.com", "ssl-images-amazon.com",
    "live-video.net", "footprint.net",
    "llnwd.net", "edgecastcdn.net", "azurefd.net", "b-cdn.net", "app.link",
    "fbcdn.net", "facebook.com", "facebook.net", "qq.com", "naver.jp", "kakao.com",
    "github.io", "githubusercontent.com", "wp.com", "zendesk.com",
})

HEADER_RE = re.compile(r"^# ([a-z][a-z0-9-]*): (.*)$")
LABEL_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
ID_RE = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


@dataclass
class ListFile:
    """One parsed catalog file: its header, its domains with their line numbers."""
    path: Path
    header: dict[str, tuple[str, int]] = field(default_factory=dict)
    domains: list[tuple[str, int]] = field(default_factory=list)


class Report:
    """Collects findings as `file:line: message`, in the order they were found."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[str] = []

    def add(self, path: Path, line: int, message: str) -> None:
        try:
            shown = path.relative_to(self.root.parent)
        except ValueError:
            shown = path
        self.problems.append(f"{shown}:{line}: {message}")


def domain_problem(name: str) -> str | None:
    """Why `name` is not a valid catalog domain, or None when it is."""
    if name != name.strip():
        return "surrounding whitespace"
    if not name.isascii():
        return "not ASCII: write IDNs as punycode (xn--...)"
    if name != name.lower():
        return "not lowercase"
    if name.endswith("."):
        return "trailing dot"
    if "*" in name:
        return "wildcard: list the apex, it covers every subdomain"
    if len(name) > 253:
        return "longer than 253 octets (RFC 1035 §2.3.4)"
    labels = name.split(".")
    if len(labels) < 2:
        return "a single label is a TLD or a local name, not a service domain"
    for label in labels:
        if not LABEL_RE.match(label):
            return f"label {label!r} is not letters, digits and inner hyphens of 1-63 octets"
    if labels[-1].isdigit():
        return "numeric top-level label: IP addresses do not belong in a domain list"
    return None


def parse(path: Path, report: Report) -> ListFile | None:
    """Reads one file, checking the layout rules common to every kind of list."""
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        report.add(path, 1, "byte order mark: save as plain UTF-8")
    if b"\r" in raw:
        report.add(path, 1, "CR characters: use LF line ends")
    if raw and not raw.endswith(b"\n"):
        report.add(path, raw.count(b"\n") + 1, "no final newline")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        report.add(path, 1, f"not UTF-8: {error}")
        return None

    parsed = ListFile(path)
    in_header = True
    seen: dict[str, int] = {}
    for number, line in enumerate(text.lstrip("\ufeff").split("\n")[:-1] if text else [], start=1):
        line = line.rstrip("\r")
        if not line.strip():
            report.add(path, number, "blank line: the catalog uses none, so every line means something")
            continue
        if line.startswith("#"):
            match = HEADER_RE.match(line)
            if in_header:
                if not match:
                    report.add(path, number, "header lines are `# key: value`; end the header "
                                             "with the first domain before any free comment")
                    continue
                key, value = match.group(1), match.group(2).strip()
                if not value:
                    report.add(path, number, f"header `{key}` is empty")
                if key in parsed.header:
                    report.add(path, number, f"header `{key}` repeated "
                                             f"(first on line {parsed.header[key][1]})")
                    continue
                parsed.header[key] = (value, number)
            elif match:
                report.add(path, number, "comment looks like a header line (`# key: value`) "
                                         "after the header; reword it so no loader misreads it")
            continue
        in_header = False
        if "#" in line:
            report.add(path, number, "inline comment: put comments on their own line")
            continue
        problem = domain_problem(line)
        if problem:
            report.add(path, number, f"bad domain {line!r}: {problem}")
            continue
        if line in seen:
            report.add(path, number, f"duplicate domain {line} (first on line {seen[line]})")
            continue
        seen[line] = number
        parsed.domains.append((line, number))
    if not parsed.domains:
        report.add(path, 1, "no domains")
    return parsed


def check_keys(parsed: ListFile, required: tuple[str, ...], optional: tuple[str, ...],
               report: Report) -> None:
    for key in required:
        if key not in parsed.header:
            report.add(parsed.path, 1, f"missing header `# {key}: ...`")
    for key, (_, number) in parsed.header.items():
        if key not in required and key not in optional:
            report.add(parsed.path, number, f"unknown header key `{key}` "
                                            f"(known: {', '.join(required + optional)})")


def covering(name: str, index: dict[str, tuple[str, int]]) -> tuple[str, tuple[str, int]] | None:
    """The entry of `index` that equals `name` or is one of its parent domains, if any."""
    labels = name.split(".")
    for start in range(len(labels) - 1):
        suffix = ".".join(labels[start:])
        if suffix in index:
            return suffix, index[suffix]
    return None


def check_services(directory: Path, report: Report) -> list[ListFile]:
    services = []
    for path in sorted(directory.glob("*")):
        if path.suffix != ".list":
            report.add(path, 1, "not a .list file: services/ holds only <id>.list files")
            continue
        parsed = parse(path, report)
        if parsed is None:
            continue
        check_keys(parsed, SERVICE_REQUIRED, SERVICE_OPTIONAL, report)
        if "id" in parsed.header:
            ident, number = parsed.header["id"]
            if ident != path.stem:
                report.add(path, number, f"id {ident!r} differs from the file name {path.stem!r}")
            if not ID_RE.match(ident):
                report.add(path, number, f"id {ident!r}: use lowercase letters, digits and hyphens")
            if ident in CATEGORIES:
                report.add(path, number, f"id {ident!r} is also a category name; "
                                         "`scrolloff block {ident}` would be ambiguous")
        if "category" in parsed.header:
            category, number = parsed.header["category"]
            if category not in CATEGORIES:
                report.add(path, number, f"unknown category {category!r} "
                                         f"(known: {', '.join(sorted(CATEGORIES))}; "
                                         "a new one goes in README.md and this script)")
        if "LICENSE-nextdns" in parsed.header.get("source", ("", 0))[0]:
            if not (directory.parent / "LICENSE-nextdns").is_file():
                report.add(path, parsed.header["source"][1], "source cites LICENSE-nextdns, "
                                                             "which is missing")
        for name, number in parsed.domains:
            if name in SHARED_APEXES:
                report.add(path, number, f"{name} is a shared apex: blocking it breaks unrelated "
                                         "services; list the service's own hosts under it")
        services.append(parsed)

    # Across lists: one service's block must never take part of another with it.
    owners: dict[str, tuple[str, int]] = {}
    for parsed in services:
        for name, number in parsed.domains:
            owners.setdefault(name, (parsed.path.stem, number))
    for parsed in services:
        for name, number in parsed.domains:
            labels = name.split(".")
            for start in range(len(labels) - 1):
                suffix = ".".join(labels[start:])
                owner = owners.get(suffix)
                if owner and owner[0] != parsed.path.stem:
                    report.add(parsed.path, number, f"{name} is also covered by {suffix} in "
                                                    f"services/{owner[0]}.list (line {owner[1]}): "
                                                    "blocking one would block part of the other")
                    break
    return services


ADDRESS_REQUIRED = ("name", "purpose", "source", "format")
ADDRESS_OPTIONAL = ("note",)


def check_address_list(path: Path, report: Report) -> int:
    """An address list (doh/resolver-addresses.txt, SPEC section 9b): `# key: value` header lines,
    then one IPv4 or IPv6 address or CIDR network a line, `#` comments and blank lines between
    groups, no duplicates, LF line ends and a final newline. Returns how many addresses it holds."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        report.add(path, 1, "starts with a byte order mark")
    if b"\r" in data:
        report.add(path, 1, "has CR line ends; use LF only")
    if not data.endswith(b"\n"):
        report.add(path, data.count(b"\n") + 1, "no final newline")
    header: dict[str, int] = {}
    seen: dict[str, int] = {}
    in_header = True
    for number, line in enumerate(data.decode("utf-8", "replace").split("\n")[:-1], start=1):
        match = re.fullmatch(r"# ([a-z_]+): (.+)", line)
        if in_header and match:
            key = match.group(1)
            if key in header:
                report.add(path, number, f"header key `{key}` repeated (first on line {header[key]})")
            elif key not in ADDRESS_REQUIRED + ADDRESS_OPTIONAL:
                report.add(path, number, f"unknown header key `{key}` (known: {', '.join(ADDRESS_REQUIRED + ADDRESS_OPTIONAL)})")
            header[key] = number
            continue
        in_header = False
        if line == "" or line.startswith("#"):
            continue
        try:
            network = ipaddress.ip_network(line, strict=True)
        except ValueError as error:
            report.add(path, number, f"not an IP address or network: {line!r} ({error})")
            continue
        key = str(network)
        if key in seen:
            report.add(path, number, f"duplicate address {line} (first on line {seen[key]})")
            continue
        seen[key] = number
    for key in ADDRESS_REQUIRED:
        if key not in header:
            report.add(path, 1, f"missing header `# {key}: ...`")
    if not seen:
        report.add(path, 1, "no addresses")
    return len(seen)


def check_plain_lists(directory: Path, required: tuple[str, ...], optional: tuple[str, ...],
                      report: Report) -> list[ListFile]:
    lists = []
    for path in sorted(directory.glob("*")):
        if path.name == "resolver-addresses.txt":
            check_address_list(path, report)
            continue
        if path.suffix != ".list":
            report.add(path, 1, "not a .list file (the one address list is resolver-addresses.txt)")
            continue
        parsed = parse(path, report)
        if parsed is None:
            continue
        check_keys(parsed, required, optional, report)
        lists.append(parsed)
    return lists


def check_readme(root: Path, services: list[ListFile], report: Report) -> None:
    """The README's category table must name every category and list each service under its own."""
    readme = root / "README.md"
    if not readme.is_file():
        report.add(readme, 0, "missing: the catalog's README documents the format and categories")
        return
    rows: dict[str, tuple[set[str], int]] = {}
    for number, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), start=1):
        match = re.match(r"^\| `([a-z-]+)` \|[^|]*\|([^|]*)\|$", line)
        if match:
            ids = {part.strip() for part in match.group(2).split(",") if part.strip()}
            rows[match.group(1)] = (ids, number)
    for category in sorted(CATEGORIES - rows.keys()):
        report.add(readme, 0, f"category {category!r} has no row in the categories table")
    for category, (_, number) in rows.items():
        if category not in CATEGORIES:
            report.add(readme, number, f"category {category!r} is not in the checker's CATEGORIES")
    placed = {ident: category for category, (ids, _) in rows.items() for ident in ids}
    known = {parsed.path.stem for parsed in services}
    for parsed in services:
        category = parsed.header.get("category", ("", 0))[0]
        if category in rows and placed.get(parsed.path.stem) != category:
            report.add(readme, rows[category][1], f"the {category} row should list {parsed.path.stem}")
    for ident, category in placed.items():
        if ident not in known:
            report.add(readme, rows[category][1], f"{ident} is listed but services/{ident}.list "
                                                  "does not exist")


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "blocklists"
    if not root.is_dir():
        print(f"{root}: no such folder; pass the blocklists folder as the first argument",
              file=sys.stderr)
        return 2
    report = Report(root)
    for required in ("services", "allow"):
        if not (root / required).is_dir():
            report.add(root / required, 0, "folder missing")
    services = check_services(root / "services", report)
    allows = check_plain_lists(root / "allow", ALLOW_REQUIRED, ALLOW_OPTIONAL, report)
    check_readme(root, services, report)
    doh = []
    if (root / "doh").is_dir():
        doh = check_plain_lists(root / "doh", DOH_REQUIRED, DOH_OPTIONAL, report)

    # Allow beats block (SPEC §1): an allow entry covering a service domain disarms that block.
    # A narrower allow under a blocked apex (accounts.youtube.com) is deliberate and fine.
    allowed: dict[str, tuple[str, int]] = {}
    for parsed in allows:
        for name, number in parsed.domains:
            allowed.setdefault(name, (f"allow/{parsed.path.name}", number))
    for parsed in services + doh:
        for name, number in parsed.domains:
            hit = covering(name, allowed)
            if hit:
                suffix, (where, line) = hit
                report.add(parsed.path, number, f"{name} is always allowed by {suffix} in "
                                                f"{where}:{line}, so this block would never bite")
    for parsed in allows:
        for name, number in parsed.domains:
            if name in SHARED_APEXES:
                report.add(parsed.path, number, f"{name} is a shared apex: allowing it would "
                                                "unblock every service under it")

    for problem in report.problems:
        print(problem)
    total = sum(len(s.domains) for s in services)
    summary = (f"{len(services)} service lists ({total} domains), {len(allows)} allow lists, "
               f"{len(doh)} DoH lists: {len(report.problems)} problem(s)")
    print(summary, file=sys.stderr)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
