/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The only reader of the system clocks. Time is the wall clock anchored once
 * and advanced by CLOCK_MONOTONIC; the anchor only moves forward, so no
 * reading ever goes back whatever NTP or an operator does to the wall clock.
 *
 * A clock_gettime costs about as much as a whole mint, so on x86-64 with an
 * invariant TSC a reading inside the same millisecond is served from a cache
 * whose validity is checked with rdtsc. The TSC is never trusted for the time
 * itself, only to say "the millisecond we last read has not ended yet".
 */
#include "internal.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define NS_PER_MS        INT64_C(1000000)
#define NS_PER_S         INT64_C(1000000000)
/* Calibrate the TSC rate over at least this long before trusting it. */
#define TSC_CALIBRATE_NS (50 * NS_PER_MS)

static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;
static int tsc_usable;                    /* invariant TSC advertised by the CPU */
static uint64_t tsc_base;                 /* TSC at calibration start */
static int64_t tsc_base_mono_ns;          /* CLOCK_MONOTONIC at calibration start */
static _Atomic uint64_t tsc_ticks_per_ms; /* 0 until calibrated */

static int64_t timespec_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * NS_PER_S + (int64_t)ts->tv_nsec;
}

static int64_t sys_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_ns(&ts);
}

static int64_t sys_wall_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return timespec_ns(&ts);
}

static uint64_t read_tsc(void)
{
#if HAVE_TSC
    return (uint64_t)__rdtsc();
#else
    return 0;
#endif
}

/* Only "constant_tsc" plus "nonstop_tsc" make the TSC a steady tick across sleep states. */
static void tsc_probe(void)
{
#if HAVE_TSC
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int has_constant = 0, has_nonstop = 0;

    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        has_constant = strstr(line, " constant_tsc") != NULL;
        has_nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    if (has_constant && has_nonstop) {
        tsc_base_mono_ns = sys_mono_ns();
        tsc_base = read_tsc();
        tsc_usable = 1;
    }
#endif
}

void idmint__clock_init(struct clock *c, int64_t (*wall_ms)(void *), uint64_t (*mono_ns)(void *),
                        void *ctx)
{
    memset(c, 0, sizeof(*c));
    c->wall_ms = wall_ms;
    c->mono_ns = mono_ns;
    c->ctx = ctx;
    if (wall_ms == NULL && mono_ns == NULL) {
        pthread_once(&tsc_once, tsc_probe);
        c->use_tsc = tsc_usable;
    }
    atomic_store(&c->offset_ns, INT64_MIN);
    atomic_store(&c->cached_ms, INT64_MIN);
}

static void atomic_max_i64(_Atomic int64_t *p, int64_t v)
{
    int64_t old = atomic_load_explicit(p, memory_order_relaxed);

    while (old < v && !atomic_compare_exchange_weak_explicit(p, &old, v, memory_order_release,
                                                             memory_order_relaxed))
        ;
}

static void atomic_max_u64(_Atomic uint64_t *p, uint64_t v)
{
    uint64_t old = atomic_load_explicit(p, memory_order_relaxed);

    while (old < v && !atomic_compare_exchange_weak_explicit(p, &old, v, memory_order_release,
                                                             memory_order_relaxed))
        ;
}

/* Ticks per ms once the calibration window has passed; 0 before. */
static uint64_t tsc_rate(uint64_t tsc_now, int64_t mono_now_ns)
{
    uint64_t rate = atomic_load_explicit(&tsc_ticks_per_ms, memory_order_relaxed);
    int64_t elapsed_ns = mono_now_ns - tsc_base_mono_ns;

    if (rate != 0 || elapsed_ns < TSC_CALIBRATE_NS || tsc_now <= tsc_base)
        return rate;
    rate = (uint64_t)((double)(tsc_now - tsc_base) * (double)NS_PER_MS / (double)elapsed_ns);
    atomic_store_explicit(&tsc_ticks_per_ms, rate, memory_order_relaxed);
    return rate;
}

int64_t idmint__clock_read_ms(struct clock *c)
{
    uint64_t tsc = c->use_tsc ? read_tsc() : 0;
    int64_t mono_ns, wall_ns, now_ns, now_ms, offset;

    /* Wall first, monotonic second: a preemption between the two reads then
     * makes the offset too small (corrected by the next reading), never too
     * large, which would run this clock ahead for the life of the process. */
    if (c->wall_ms != NULL)
        wall_ns = c->wall_ms(c->ctx) * NS_PER_MS;
    else
        wall_ns = sys_wall_ns();
    if (c->mono_ns != NULL)
        mono_ns = (int64_t)c->mono_ns(c->ctx);
    else
        mono_ns = sys_mono_ns();

    /* Re-anchor only forward: a wall clock stepped back is ignored, one
     * stepped forward is followed, so readings never decrease. */
    atomic_max_i64(&c->offset_ns, wall_ns - mono_ns);
    offset = atomic_load_explicit(&c->offset_ns, memory_order_acquire);
    now_ns = mono_ns + offset;
    now_ms = now_ns / NS_PER_MS;

    atomic_max_i64(&c->cached_ms, now_ms);
    now_ms = atomic_load_explicit(&c->cached_ms, memory_order_acquire);
    if (c->use_tsc) {
        uint64_t rate = tsc_rate(tsc, mono_ns);

        if (rate != 0) {
            /* The tick was read before the clock, so the window is a little
             * short, never long; 1/64 less again covers calibration error. */
            int64_t left_ns = (now_ms + 1) * NS_PER_MS - now_ns;
            uint64_t left_ticks = (uint64_t)left_ns * rate / (uint64_t)NS_PER_MS;

            atomic_max_u64(&c->valid_until_tsc, tsc + left_ticks - left_ticks / 64);
        }
    }
    return now_ms;
}

/* The TSC-checked cache, then the clocks themselves. */
static int64_t clock_tsc_ms(struct clock *c)
{
    if (c->use_tsc) {
        uint64_t valid_until = atomic_load_explicit(&c->valid_until_tsc, memory_order_acquire);

        if (read_tsc() < valid_until)
            return atomic_load_explicit(&c->cached_ms, memory_order_relaxed);
    }
    return idmint__clock_read_ms(c);
}

/* ==== the process clock and its ticker ==== */

#define TICK_NS         NS_PER_MS
#define TLS_CHECK_EVERY 16
/*
 * The ticker wakes a thousand times a second, and on a virtual machine a
 * wakeup costs microseconds of kernel time: five hundred processes minting
 * every 10 ms each kept a ticker awake and spent both cores of a test machine
 * in clock_nanosleep. It pays only where the clock is read in (nearly) every
 * millisecond: it starts when TICKER_MIN_BUSY milliseconds of a window of
 * TICKER_WINDOW saw a reading, and parks when fewer than TICKER_MIN_BUSY of
 * a window of TICKER_WINDOW ticks saw one. A sparser reader takes the TSC path, which
 * costs it one clock read per millisecond it reads in.
 */
#define TICKER_WINDOW   64
#define TICKER_MIN_BUSY 48

static struct clock system_clock;
static pthread_once_t system_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ticker_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ticker_cv;
static int ticker_has_thread; /* guarded by ticker_mu */
static int ticker_is_wanted;  /* guarded by ticker_mu */
static _Thread_local __attribute__((tls_model("initial-exec"))) unsigned tls_countdown;

static void *ticker_main(void *arg)
{
    struct clock *c = arg;
    unsigned ticks = 0, busy_ticks = 0;
    struct timespec next;

    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        /* Wake just after each millisecond of the monotonic clock. */
        int64_t ns = timespec_ns(&next);

        ns = (ns / TICK_NS + 1) * TICK_NS + TICK_NS / 50;
        next.tv_sec = (time_t)(ns / NS_PER_S);
        next.tv_nsec = (long)(ns % NS_PER_S);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
            ;
        (void)idmint__clock_read_ms(c);
        busy_ticks += atomic_exchange_explicit(&c->has_demand, 0, memory_order_relaxed) != 0;
        if (++ticks < TICKER_WINDOW)
            continue;
        if (busy_ticks >= TICKER_MIN_BUSY) {
            ticks = busy_ticks = 0;
            continue;
        }
        /* Too few readings to pay for the wakeups: stop until the readers
         * are dense again (idmint__clock_now_ms counts them meanwhile). */
        pthread_mutex_lock(&ticker_mu);
        atomic_store(&c->is_ticking, 0);
        atomic_store_explicit(&c->window_start_ms, 0, memory_order_relaxed);
        ticker_is_wanted = 0;
        while (!ticker_is_wanted)
            pthread_cond_wait(&ticker_cv, &ticker_mu);
        pthread_mutex_unlock(&ticker_mu);
        ticks = busy_ticks = 0;
        (void)idmint__clock_read_ms(c);
        atomic_store(&c->is_ticking, 1);
        clock_gettime(CLOCK_MONOTONIC, &next);
    }
    return NULL;
}

static void ticker_start(struct clock *c)
{
    pthread_mutex_lock(&ticker_mu);
    if (!ticker_has_thread) {
        pthread_t t;
        pthread_attr_t attr;

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* Without the thread every reading takes the TSC path: slower, still right. */
        if (pthread_create(&t, &attr, ticker_main, c) == 0) {
            ticker_has_thread = 1;
            (void)idmint__clock_read_ms(c);
            atomic_store(&c->is_ticking, 1);
        }
        pthread_attr_destroy(&attr);
    } else if (!ticker_is_wanted) {
        ticker_is_wanted = 1;
        pthread_cond_signal(&ticker_cv);
    }
    pthread_mutex_unlock(&ticker_mu);
}

static void system_init(void)
{
    idmint__cond_init_monotonic(&ticker_cv);
    idmint__clock_init(&system_clock, NULL, NULL, NULL);
    /* The ticker's cache is only trusted where the TSC can audit it. */
    system_clock.use_ticker = system_clock.use_tsc;
}

struct clock *idmint__clock_system(void)
{
    pthread_once(&system_once, system_init);
    return &system_clock;
}

void idmint__clock_after_fork(void)
{
    /* Only the forking thread survives: the ticker is gone, its mutex may
     * have been held, and its condition variable may record it as a waiter
     * that no signal here can ever reach (glibc's signal would hand the new
     * ticker's wakeup to it). Start over; the next reading restarts the
     * ticker. */
    pthread_mutex_init(&ticker_mu, NULL);
    idmint__cond_init_monotonic(&ticker_cv);
    ticker_has_thread = 0;
    ticker_is_wanted = 0;
    atomic_store(&system_clock.is_ticking, 0);
    atomic_store(&system_clock.window_reads, 0);
}

/*
 * Count the milliseconds that saw a reading in windows of TICKER_WINDOW ms,
 * and start the ticker once one window has TICKER_MIN_BUSY of them (the
 * parking rule's own bound, so a reader between the two does not flap; a
 * few preempted milliseconds do not reset the count). Within one millisecond
 * this is a single load, so concurrent readers share the line read-only; a
 * race between two threads crossing a millisecond at most miscounts one.
 */
static void note_untickered_reading(struct clock *c, int64_t now_ms)
{
    int64_t last = atomic_load_explicit(&c->last_read_ms, memory_order_relaxed);
    int64_t window_start;

    if (now_ms <= last ||
        !atomic_compare_exchange_strong_explicit(&c->last_read_ms, &last, now_ms,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    window_start = atomic_load_explicit(&c->window_start_ms, memory_order_relaxed);
    if (now_ms - window_start >= TICKER_WINDOW) {
        atomic_store_explicit(&c->window_start_ms, now_ms, memory_order_relaxed);
        atomic_store_explicit(&c->window_reads, 1, memory_order_relaxed);
    } else if (atomic_fetch_add_explicit(&c->window_reads, 1, memory_order_relaxed) + 1 >=
               TICKER_MIN_BUSY) {
        atomic_store_explicit(&c->window_reads, 0, memory_order_relaxed);
        ticker_start(c);
    }
}

int64_t idmint__clock_now_ms(struct clock *c)
{
    if (c->use_ticker) {
        if (__builtin_expect(atomic_load_explicit(&c->is_ticking, memory_order_relaxed), 1)) {
            /* The ticker may be late (a busy machine): every so often a
             * reading checks the TSC, which also refreshes the cache. */
            if (__builtin_expect(tls_countdown-- == 0, 0)) {
                tls_countdown = TLS_CHECK_EVERY - 1;
                return clock_tsc_ms(c);
            }
            if (!atomic_load_explicit(&c->has_demand, memory_order_relaxed))
                atomic_store_explicit(&c->has_demand, 1, memory_order_relaxed);
            return atomic_load_explicit(&c->cached_ms, memory_order_relaxed);
        } else {
            int64_t now_ms = clock_tsc_ms(c);

            note_untickered_reading(c, now_ms);
            return now_ms;
        }
    }
    return clock_tsc_ms(c);
}

/* The simulator's driver (internal.h, "Driven mode"); NULL in every program. */
static const struct idmint__driver *driver;

void idmint__driven_start(const struct idmint__driver *d)
{
    driver = d;
}

int idmint__is_driven(void)
{
    return driver != NULL;
}

void idmint__sleep_us(uint64_t us)
{
    struct timespec ts = {.tv_sec = (time_t)(us / 1000000u),
                          .tv_nsec = (long)(us % 1000000u) * 1000L};

    if (driver != NULL) {
        driver->sleep_us(driver->ctx, us);
        return;
    }
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void idmint__yield(void)
{
    if (driver != NULL)
        driver->sleep_us(driver->ctx, 100); /* the driver's world waits a little */
    else
        sched_yield();
}

void idmint__sleep_ms(uint32_t ms)
{
    idmint__sleep_us((uint64_t)ms * 1000u);
}

void idmint__cond_init_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
}

struct timespec idmint__monotonic_after_ms(uint64_t ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)(ms / 1000u);
    ts.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

uint64_t idmint__deadline_now_ms(void)
{
    return idmint__deadline_now_us() / 1000u;
}

uint64_t idmint__deadline_now_us(void)
{
    if (driver != NULL)
        return driver->now_us(driver->ctx);
    return (uint64_t)(sys_mono_ns() / 1000);
}
