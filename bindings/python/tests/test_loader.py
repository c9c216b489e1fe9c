# SPDX-License-Identifier: Apache-2.0
"""How `import idmint` finds libidmint: $IDMINT_LIBRARY, then the soname
through the dynamic loader, else an ImportError saying what was searched."""

import ctypes.util
import os
import subprocess
import sys

import pytest

import idmint

BUILD = os.environ["IDMINT_BUILD_DIR"]


def _import(env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("IDMINT_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-c", "import idmint, sys; sys.stdout.write(idmint._lib._name)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_idmint_library_names_the_file_to_load():
    p = _import({"IDMINT_LIBRARY": os.path.join(BUILD, "libidmint.so.0")})
    assert p.returncode == 0, p.stderr
    assert p.stdout == os.path.join(BUILD, "libidmint.so.0")


def test_without_it_the_soname_is_found_by_the_dynamic_loader():
    p = _import({"LD_LIBRARY_PATH": BUILD})
    assert p.returncode == 0, p.stderr
    assert p.stdout == "libidmint.so.0"


def test_a_missing_library_is_an_import_error_naming_what_was_searched(tmp_path):
    if ctypes.util.find_library("idmint"):
        pytest.skip("libidmint is installed on this system: nothing can be missing")
    p = _import({})
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: libidmint not found: $IDMINT_LIBRARY is not set")
    assert "found no libidmint.so.0 (searched LD_LIBRARY_PATH=(not set)" in last

    p = _import({"IDMINT_LIBRARY": str(tmp_path / "nope.so")})
    assert "ImportError: IDMINT_LIBRARY=%s: no such file" % (tmp_path / "nope.so") in p.stderr

    bogus = tmp_path / "libbogus.so"
    bogus.write_bytes(b"not an ELF file")
    p = _import({"IDMINT_LIBRARY": str(bogus)})
    assert "ImportError: IDMINT_LIBRARY=%s cannot be loaded" % bogus in p.stderr


def test_the_library_version_is_one_this_package_can_read():
    # 0.x minors only append members and codes (size-guarded structs): any
    # 0.1 or later serves this package; a 1.x may not.
    major, minor = idmint.library_version()[:2]
    assert major == 0 and minor >= 1, (major, minor)
