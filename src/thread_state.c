/* SPDX-License-Identifier: Apache-2.0 */
#define _DEFAULT_SOURCE /* explicit_bzero; this file only */
/*
 * Per-thread buffers that are too big for thread-local storage. A library
 * whose TLS is accessed with the initial-exec model (the range fast path,
 * src/range.c) must fit all of its TLS into the few hundred bytes of static
 * TLS that glibc keeps for libraries loaded with dlopen() — which is how
 * Python's ctypes, Node.js addons and plugins load libidmint. So the error
 * message and the random stream (csprng.c) live on the heap, one block per
 * thread and slot, found through one pointer of TLS and freed at thread exit.
 */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_key_t keys[IDMINT__SLOT_COUNT];
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;
static int keys_ok;
static _Thread_local void *tl_slots[IDMINT__SLOT_COUNT];
static _Atomic size_t csprng_size; /* the random stream's slot size, for the wipe; every
                                      thread stores the same value */

static void slot_free_errmsg(void *p)
{
    tl_slots[IDMINT__SLOT_ERRMSG] = NULL;
    free(p);
}

/* A thread's key and unused bytes must not outlive it in freed memory. */
static void slot_free_csprng(void *p)
{
    tl_slots[IDMINT__SLOT_CSPRNG] = NULL;
    explicit_bzero(p, atomic_load_explicit(&csprng_size, memory_order_relaxed));
    free(p);
}

static void make_keys(void)
{
    keys_ok = pthread_key_create(&keys[IDMINT__SLOT_ERRMSG], slot_free_errmsg) == 0 &&
              pthread_key_create(&keys[IDMINT__SLOT_CSPRNG], slot_free_csprng) == 0;
}

void *idmint__thread_slot(enum idmint__slot slot, size_t size, int *is_new)
{
    void *p = tl_slots[slot];

    *is_new = 0;
    if (p != NULL)
        return p;
    pthread_once(&keys_once, make_keys);
    if (!keys_ok || (p = calloc(1, size)) == NULL)
        return NULL;
    if (pthread_setspecific(keys[slot], p) != 0) {
        free(p);
        return NULL;
    }
    tl_slots[slot] = p;
    if (slot == IDMINT__SLOT_CSPRNG)
        atomic_store_explicit(&csprng_size, size, memory_order_relaxed);
    *is_new = 1;
    return p;
}
