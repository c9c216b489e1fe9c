/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fork gate: which process copy this is (a generation that grows in
 * every child), and the store gate that makes fork() wait until no store
 * call of the library is in flight. Every module that must notice a child
 * (handle.c, uuid7.c) or that calls a store (lease.c, range.c) calls down
 * into this file; it calls nothing of theirs but the clock's reset.
 */
#include "internal.h"

_Atomic uint64_t idmint__fork_generation;

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/*
 * The store gate: fork() waits until no thread of the library is inside a
 * store call. A child forked in the middle of one (a background renewal or
 * refill holding an SQLite write lock, or an SQLite mutex) would inherit
 * that state with no thread to end it, and its own new handle would wait on
 * it forever. A thread already inside passes again (depth), so nesting
 * cannot deadlock against a waiting fork.
 */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static unsigned gate_active; /* threads inside a store call; guarded by gate_mu */
static int gate_forking;     /* a fork() waits for gate_active to reach 0 */
static _Thread_local unsigned gate_depth;

void idmint__store_gate_enter(void)
{
    idmint__fork_watch();
    if (gate_depth++ > 0)
        return;
    pthread_mutex_lock(&gate_mu);
    while (gate_forking)
        pthread_cond_wait(&gate_cv, &gate_mu);
    gate_active++;
    pthread_mutex_unlock(&gate_mu);
}

void idmint__store_gate_leave(void)
{
    if (--gate_depth > 0)
        return;
    pthread_mutex_lock(&gate_mu);
    if (--gate_active == 0)
        pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

/* Held across fork(): released in the parent, made new in the child. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&gate_mu);
    gate_forking = 1;
    while (gate_active > 0)
        pthread_cond_wait(&gate_cv, &gate_mu);
}

static void fork_parent(void)
{
    gate_forking = 0;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}

static void fork_child(void)
{
    /* Only the forking thread lives on, and it holds gate_mu. */
    gate_forking = 0;
    gate_active = 0;
    pthread_mutex_init(&gate_mu, NULL);
    pthread_cond_init(&gate_cv, NULL);
    atomic_fetch_add(&idmint__fork_generation, 1);
    idmint__clock_after_fork();
}

static void fork_install(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void idmint__fork_watch(void)
{
    pthread_once(&fork_once, fork_install);
}
