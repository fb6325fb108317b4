#!/usr/bin/python3
"""Writes the synthetic list fixtures in lists/ (run from this folder with /usr/bin/python3).

Every name is invented (under .test, .example and .invalid-looking made-up brands), generated from
a fixed seed so the files never change unless this script does. Each file states in its header what
a correct parser must find (expect-* lines), counted here while writing, and marks each deliberately
bad line with the word "planted" so the tests can find those line numbers on their own.
"""
import random

rng = random.Random(20261121)
SYLLABLES = ["ad", "ban", "cli", "dex", "eno", "fy", "gor", "hub", "iq", "jet", "kal", "lux", "mo", "nex", "ox",
             "pix", "qua", "ro", "syn", "tra", "ul", "vid", "wo", "xy", "yo", "zen"]
TLDS = ["test", "example", "test", "example", "test"]
PREFIXES = ["www", "m", "cdn", "api", "img", "static", "track", "pixel", "ads", "metrics"]


def label():
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def domain(depth=None):
    depth = depth if depth is not None else rng.choice([2, 2, 2, 3, 3, 4])
    parts = [label() + ("-" + label() if rng.random() < 0.2 else "")]
    for _ in range(depth - 2):
        parts.insert(0, rng.choice(PREFIXES) if rng.random() < 0.6 else label())
    return ".".join(parts) + "." + rng.choice(TLDS)


def a_label(text):
    """The A-label of one Unicode label, by Python's own RFC 3492 codec: an oracle independent of ours."""
    return "xn--" + text.lower().encode("punycode").decode("ascii")


def write(name, lines, newline="\n", bom=False):
    data = newline.join(lines) + newline
    with open("lists/" + name, "wb") as f:
        if bom:
            f.write(b"\xef\xbb\xbf")
        f.write(data.encode("utf-8"))


def hosts():
    body, rules, local = [], 0, 0
    body += ["# Synthetic hosts-format block list for the Scroll Off tests", "# Not a real list: every name is made up.",
             "#", "127.0.0.1 localhost", "127.0.0.1 localhost.localdomain", "255.255.255.255 broadcasthost",
             "::1 localhost ip6-localhost ip6-loopback", "fe80::1%lo0 localhost", "ff02::1 ip6-allnodes",
             "ff02::2 ip6-allrouters", "0.0.0.0 0.0.0.0", ""]
    local += 1 + 1 + 1 + 3 + 1 + 1 + 1 + 1
    for section in range(6):
        body += ["", "# --- section %d ---" % section]
        for i in range(40):
            roll = rng.random()
            if roll < 0.55:
                body.append("0.0.0.0 " + domain())
                rules += 1
            elif roll < 0.70:
                body.append("127.0.0.1\t" + domain())
                rules += 1
            elif roll < 0.80:
                names = [domain() for _ in range(rng.randint(2, 4))]
                body.append("0.0.0.0 " + " ".join(names))
                rules += len(names)
            elif roll < 0.88:
                body.append(":: " + domain())
                rules += 1
            elif roll < 0.94:
                body.append("0.0.0.0 " + domain() + "  # tracker seen in 2026")
                rules += 1
            else:
                body.append("0.0.0.0   " + domain().upper() + ".")
                rules += 1
    body += ["", "# internationalized names, as some lists write them raw or already encoded",
             "0.0.0.0 werbung.bücher-laden.example", "0.0.0.0 " + a_label("zählpixel") + ".example"]
    rules += 2
    expected_names = ["werbung.%s.example" % a_label("bücher-laden"), a_label("zählpixel") + ".example"]
    body.append("0.0.0.0 bad!name.example # planted: invalid character")
    body.append("   ")
    header = ["# expect-format: hosts", "# expect-rules: %d" % rules, "# expect-local-names: %d" % local]
    header += ["# expect-name: " + n for n in expected_names]
    write("hosts.txt", header + body)


def adblock():
    body, rules, cosmetic, unsupported, options = [], 0, 0, 0, 0
    body += ["[Adblock Plus 2.0]", "! Title: Synthetic adblock-style list for the Scroll Off tests",
             "! Homepage: https://lists.invalid/", "! Not a real list: every name is made up.", "!"]
    for section in range(6):
        body += ["! --- section %d ---" % section]
        for i in range(45):
            roll = rng.random()
            d = domain()
            if roll < 0.50:
                body.append("||%s^" % d)
                rules += 1
            elif roll < 0.60:
                body.append("||%s^$%s" % (d, rng.choice(["third-party", "important", "all", "third-party,important"])))
                rules += 1
                options += 1
            elif roll < 0.66:
                body.append("|%s^" % d)
                rules += 1
            elif roll < 0.72:
                body.append("@@||%s^" % d)
                rules += 1
            elif roll < 0.78:
                body.append("%s##.%s-banner" % (d, label()))
                cosmetic += 1
            elif roll < 0.82:
                body.append("##div[id^=\"%s\"]" % label())
                cosmetic += 1
            elif roll < 0.86:
                body.append("||%s/%s/ads.js" % (d, label()))
                unsupported += 1
            elif roll < 0.89:
                body.append("/%s[0-9]+\\.%s/" % (label(), rng.choice(TLDS)))
                unsupported += 1
            elif roll < 0.92:
                body.append("||%s^$badfilter" % d)
                unsupported += 1
            elif roll < 0.96:
                body.append("||*.%s^" % d)
                rules += 1
            else:
                body.append("||%s^|" % d)
                rules += 1
    body.append("||^ ! planted: empty rule")
    header = ["! expect-format: adblock", "! expect-rules: %d" % rules, "! expect-cosmetic: %d" % cosmetic,
              "! expect-unsupported: %d" % unsupported, "! expect-options-ignored: %d" % options]
    write("adblock.txt", header + body, newline="\r\n")


def plain():
    body, rules = [], 0
    body += ["# Synthetic one-domain-per-line list for the Scroll Off tests", "# Not a real list: every name is made up.", ""]
    for i in range(280):
        roll = rng.random()
        if roll < 0.75:
            body.append(domain())
        elif roll < 0.82:
            body.append(domain() + ".")
        elif roll < 0.88:
            body.append("\t" + domain().upper())
        elif roll < 0.94:
            body.append(domain() + " # added after a report")
        else:
            body.append("# " + domain() + " (removed, kept for history)")
            continue
        rules += 1
    body += ["", "münchen-klicks.example", "ΠΑΡΆΔΕΙΓΜΑ.example"]
    rules += 2
    body.append("two words.example # planted: a space inside a name")
    header = ["# expect-format: plain", "# expect-rules: %d" % rules,
              "# expect-name: %s.example" % a_label("münchen-klicks"), "# expect-name: %s.example" % a_label("παράδειγμα")]
    write("plain.txt", header + body, bom=True)


def wildcard():
    body, rules, wild = [], 0, 0
    body += ["# Synthetic wildcard list for the Scroll Off tests", "# Not a real list: every name is made up."]
    for i in range(220):
        if rng.random() < 0.7:
            body.append("*." + domain())
            wild += 1
        else:
            body.append(domain())
        rules += 1
    body.append("*.*.double.example # planted: a wildcard inside a name")
    header = ["# expect-format: wildcard", "# expect-rules: %d" % rules, "# expect-wildcard-lines: %d" % wild]
    write("wildcard.txt", header + body)


hosts()
adblock()
plain()
wildcard()
