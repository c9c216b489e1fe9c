# SPDX-License-Identifier: Apache-2.0
"""Fixtures: a private SQLite authority per test and the CLI that set it up.

IDMINT_BUILD_DIR names the build tree (libidmint.so, the idmint CLI); ci.sh
sets it, together with IDMINT_LIBRARY. Without it the suite stops at once.
"""

import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

BUILD = os.environ.get("IDMINT_BUILD_DIR")
if not BUILD or not os.path.isfile(os.path.join(BUILD, "idmint")):
    pytest.exit("tests need IDMINT_BUILD_DIR=a build tree with the idmint CLI (see ci.sh)", 2)
CLI = os.path.join(BUILD, "idmint")
HERE = Path(__file__).resolve().parent


def cli(authority, *args, check=True):
    """Run the idmint CLI on @authority; return the CompletedProcess."""
    p = subprocess.run(
        [CLI, "--authority", authority, *args], capture_output=True, text=True, timeout=60
    )
    if check and p.returncode != 0:
        raise AssertionError("idmint %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def assert_unique(ids):
    """Every ID once: the product's one promise, checked wherever IDs are minted."""
    ids = list(ids)
    assert ids, "no IDs to check"
    if len(set(ids)) != len(ids):
        dup = [v for v, c in Counter(ids).items() if c > 1]
        raise AssertionError("%d duplicate IDs, e.g. %s" % (len(dup), dup[:5]))
    assert all(0 < v < 2**63 for v in ids), "an ID outside 1..2^63-1"


class Store:
    """A temp-dir SQLite authority with one snowflake and one range namespace."""

    def __init__(self, path):
        self.dir = path
        self.url = "sqlite:%s" % (path / "a.db")
        cli(self.url, "ns", "create", "sf", "--kind", "snowflake")
        cli(self.url, "ns", "create", "rg", "--kind", "range", "--block", "10000")

    def cli(self, *args, check=True):
        return cli(self.url, *args, check=check)


@pytest.fixture
def store(tmp_path):
    return Store(tmp_path)
