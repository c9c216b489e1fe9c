#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The man pages and --help list the same options.

idmint(1): for each command, the options in its SYNOPSIS lines equal those
in `idmint COMMAND --help`; the global ones (--authority, --version, --help)
are in both `idmint --help` and the SYNOPSIS; every option the page names
outside EXAMPLES is one some --help lists. idmintd(8): the options in its
SYNOPSIS and OPTIONS sections equal those in `idmintd --help`.
Usage: check_man_options.py SRC_DIR IDMINT IDMINTD
"""
import re
import subprocess
import sys

src, idmint, idmintd = sys.argv[1:4]
OPT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
COMMANDS = ["mint", "uuid7", "decode", "ns", "authority", "workers", "verify", "trace", "bench"]
GLOBAL = {"--authority", "--help", "-h", "--version"}
failures = []


def plain(roff):
    """Roff source as text: font escapes gone, \\- a dash."""
    text = re.sub(r"\\f[BIRP]", "", roff).replace("\\-", "-").replace("\\e", "\\")
    return re.sub(r"^\.(B|I|BR|RB|BI|IB|IR|RI)\s+", "", text, flags=re.M)


def sections(path):
    out, name = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith(".SH "):
            name = line[4:].strip().strip('"')
            out[name] = ""
        elif name is not None:
            out[name] += line
    return out


def opts(text):
    return set(OPT.findall(text))


def run(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def compare(what, man, helped):
    if man != helped:
        failures.append(f"{what}: only in the man page {sorted(man - helped)}, "
                        f"only in --help {sorted(helped - man)}")
    else:
        print(f"ok: {what}: {' '.join(sorted(man)) or '(none)'}")


# ---- idmint(1) ----
page = sections(f"{src}/docs/man/idmint.1")
synopsis, current = {}, None
for line in plain(page["SYNOPSIS"]).splitlines():
    m = re.match(r"idmint (\S+)", line)
    if m:
        current = m.group(1)
    if current is not None:
        synopsis[current] = synopsis.get(current, "") + line + "\n"
union = set()
for cmd in COMMANDS:
    helped = opts(run(idmint, cmd, "--help"))
    union |= helped
    compare(f"idmint {cmd}", opts(synopsis.get(cmd, "")) - GLOBAL, helped - GLOBAL)
top = opts(run(idmint, "--help"))
man_top = opts(plain(page["SYNOPSIS"]))
for o in ("--authority", "--version", "--help"):
    for where, found in (("idmint --help", top), ("idmint(1) SYNOPSIS", man_top)):
        if o not in found:
            failures.append(f"{where} does not list {o}")
union |= top | GLOBAL
named = set()
for name, body in page.items():
    if name != "EXAMPLES":
        named |= opts(plain(body))
if named - union:
    failures.append(f"idmint(1) names options no --help lists: {sorted(named - union)}")
else:
    print("ok: every option idmint(1) names is one idmint's --help lists")

# ---- idmintd(8) ----
page = sections(f"{src}/docs/man/idmintd.8")
compare("idmintd", opts(plain(page["SYNOPSIS"] + page["OPTIONS"])), opts(run(idmintd, "--help")))

for f in failures:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
