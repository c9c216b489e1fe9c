/* SPDX-License-Identifier: Apache-2.0 */
#include "dynlib.h"
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>

/* Backends copy each dlsym() result into a typed function pointer with memcpy. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers differ from void *");

/*
 * One lock for every library: loads are rare. fork() takes it first
 * (pthread_atfork), so a child forked while another thread was loading
 * does not start with it held by a thread it does not have.
 */
static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void before_fork(void)
{
    pthread_mutex_lock(&dynlib_lock);
}

static void after_fork(void)
{
    pthread_mutex_unlock(&dynlib_lock);
}

static void register_atfork(void)
{
    (void)pthread_atfork(before_fork, after_fork, after_fork);
}

static int dynlib_try(struct idmint__dynlib *lib)
{
    /* RTLD_LOCAL: its symbols stay out of the caller's namespace. */
    void *handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    const char *err;
    size_t i;

    if (handle == NULL) {
        err = dlerror();
        snprintf(lib->why, sizeof(lib->why), "cannot load %s (Debian package %s): %s", lib->soname,
                 lib->package, err != NULL ? err : "unknown reason");
        return IDMINT_EUNAVAILABLE;
    }
    for (i = 0; i < lib->n; i++) {
        (void)dlerror();
        lib->syms[i] = dlsym(handle, lib->names[i]);
        if (lib->syms[i] == NULL) {
            snprintf(lib->why, sizeof(lib->why), "%s has no function %s: too old a version?",
                     lib->soname, lib->names[i]);
            dlclose(handle);
            return IDMINT_EUNAVAILABLE;
        }
    }
    lib->on_load();
    return 0;
}

int idmint__dynlib_load(struct idmint__dynlib *lib)
{
    int state;

    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&dynlib_lock);
    if (lib->state == 0)
        lib->state = dynlib_try(lib) == 0 ? 1 : IDMINT_EUNAVAILABLE;
    state = lib->state;
    pthread_mutex_unlock(&dynlib_lock);
    if (state == 1)
        return 0;
    /* why is written once, before state, under the lock: stable from here. */
    return idmint__fail(state, "%s", lib->why);
}
