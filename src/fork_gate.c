/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* MADV_WIPEONFORK, MAP_ANONYMOUS; this file only */
/*
 * The fork gate: which copy of the process this is, and the store gate that
 * makes fork() wait until no store call of the library is in flight. Every
 * module that must notice a child (handle.c, csprng.c) or that calls a store
 * (lease.c, range.c) calls down into this file; it calls nothing of theirs
 * but the clock's reset.
 *
 * A child of libc's fork() runs the pthread_atfork handler; one made by the
 * raw system call (syscall(SYS_fork), clone() without CLONE_VM, as some
 * sandboxes and checkpoint tools do) runs nothing at all. Both are caught by
 * pages marked MADV_WIPEONFORK, which the kernel hands every child empty:
 * - one holds the fork id word: this process's id (never 0) in the process
 *   that claimed it, 0 in any copy made since, which then claims a new one
 *   here (the slow path) and sets the gate and the clock up again;
 * - handles live on such pages themselves (idmint__wiped_alloc), with a
 *   flag that is 1 in the opener and 0 in every child: the mint's check is
 *   one load and compare on the handle's own cache line, and a child finds
 *   nothing of the parent's lease or state there at all.
 * The random streams (csprng.c) compare their fork id with the word.
 *
 * Where the kernel refuses MADV_WIPEONFORK (EINVAL before Linux 4.14) the
 * word and the flags stay 0 and every check takes the slow path, where the
 * id is the atfork generation and getpid(): one system call per mint (about
 * 0.16 us on a 2-core VM, where a range mint otherwise takes 2 ns).
 */
#include "internal.h"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#define ID_CLAIMING UINT64_MAX /* a thread of a new copy is claiming its id */

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t never_set;  /* the word where there is no page: always 0 */
static _Atomic uint64_t *wipe_word; /* on the MADV_WIPEONFORK page; NULL: getpid() */
static _Atomic uint64_t generation; /* ids handed out so far in this line of copies */
static _Atomic long reset_pid;      /* getpid() fallback: the copy whose gate is set up; -pid:
                                       being set up by a thread of that copy */
static int is_wipe_refused;         /* a test asked for the fallback */

/*
 * The store gate: fork() waits until no thread of the library is inside a
 * store call. A child forked in the middle of one (a background renewal or
 * refill holding an SQLite write lock, or an SQLite mutex) would inherit
 * that state with no thread to end it, and its own new handle would wait on
 * it forever. A thread already inside passes again (depth), so nesting
 * cannot deadlock against a waiting fork. A raw clone cannot be made to
 * wait: see docs/threading.md.
 */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static unsigned gate_active; /* threads inside a store call; guarded by gate_mu */
static int gate_forking;     /* a fork() waits for gate_active to reach 0 */
static _Thread_local unsigned gate_depth;

/*
 * Start this copy's process-wide state over: only the thread that made the
 * copy lives on in it, so the gate's mutex may be held by a thread that is
 * not here, and the clock's ticker is gone.
 */
static void start_over(void)
{
    gate_forking = 0;
    gate_active = 0;
    gate_depth = 0;
    pthread_mutex_init(&gate_mu, NULL);
    pthread_cond_init(&gate_cv, NULL);
    idmint__clock_after_fork();
}

/*
 * The fork id of this copy, claiming a new one when the page says this is
 * a copy nobody has claimed yet (the word reads 0 only in a process with
 * memory of its own, so the claim never touches a parent's state). The
 * new id is above every id the parent could have handed to its handles.
 */
static uint64_t wipe_claim(void)
{
    for (;;) {
        uint64_t w = atomic_load_explicit(wipe_word, memory_order_acquire);

        if (w != 0 && w != ID_CLAIMING)
            return w;
        if (w == 0 && atomic_compare_exchange_strong(wipe_word, &w, ID_CLAIMING)) {
            uint64_t id = atomic_load(&generation) + 1;

            atomic_store(&generation, id);
            start_over();
            atomic_store_explicit(wipe_word, id, memory_order_release);
            return id;
        }
        sched_yield(); /* another thread of this copy is claiming */
    }
}

/*
 * getpid() fallback: set the gate up again once in a new copy. Changes
 * shared memory, so only from calls that a vfork() child may not make
 * anyway (open, store calls): a mint there only reads.
 */
static void pid_sync(void)
{
    long pid = (long)getpid();

    for (;;) {
        long seen = atomic_load_explicit(&reset_pid, memory_order_acquire);

        if (seen == pid)
            return;
        if (seen != -pid && atomic_compare_exchange_strong(&reset_pid, &seen, -pid)) {
            start_over();
            atomic_store_explicit(&reset_pid, pid, memory_order_release);
            return;
        }
        sched_yield();
    }
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
    /* The forking thread holds gate_mu; it is the only thread here. */
    if (wipe_word != NULL) {
        (void)wipe_claim(); /* the page is empty in every child */
    } else {
        atomic_fetch_add(&generation, 1);
        start_over();
        atomic_store(&reset_pid, (long)getpid());
    }
}

static void fork_install(void)
{
#ifdef MADV_WIPEONFORK
    long page = sysconf(_SC_PAGESIZE);
    void *p = MAP_FAILED;

    if (!is_wipe_refused && page > 0)
        p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED && madvise(p, (size_t)page, MADV_WIPEONFORK) != 0) {
        munmap(p, (size_t)page); /* EINVAL: a kernel before 4.14 */
        p = MAP_FAILED;
    }
    if (p != MAP_FAILED) {
        atomic_store(&generation, 1);
        wipe_word = p;
        atomic_store(wipe_word, 1);
    }
#endif
    if (wipe_word == NULL) {
        atomic_store(&generation, 1);
        atomic_store(&reset_pid, (long)getpid());
    }
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/*
 * LeakSanitizer scans the heap, stacks and globals, not mmap'd pages: what
 * only a handle points to (its lease keeper, once a lost lease ended the
 * renewal thread) would read as leaked at exit. Where it runs, these pages
 * are roots too; weak, so nothing is needed where it does not.
 */
extern void __lsan_register_root_region(const void *p, size_t size) __attribute__((weak));
extern void __lsan_unregister_root_region(const void *p, size_t size) __attribute__((weak));

/* @p size rounded up to whole pages. */
static size_t page_round(size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096u;

    return (size + p - 1) / p * p;
}

void *idmint__wiped_alloc(size_t size, int *is_wiped)
{
    void *p;

    pthread_once(&fork_once, fork_install);
    p = mmap(NULL, page_round(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    *is_wiped = 0;
#ifdef MADV_WIPEONFORK
    /* Only where the gate wipes too: on its fallback (a test asked for it)
     * the handle must take the getpid() path as well. */
    if (wipe_word != NULL)
        *is_wiped = madvise(p, page_round(size), MADV_WIPEONFORK) == 0;
#endif
#ifdef IDMINT_MUTANT_FORK_CHILD /* planted for tests/sim: pages said wiped that are not */
    if (*is_wiped)
        (void)madvise(p, page_round(size), MADV_KEEPONFORK);
#endif
    if (__lsan_register_root_region != NULL)
        __lsan_register_root_region(p, page_round(size));
    return p;
}

void idmint__wiped_free(void *p, size_t size)
{
    if (p == NULL)
        return;
    if (__lsan_unregister_root_region != NULL)
        __lsan_unregister_root_region(p, page_round(size));
    munmap(p, page_round(size));
}

int idmint__fork_gate_refuse_wipe(void)
{
    /* Before first use only: handles keep the word they were opened with. */
    if (wipe_word != NULL || atomic_load(&reset_pid) != 0)
        return -1;
    is_wipe_refused = 1;
    return 0;
}

int idmint__fork_gate_is_wiping(void)
{
    pthread_once(&fork_once, fork_install);
    return wipe_word != NULL;
}

const _Atomic uint64_t *idmint__fork_word(void)
{
    pthread_once(&fork_once, fork_install);
    return wipe_word != NULL ? wipe_word : &never_set;
}

uint64_t idmint__fork_id(void)
{
    pthread_once(&fork_once, fork_install);
    if (wipe_word != NULL)
        return wipe_claim();
    /* Never 0, as a pid is not. The generation too: a copy that got the pid
     * of an ancestor that has exited is still told apart if a libc fork()
     * lies between them (between raw clones nothing can tell them apart). */
    return atomic_load(&generation) << 32 | (uint32_t)getpid();
}

void idmint__fork_sync(void)
{
    pthread_once(&fork_once, fork_install);
    if (wipe_word != NULL)
        (void)wipe_claim();
    else
        pid_sync();
}

void idmint__store_gate_enter(void)
{
    idmint__fork_sync();
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
