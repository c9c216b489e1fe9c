# SPDX-License-Identifier: Apache-2.0
# Copy stdin to stdout at most RATE bytes per second (argv[1]). Tests pipe a
# minting process through it so the process lives for seconds (its stdout
# blocks): leases get renewed and ranges refilled while faults land.
import sys
import time

rate = int(sys.argv[1])
inp, out = sys.stdin.buffer, sys.stdout.buffer
start, done = time.monotonic(), 0
while True:
    chunk = inp.read1(65536)
    if not chunk:
        break
    out.write(chunk)
    out.flush()
    done += len(chunk)
    ahead = done / rate - (time.monotonic() - start)
    if ahead > 0:
        time.sleep(ahead)
