// SPDX-License-Identifier: Apache-2.0
package org.idmint;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A direct connection to an authority's store, for administration: namespaces, worker leases,
 * the audit log, provenance, backups. Every change is audited by the authority.
 *
 * <p>Thread-safe: calls on one Authority take turns (the library serves one thread at a time per
 * connection), under a {@link ReentrantLock}, which a virtual thread waits on without pinning its
 * carrier. Open one Authority per thread for parallel work. A call after {@link #close()} throws
 * {@link IllegalStateException}.
 */
public final class Authority implements AutoCloseable {
    private final ReentrantLock lock = new ReentrantLock();
    private long ptr;

    private Authority(long ptr) {
        this.ptr = ptr;
    }

    /**
     * Connects to the store at url, creating it if there is none yet.
     *
     * @param url as for {@link Minter#open(String, String)}; "" for $IDMINT_AUTHORITY or the
     *     machine's default
     * @param region the region this process serves, 0..65535
     * @throws IdmintException.InvalidArgument a null or bad URL, a bad region
     * @throws IdmintException.Unavailable the store cannot be opened or created
     * @throws IdmintException.Store not an idmint store
     */
    public static Authority open(String url, int region) {
        return new Authority(openHandle(url, region, false));
    }

    /**
     * As {@link #open(String, int)}, but creates nothing: for tools that only read.
     *
     * @throws IdmintException.NotFound no SQLite store at the path yet
     */
    public static Authority openExisting(String url, int region) {
        return new Authority(openHandle(url, region, true));
    }

    private static long openHandle(String url, int region, boolean existingOnly) {
        if (url == null) {
            throw IdmintException.invalid("authority is null: name one (\"sqlite:/path/idmint.db\"),"
                    + " or \"\" for $IDMINT_AUTHORITY or the machine's default");
        }
        return Native.authorityOpen(url.isEmpty() ? null : url, region, existingOnly);
    }

    private long enter() {
        lock.lock();
        if (ptr == 0) {
            lock.unlock();
            throw new IllegalStateException("authority is closed");
        }
        return ptr;
    }

    /**
     * Creates a snowflake namespace.
     *
     * @throws IdmintException.InvalidArgument a bad name or layout
     * @throws IdmintException.Conflict it exists
     */
    public void createSnowflake(String name, Layout layout) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(layout, "layout");
        long h = enter();
        try {
            Native.nsCreate(h, name, 1,
                    new int[] {layout.timeBits(), layout.regionBits(), layout.workerBits(),
                        layout.sequenceBits()},
                    layout.unitMs(), layout.epochMs(), 0, 0, 0, 0);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Creates a range namespace handing out start..max.
     *
     * @param start the first value (at least 1)
     * @param max the last value that may be issued; 0 for the largest, 2^63-1
     * @param block the default block; 0 for the library's (10000)
     * @param maxBlock the largest block one reservation may take; 0 for the library's
     * @throws IdmintException.InvalidArgument a bad name or bounds
     * @throws IdmintException.Conflict it exists
     */
    public void createRange(String name, long start, long max, int block, int maxBlock) {
        Objects.requireNonNull(name, "name");
        long h = enter();
        try {
            Native.nsCreate(h, name, 2, null, 0, 0, start, max, block, maxBlock);
        } finally {
            lock.unlock();
        }
    }

    /**
     * One namespace ("default" is created on first use).
     *
     * @throws IdmintException.NotFound no such namespace
     */
    public Namespace namespace(String name) {
        Objects.requireNonNull(name, "name");
        long h = enter();
        try {
            return Native.nsGet(h, name);
        } finally {
            lock.unlock();
        }
    }

    /** Every namespace, by name. */
    public List<Namespace> namespaces() {
        long h = enter();
        try {
            return List.of(Native.nsList(h));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Disables a namespace: no new leases or ranges; handles mint on until their lease's end.
     *
     * @throws IdmintException.NotFound no such namespace
     */
    public void disable(String name) {
        setDisabled(name, true);
    }

    /** Enables a disabled namespace again. */
    public void enable(String name) {
        setDisabled(name, false);
    }

    private void setDisabled(String name, boolean disabled) {
        Objects.requireNonNull(name, "name");
        long h = enter();
        try {
            Native.nsSetDisabled(h, name, disabled);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The worker-id leases of a snowflake namespace.
     *
     * @throws IdmintException.NotFound no such namespace
     */
    public List<Worker> workers(String namespace) {
        Objects.requireNonNull(namespace, "namespace");
        long h = enter();
        try {
            return List.of(Native.workers(h, namespace));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes a worker id from its holder: the holder stops minting at its next renewal, and the id
     * is handed out again only above every ID the holder could have minted (docs/operations.md).
     *
     * @throws IdmintException.NotFound no such namespace or worker id
     */
    public void forceRelease(String namespace, int region, int workerId) {
        Objects.requireNonNull(namespace, "namespace");
        long h = enter();
        try {
            Native.forceRelease(h, namespace, region, workerId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Audit records after seq, oldest first, at most limit (1..10000) of them.
     *
     * @throws IdmintException.InvalidArgument a limit out of range
     */
    public List<AuditEntry> audit(long afterSeq, int limit) {
        if (limit < 1 || limit > 10_000) {
            throw IdmintException.invalid("limit " + limit + " is outside 1..10000");
        }
        long h = enter();
        try {
            return List.of(Native.audit(h, afterSeq, limit));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Copies an SQLite authority to destPath, marked as a backup: served again only after
     * {@code idmint authority fence} (docs/operations.md, "Restores").
     *
     * @throws IdmintException.InvalidArgument not an SQLite authority, or destPath exists
     */
    public void backup(String destPath) {
        Objects.requireNonNull(destPath, "destPath");
        long h = enter();
        try {
            Native.backup(h, destPath);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The grants that cover an ID of a namespace: who could have minted it. Empty when none.
     *
     * @throws IdmintException.NotFound no such namespace
     */
    public List<Grant> trace(String namespace, long id) {
        Objects.requireNonNull(namespace, "namespace");
        long h = enter();
        try {
            return List.of(Native.trace(h, namespace, id));
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@link Idmint#bounds} for a snowflake namespace, kept above its floor.
     *
     * @throws IdmintException.InvalidArgument a range namespace, an empty window, a window out of
     *     the layout's time or at or below the floor
     */
    public IdBounds bounds(String namespace, Instant from, Instant to) {
        Objects.requireNonNull(namespace, "namespace");
        long fromMs = Objects.requireNonNull(from, "from").toEpochMilli();
        long toMs = Objects.requireNonNull(to, "to").toEpochMilli();
        long h = enter();
        try {
            long[] b = Native.nsBounds(h, namespace, fromMs, toMs);
            return new IdBounds(b[0], b[1]);
        } finally {
            lock.unlock();
        }
    }

    /** Closes the connection. Idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (ptr != 0) {
                Native.authorityClose(ptr);
                ptr = 0;
            }
        } finally {
            lock.unlock();
        }
    }
}
