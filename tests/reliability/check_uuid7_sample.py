#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# reliability.uuid7_volume: runs test_uuid7_volume (100 million UUIDv7 from
# two threads: order, version and variant, random-bit frequencies, repeats),
# then reads its sample (every 100th UUID) with Python's own uuid module:
# each must be version 7 with the RFC 4122/9562 variant, the sample must
# hold the count asked for, and its UUIDs must all differ.
# Usage: check_uuid7_sample.py TEST_UUID7_VOLUME_BINARY

import os
import subprocess
import sys
import tempfile
import uuid

EXPECTED = 100_000_000 // 100


def main():
    if len(sys.argv) != 2:
        print("usage: check_uuid7_sample.py TEST_UUID7_VOLUME_BINARY", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sample")
        run = subprocess.run([sys.argv[1], path], check=False)
        if run.returncode != 0:
            print("test_uuid7_volume failed (exit %d)" % run.returncode, file=sys.stderr)
            return 1
        with open(path, "rb") as f:
            raw = f.read()
    if len(raw) != 16 * EXPECTED:
        print("the sample holds %d bytes, want %d" % (len(raw), 16 * EXPECTED), file=sys.stderr)
        return 1
    seen = set()
    for k in range(EXPECTED):
        u = uuid.UUID(bytes=raw[16 * k:16 * k + 16])
        if u.version != 7 or u.variant != uuid.RFC_4122:
            print("sample UUID %d %s: Python's uuid reads version %r, variant %r"
                  % (k, u, u.version, u.variant), file=sys.stderr)
            return 1
        seen.add(u.int)
    if len(seen) != EXPECTED:
        print("the sample repeats: %d distinct of %d" % (len(seen), EXPECTED), file=sys.stderr)
        return 1
    print("Python's uuid: %d sampled UUIDs, every one version 7, RFC variant, distinct"
          % EXPECTED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
