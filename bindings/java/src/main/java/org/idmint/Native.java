// SPDX-License-Identifier: Apache-2.0
package org.idmint;

/**
 * The JNI library (libidmint_jni.so, src/main/c) and its entry points. Handles cross as longs
 * holding the C pointer; the classes that own them ({@link Minter}, {@link Authority}) make sure
 * a pointer is never used after it is freed. No native method keeps a Java object or array past
 * its return.
 *
 * <p>The library is found, in order: the system property {@code idmint.jni} (a file), the
 * environment variable {@code IDMINT_JNI_LIBRARY} (a file), else {@code idmint_jni} on {@code
 * java.library.path}, which on Debian includes /usr/lib/&lt;arch&gt;/jni where the libidmint-java
 * package puts it.
 */
final class Native {
    private Native() {}

    static {
        String path = System.getProperty("idmint.jni");
        if (path == null || path.isEmpty()) {
            path = System.getenv("IDMINT_JNI_LIBRARY");
        }
        if (path != null && !path.isEmpty()) {
            System.load(java.nio.file.Path.of(path).toAbsolutePath().toString());
        } else {
            try {
                System.loadLibrary("idmint_jni");
            } catch (UnsatisfiedLinkError e) {
                UnsatisfiedLinkError wrapped = new UnsatisfiedLinkError("libidmint_jni.so not found on"
                        + " java.library.path (" + System.getProperty("java.library.path")
                        + "): install libidmint-java, or name the file with -Didmint.jni=PATH or"
                        + " IDMINT_JNI_LIBRARY");
                wrapped.initCause(e);
                throw wrapped;
            }
        }
    }

    /** Makes sure the library is loaded (the static initializer ran). */
    static void load() {}

    // ---- codec (jni_codec.c) ----
    static native int version();

    static native String strerror(int code);

    /** The default layout as {T, R, W, S, unit_ms, epoch_ms}. */
    static native long[] layoutDefault();

    /** Throws InvalidArgument for a bad layout. */
    static native void layoutValidate(int t, int r, int w, int s, int unitMs, long epochMs);

    /** {time_units, unix_ms, region, worker, sequence}. */
    static native long[] decode(int t, int r, int w, int s, int unitMs, long epochMs, long id);

    /** {lo, hi}. */
    static native long[] bounds(int t, int r, int w, int s, int unitMs, long epochMs, long fromMs,
            long toMs);

    /** n UUIDv7 as 2n longs: most then least significant half of each. */
    static native void uuid7(long[] out, int n);

    // ---- minting handles (jni_minter.c) ----
    /** opts: Minter.Options' ints in their order, -1 for the default; token may be null. */
    static native long open(String authority, String ns, int[] opts, String token);

    static native long next(long handle);

    /** Mints len IDs into dst[off, off+len); all or nothing. */
    static native void fill(long handle, long[] dst, int off, int len);

    /** Info.NUMBERS longs; incarnation[0] gets the holder id. */
    static native long[] info(long handle, String[] incarnation);

    static native int leaseStatus(long handle);

    static native void close(long handle);

    // ---- the authority (jni_authority.c) ----
    static native long authorityOpen(String url, int region, boolean existingOnly);

    static native void authorityClose(long handle);

    /** Creates a namespace from a Namespace's fields. */
    static native void nsCreate(long handle, String name, int kind, int[] layoutBits, long unitMs,
            long epochMs, long start, long max, int block, int maxBlock);

    /** The namespace, built by Namespace.fromNative. */
    static native Namespace nsGet(long handle, String name);

    static native Namespace[] nsList(long handle);

    static native void nsSetDisabled(long handle, String name, boolean disabled);

    static native Worker[] workers(long handle, String ns);

    static native void forceRelease(long handle, String ns, int region, int workerId);

    static native AuditEntry[] audit(long handle, long afterSeq, int limit);

    static native void backup(long handle, String destPath);

    static native Grant[] trace(long handle, String ns, long id);

    /** {lo, hi} of the namespace above its floor. */
    static native long[] nsBounds(long handle, String ns, long fromMs, long toMs);
}
