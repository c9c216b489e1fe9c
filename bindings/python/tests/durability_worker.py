# SPDX-License-Identifier: Apache-2.0
"""One minting process of test_durability.py.

    durability_worker.py URL OUTDIR NAME   (NAME: "slot-run", unique per process)

Mints alternately from the snowflake namespace "dsf" and the range namespace
"drg", appending each batch to OUTDIR/dsf-NAME.bin and OUTDIR/drg-NAME.bin as
native uint64, until OUTDIR/stop exists; then closes both and exits 0. Writes
go straight to the file (no buffer), so a kill -9 loses at most the batch
being written, and a torn last record is dropped by the reader.
"""

import os
import sys
import time
from array import array

import idmint

BATCH = 500
PAUSE_S = 0.008  # keeps the volume to a few million IDs over the test's seconds
OPEN_WAIT_S = 15  # worker ids of killed processes free up when their lease ends


def open_minter(url, ns, **opts):
    deadline = time.monotonic() + OPEN_WAIT_S
    while True:
        try:
            return idmint.Minter(url, ns, **opts)
        except idmint.NoWorkerError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main():
    url, outdir, name = sys.argv[1:4]
    stop = os.path.join(outdir, "stop")
    sf = open_minter(url, "dsf", lease_ms=1000, renew_ms=200)
    rg = open_minter(url, "drg")
    fds = [
        (m, os.open(os.path.join(outdir, "%s-%s.bin" % (ns, name)), os.O_WRONLY | os.O_CREAT))
        for m, ns in ((sf, "dsf"), (rg, "drg"))
    ]
    while not os.path.exists(stop):
        for m, fd in fds:
            os.write(fd, array("Q", m.next_n(BATCH)).tobytes())
        time.sleep(PAUSE_S)
    for m, fd in fds:
        os.close(fd)
        m.close()


if __name__ == "__main__":
    main()
