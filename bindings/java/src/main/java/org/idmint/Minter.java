// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * A minting handle on one namespace: a worker lease (snowflake) or reserved ranges (range), with
 * the library's renewal or refill thread behind it. IDs are positive longs.
 *
 * <pre>{@code
 * try (Minter m = Minter.open("sqlite:/var/lib/idmint/idmint.db", "orders")) {
 *     long id = m.next();
 * }
 * }</pre>
 *
 * <p>Thread-safe: any number of threads, platform or virtual, may share one Minter. A call holds
 * no Java lock and pins no Java object while it waits (for the next time unit, or for a range
 * refill up to deadlineMs), so waiting never stalls the garbage collector or other threads.
 * {@link #close()} waits for calls in flight, then releases the lease; any later call throws
 * {@link IllegalStateException}. A Minter that is never closed is closed when it is collected,
 * but its lease is held until then: close it.
 */
public final class Minter implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private final Handle handle;
    private final Cleaner.Cleanable cleanable;
    private final String namespace;

    private Minter(long ptr, String namespace) {
        this.handle = new Handle(ptr);
        this.cleanable = CLEANER.register(this, handle);
        this.namespace = namespace;
    }

    /** {@link #open(String, String, MinterOptions)} with every option at its default. */
    public static Minter open(String authority, String namespace) {
        return open(authority, namespace, new MinterOptions());
    }

    /**
     * Opens a handle on a namespace: takes a worker lease (snowflake) or reserves the first range.
     * "default" is created on first use.
     *
     * @param authority the store, "sqlite:/path/idmint.db", "postgres://...", "etcd://h:p/prefix",
     *     "http://host:port"; "" for $IDMINT_AUTHORITY, else the machine's default
     *     (sqlite:/var/lib/idmint/idmint.db)
     * @param namespace the namespace's name
     * @param options null for the defaults
     * @throws IdmintException.InvalidArgument a null authority or namespace, a bad URL, name or
     *     option
     * @throws IdmintException.NotFound no such namespace
     * @throws IdmintException another library error: Disabled, NoWorker, Exhausted, Clock, Access,
     *     Unavailable, Store, TimedOut
     */
    public static Minter open(String authority, String namespace, MinterOptions options) {
        if (authority == null) {
            throw IdmintException.invalid("authority is null: name one (\"sqlite:/path/idmint.db\"),"
                    + " or \"\" for $IDMINT_AUTHORITY or the machine's default");
        }
        if (namespace == null) {
            throw IdmintException.invalid("namespace is null");
        }
        MinterOptions o = options != null ? options : new MinterOptions();
        long ptr = Native.open(authority.isEmpty() ? null : authority, namespace, o.values(),
                o.token());
        return new Minter(ptr, namespace);
    }

    /** The namespace this handle mints in. */
    public String namespace() {
        return namespace;
    }

    /**
     * One ID. Snowflake IDs strictly increase within the handle; range IDs within each thread.
     *
     * @throws IllegalStateException the minter is closed
     * @throws IdmintException.LeaseLost the lease was lost or ran out: open a new Minter
     * @throws IdmintException another library error (Clock, Exhausted, Disabled, Restored;
     *     range: Unavailable, Store or TimedOut when no refill arrived in time)
     */
    public long next() {
        long ptr = handle.enter();
        try {
            return Native.next(ptr);
        } finally {
            handle.exit();
        }
    }

    /**
     * n IDs, increasing. All or nothing.
     *
     * @throws IdmintException.InvalidArgument n outside 1..{@link Idmint#MAX_BATCH}
     * @throws IllegalStateException the minter is closed
     * @throws IdmintException as {@link #next()}
     */
    public long[] nextN(int n) {
        Idmint.checkCount(n);
        long[] out = new long[n];
        fill(out, 0, n);
        return out;
    }

    /** Fills the whole array with IDs: {@link #fill(long[], int, int)}. */
    public void fill(long[] dst) {
        fill(dst, 0, Objects.requireNonNull(dst, "dst").length);
    }

    /**
     * Mints len IDs into dst[off, off+len), increasing; all or nothing (on failure dst is as it
     * was). Reusing one array saves the allocation of {@link #nextN(int)}.
     *
     * @throws NullPointerException dst is null
     * @throws IndexOutOfBoundsException off and len do not fit dst
     * @throws IdmintException.InvalidArgument len outside 1..{@link Idmint#MAX_BATCH}
     * @throws IllegalStateException the minter is closed
     * @throws IdmintException as {@link #next()}
     */
    public void fill(long[] dst, int off, int len) {
        Objects.requireNonNull(dst, "dst");
        Objects.checkFromIndexSize(off, len, dst.length);
        Idmint.checkCount(len);
        long ptr = handle.enter();
        try {
            Native.fill(ptr, dst, off, len);
        } finally {
            handle.exit();
        }
    }

    /**
     * What the handle holds: its lease or its reserve.
     *
     * @throws IllegalStateException the minter is closed
     */
    public MinterInfo info() {
        String[] incarnation = new String[1];
        long ptr = handle.enter();
        long[] n;
        try {
            n = Native.info(ptr, incarnation);
        } finally {
            handle.exit();
        }
        return MinterInfo.fromNative(n, incarnation[0]);
    }

    /**
     * How the lease stands: 0 while its renewals succeed, else the library code of the last
     * failed renewal (see idmint_lease_status in idmint.h: LeaseLost, Disabled and Restored are
     * final; any other code is an outage that minting rides out until the lease's end).
     *
     * @throws IllegalStateException the minter is closed
     */
    public int leaseStatus() {
        long ptr = handle.enter();
        try {
            return Native.leaseStatus(ptr);
        } finally {
            handle.exit();
        }
    }

    /**
     * Waits for calls in flight, stops renewal and releases the lease. Idempotent; safe from any
     * thread.
     */
    @Override
    public void close() {
        cleanable.clean();
    }

    /**
     * The C handle and the count of calls using it. A call enters (the count goes up) unless the
     * handle is closing; closing sets the sign bit, waits for the count to drain, then frees. The
     * Cleaner runs it once, from close() or after the Minter is collected, and it refers to
     * nothing of the Minter, so the Minter can be collected.
     */
    private static final class Handle implements Runnable {
        private static final VarHandle USERS;
        private static final int CLOSING = Integer.MIN_VALUE;

        static {
            try {
                USERS = MethodHandles.lookup().findVarHandle(Handle.class, "users", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final long ptr;
        @SuppressWarnings("unused") // through USERS
        private volatile int users;

        Handle(long ptr) {
            this.ptr = ptr;
        }

        long enter() {
            int u;
            do {
                u = (int) USERS.getVolatile(this);
                if (u < 0) {
                    throw new IllegalStateException("minter is closed");
                }
            } while (!USERS.weakCompareAndSet(this, u, u + 1));
            return ptr;
        }

        void exit() {
            USERS.getAndAdd(this, -1);
        }

        @Override
        public void run() {
            USERS.getAndBitwiseOr(this, CLOSING);
            // Calls in flight wait at most a time unit or a range deadline: poll, don't spin.
            while ((int) USERS.getVolatile(this) != CLOSING) {
                LockSupport.parkNanos(100_000);
            }
            Native.close(ptr);
        }
    }
}
