// SPDX-License-Identifier: Apache-2.0
package org.idmint;

/**
 * Base of every error libidmint reports: one nested subclass per library error code, so a caller
 * catches the condition it can handle ({@link LeaseLost}, {@link Unavailable}) and lets the rest
 * go. Unchecked, as a failed mint is a failure of the operation, not a case to handle at every
 * call.
 *
 * <p>{@link #code()} is the library's negative IDMINT_E* value, {@link #name()} its short name
 * ("ELEASELOST"), {@link #text()} the library's fixed text for the code and {@link #detail()} what
 * the library said of this failure (the offending value, the store's message; "" when it said
 * nothing). The message is "text: detail".
 *
 * <p>Mistakes the binding finds before the library sees them (a negative count, a null
 * authority) are {@link InvalidArgument}, the code the library gives the same mistake. A call on
 * a closed {@link Minter} or {@link Authority} throws {@link IllegalStateException} instead.
 */
public class IdmintException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int code;
    private final String detail;

    IdmintException(int code, String text, String detail) {
        super(detail.isEmpty() ? text : text + ": " + detail);
        this.code = code;
        this.detail = detail;
    }

    /** The library's error code: a negative IDMINT_E* value. */
    public int code() {
        return code;
    }

    /** The code's short name, "EINVAL" to "ERESTORED"; "E?" for a code this binding predates. */
    public String name() {
        return switch (code) {
            case -1 -> "EINVAL";
            case -2 -> "ENOMEM";
            case -3 -> "ENOTFOUND";
            case -4 -> "EDISABLED";
            case -5 -> "EEXHAUSTED";
            case -6 -> "ENOWORKER";
            case -7 -> "ELEASELOST";
            case -8 -> "ECLOCK";
            case -9 -> "EFORKED";
            case -10 -> "EUNAVAILABLE";
            case -11 -> "ECONFLICT";
            case -12 -> "ESTORE";
            case -13 -> "ETIMEDOUT";
            case -14 -> "EACCESS";
            case -15 -> "ERESTORED";
            default -> "E?";
        };
    }

    /** The library's fixed English text for the code (idmint_strerror). */
    public String text() {
        return Native.strerror(code);
    }

    /** What the library said of this failure (idmint_errmsg); "" when nothing. */
    public String detail() {
        return detail;
    }

    /**
     * The exception for a library code: called by the JNI layer, and by the binding for the
     * mistakes it finds itself.
     */
    static IdmintException of(int code, String detail) {
        String text = Native.strerror(code);
        return switch (code) {
            case -1 -> new InvalidArgument(code, text, detail);
            case -2 -> new NoMemory(code, text, detail);
            case -3 -> new NotFound(code, text, detail);
            case -4 -> new Disabled(code, text, detail);
            case -5 -> new Exhausted(code, text, detail);
            case -6 -> new NoWorker(code, text, detail);
            case -7 -> new LeaseLost(code, text, detail);
            case -8 -> new Clock(code, text, detail);
            case -9 -> new Forked(code, text, detail);
            case -10 -> new Unavailable(code, text, detail);
            case -11 -> new Conflict(code, text, detail);
            case -12 -> new Store(code, text, detail);
            case -13 -> new TimedOut(code, text, detail);
            case -14 -> new Access(code, text, detail);
            case -15 -> new Restored(code, text, detail);
            default -> new IdmintException(code, text, detail);
        };
    }

    static IdmintException invalid(String detail) {
        return of(-1, detail);
    }

    /** EINVAL: a bad argument (a count out of range, a bad name or layout, a null). */
    public static final class InvalidArgument extends IdmintException {
        private static final long serialVersionUID = 1L;

        InvalidArgument(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ENOMEM: the library could not allocate. */
    public static final class NoMemory extends IdmintException {
        private static final long serialVersionUID = 1L;

        NoMemory(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ENOTFOUND: no such namespace (or no authority at the path yet). */
    public static final class NotFound extends IdmintException {
        private static final long serialVersionUID = 1L;

        NotFound(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** EDISABLED: the namespace is disabled. */
    public static final class Disabled extends IdmintException {
        private static final long serialVersionUID = 1L;

        Disabled(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** EEXHAUSTED: the namespace has no IDs left (its time bits or its range ran out). */
    public static final class Exhausted extends IdmintException {
        private static final long serialVersionUID = 1L;

        Exhausted(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ENOWORKER: every worker id of the region is leased. */
    public static final class NoWorker extends IdmintException {
        private static final long serialVersionUID = 1L;

        NoWorker(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ELEASELOST: the worker lease was lost or ran out; only a new Minter mints again. */
    public static final class LeaseLost extends IdmintException {
        private static final long serialVersionUID = 1L;

        LeaseLost(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ECLOCK: the clock is behind the lease fence and did not pass it in time. */
    public static final class Clock extends IdmintException {
        private static final long serialVersionUID = 1L;

        Clock(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** EFORKED: a handle used in a copy of the process that made it. */
    public static final class Forked extends IdmintException {
        private static final long serialVersionUID = 1L;

        Forked(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** EUNAVAILABLE: the authority cannot be reached; worth a retry. */
    public static final class Unavailable extends IdmintException {
        private static final long serialVersionUID = 1L;

        Unavailable(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ECONFLICT: the request conflicts with the authority's state (a namespace that exists). */
    public static final class Conflict extends IdmintException {
        private static final long serialVersionUID = 1L;

        Conflict(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ESTORE: the store failed or is not an idmint store. */
    public static final class Store extends IdmintException {
        private static final long serialVersionUID = 1L;

        Store(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ETIMEDOUT: no range arrived within the deadline; worth a retry. */
    public static final class TimedOut extends IdmintException {
        private static final long serialVersionUID = 1L;

        TimedOut(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** EACCESS: an http(s):// authority refused the token. */
    public static final class Access extends IdmintException {
        private static final long serialVersionUID = 1L;

        Access(int code, String text, String detail) {
            super(code, text, detail);
        }
    }

    /** ERESTORED: the authority was restored or rewound behind this handle: fence it. */
    public static final class Restored extends IdmintException {
        private static final long serialVersionUID = 1L;

        Restored(int code, String text, String detail) {
            super(code, text, detail);
        }
    }
}
