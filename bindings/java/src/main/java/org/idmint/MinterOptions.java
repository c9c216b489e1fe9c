// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.util.Arrays;

/**
 * Options of {@link Minter#open(String, String, MinterOptions)}: what is not set keeps the
 * library's default (idmint_options in idmint.h says what each one does). Setters return this
 * object; a negative value is refused at once. Not thread-safe; {@code open} copies it.
 */
public final class MinterOptions {
    // The order Native.open reads them in (jni_minter.c); -1: the library's default.
    static final int REGION = 0;
    static final int LEASE_MS = 1;
    static final int RENEW_MS = 2;
    static final int MAX_BORROW_MS = 3;
    static final int CLOCK_WAIT_MS = 4;
    static final int RANGE_BLOCK = 5;
    static final int REFILL_PERCENT = 6;
    static final int DEADLINE_MS = 7;
    static final int RANGE_TARGET_MS = 8;
    static final int HISTORY_CHECK_MS = 9;
    static final int COUNT = 10;

    private final int[] values = new int[COUNT];
    private String token;

    /** Every option at the library's default. */
    public MinterOptions() {
        Arrays.fill(values, -1);
    }

    private MinterOptions set(int which, String name, int value) {
        if (value < 0) {
            throw IdmintException.invalid(name + " " + value + " is negative");
        }
        values[which] = value;
        return this;
    }

    /** The region this process mints in (default 0). */
    public MinterOptions region(int region) {
        return set(REGION, "region", region);
    }

    /** Worker lease length, 100..86400000 ms (default 600000). */
    public MinterOptions leaseMs(int ms) {
        return set(LEASE_MS, "leaseMs", ms);
    }

    /** Renewal interval, below the lease (default 60000). */
    public MinterOptions renewMs(int ms) {
        return set(RENEW_MS, "renewMs", ms);
    }

    /** Future time a full sequence may borrow (default 0). */
    public MinterOptions maxBorrowMs(int ms) {
        return set(MAX_BORROW_MS, "maxBorrowMs", ms);
    }

    /** How long open waits for the clock to pass the lease fence (default 5000). */
    public MinterOptions clockWaitMs(int ms) {
        return set(CLOCK_WAIT_MS, "clockWaitMs", ms);
    }

    /** Range: the block to reserve (default: the namespace's, sized to rangeTargetMs). */
    public MinterOptions rangeBlock(int block) {
        return set(RANGE_BLOCK, "rangeBlock", block);
    }

    /** Range: refill when this percentage of a block is left (default 50). */
    public MinterOptions refillPercent(int percent) {
        return set(REFILL_PERCENT, "refillPercent", percent);
    }

    /** Range: how long a call may wait for a refill (default 2000). */
    public MinterOptions deadlineMs(int ms) {
        return set(DEADLINE_MS, "deadlineMs", ms);
    }

    /** Range: how long one reservation should last at the handle's rate (default 1000). */
    public MinterOptions rangeTargetMs(int ms) {
        return set(RANGE_TARGET_MS, "rangeTargetMs", ms);
    }

    /** How often the authority is asked whether it was restored behind the handle (1000). */
    public MinterOptions historyCheckMs(int ms) {
        return set(HISTORY_CHECK_MS, "historyCheckMs", ms);
    }

    /** Bearer token for an http(s):// authority (default: $IDMINT_TOKEN). */
    public MinterOptions token(String token) {
        this.token = token;
        return this;
    }

    int[] values() {
        return values.clone();
    }

    String token() {
        return token;
    }
}
