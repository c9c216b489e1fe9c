/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client libraries loaded on first use. The PostgreSQL store and the http:// remote
 * bind libpq and libcurl with dlopen() when a store of theirs is opened, so
 * a process on the embedded SQLite store never maps them: together with
 * what they pull in (GnuTLS, Kerberos, LDAP, p11-kit) they were 3 MiB of
 * idmintd's 10 MiB idle RSS. Internal to libidmint.
 */
#ifndef IDMINT_STORE_DYNLIB_H
#define IDMINT_STORE_DYNLIB_H

#include <pthread.h>
#include <stddef.h>

/*
 * One library and the functions a backend calls in it. Define it static with
 * IDMINT__DYNLIB(); the loader fills it once.
 */
struct idmint__dynlib {
    const char *soname;       /* e.g. "libpq.so.5" */
    const char *package;      /* the Debian package that ships it, for the message */
    const char *const *names; /* the symbols, in the order of syms */
    size_t n;
    void **syms;           /* n slots, filled on success */
    void (*on_load)(void); /* copies syms into typed pointers; runs once, under the lock */
    int state;             /* 0 not tried, 1 loaded, negative: the error of the one try */
    char why[256];         /* the message of a failed try, repeated to later callers */
};

#define IDMINT__DYNLIB(soname_, package_, names_, syms_, on_load_)                                 \
    {                                                                                              \
        (soname_), (package_), (names_), sizeof(names_) / sizeof((names_)[0]), (syms_),            \
            (on_load_), 0, ""                                                                      \
    }

/*
 * Load @p lib and resolve all its symbols, the first time; later calls
 * return the first outcome (a library installed after a failed try needs a
 * restart). Thread-safe, and fork-safe: fork() waits for a load in another
 * thread to finish, so a child never inherits the loader's lock held.
 * Returns 0, or IDMINT_EUNAVAILABLE with a message
 * naming the library, its package and the loader's reason. The library is
 * never unloaded.
 */
int idmint__dynlib_load(struct idmint__dynlib *lib);

#endif
