# SPDX-License-Identifier: Apache-2.0
# The one compiled part, idmint._fast (the minting hot path): it needs only
# Python's headers (Debian: python3-dev) and a C compiler, not libidmint.
import os

from setuptools import Extension, setup

flags = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion"]
if os.environ.get("IDMINT_WERROR") == "1":  # CI; a user's newer compiler may warn more
    flags.append("-Werror")

setup(ext_modules=[Extension("idmint._fast", ["src/idmint/_fast.c"], extra_compile_args=flags)])
