# SPDX-License-Identifier: Apache-2.0
"""The ctypes mirror against include/idmint.h, as a C compiler reads it: every
struct's size and member offsets, the error table and the kind values. A
member added to the header without its mirror fails here."""

import ctypes
import json
import os
import re
import subprocess

import pytest

import idmint
from idmint import _capi

INCLUDE = os.environ.get("IDMINT_INCLUDE")
STRUCTS = {
    "idmint_layout": _capi.Layout,
    "idmint_decoded": _capi.Decoded,
    "idmint_options": _capi.Options,
    "idmint_handle_info": _capi.HandleInfo,
    "idmint_ns_info": _capi.NsInfo,
    "idmint_worker_info": _capi.WorkerInfo,
    "idmint_audit_entry": _capi.AuditEntry,
}


def _header():
    if not INCLUDE or not os.path.isfile(os.path.join(INCLUDE, "idmint.h")):
        pytest.fail("IDMINT_INCLUDE must name the folder of idmint.h (ci.sh sets it)")
    with open(os.path.join(INCLUDE, "idmint.h")) as f:
        return f.read()


def _members(header, struct):
    """Member names of `typedef struct NAME {...} NAME;` in header order."""
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (struct, struct), header, re.S)
    assert body, struct
    text = re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)
    names = []
    for decl in text.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        m = re.search(r"\(\*(\w+)\)", decl) or re.search(r"(\w+)\s*(\[\d+\])?$", decl)
        names.append(m.group(1))
    return names


@pytest.fixture(scope="module")
def c_view(tmp_path_factory):
    """sizeof/offsetof of every mirrored struct and the error table, from C."""
    header = _header()
    lines = ['#include "idmint.h"', "#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    lines.append('printf("{\\"structs\\": {");')
    for i, name in enumerate(STRUCTS):
        lines.append(
            'printf("%s\\"%s\\": {\\"(sizeof)\\": %%zu", sizeof(%s));'
            % ("," if i else "", name, name)
        )
        for member in _members(header, name):
            lines.append('printf(", \\"%s\\": %%zu", offsetof(%s, %s));' % (member, name, member))
        lines.append('printf("}");')
    lines.append('printf("}, \\"errors\\": {");')
    lines.append("int first = 1;")
    lines.append(
        '#define XX(n, v, t) printf("%s\\"%d\\": [\\"%s\\", \\"%s\\"]", first ? "" : ",", '
        "IDMINT_##n, #n, idmint_strerror(IDMINT_##n)); first = 0;"
    )
    lines.append("IDMINT_ERRNO_MAP(XX)")
    lines.append(
        'printf("}, \\"kinds\\": [%d, %d]}\\n", IDMINT_KIND_SNOWFLAKE, IDMINT_KIND_RANGE);'
    )
    lines.append("return 0; }")
    d = tmp_path_factory.mktemp("abi")
    src, exe = d / "abi.c", d / "abi"
    src.write_text("\n".join(lines) + "\n")
    build = os.environ["IDMINT_BUILD_DIR"]
    subprocess.run(
        [
            "cc",
            "-std=c11",
            "-Wall",
            "-Werror",
            "-I",
            INCLUDE,
            str(src),
            "-o",
            str(exe),
            "-L",
            build,
            "-lidmint",
            "-Wl,-rpath," + build,
        ],
        check=True,
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return json.loads(out), header


@pytest.mark.parametrize("struct", sorted(STRUCTS))
def test_struct_mirror_matches_the_header(c_view, struct):
    view, header = c_view
    cls = STRUCTS[struct]
    c = view["structs"][struct]
    names = _members(header, struct)
    assert [f[0] for f in cls._fields_] == names, "members differ from the header's"
    assert c["(sizeof)"] == ctypes.sizeof(cls)
    for name in names:
        assert getattr(cls, name).offset == c[name], "%s.%s" % (struct, name)


def test_error_table_matches_the_header(c_view):
    view, _ = c_view
    c_errors = {int(k): v for k, v in view["errors"].items()}
    assert {k: v[0] for k, v in c_errors.items()} == _capi.ERRORS
    for code, (name, text) in c_errors.items():
        cls = idmint.errors.BY_CODE[code]
        assert cls.name == name
        assert cls().text == text == idmint.errors.from_code(code, "").text


def test_kind_values_match_the_header(c_view):
    view, _ = c_view
    assert view["kinds"] == [_capi.KIND_SNOWFLAKE, _capi.KIND_RANGE]
