/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A "fault" store backend for tests: "fault:<inner url>" (for example
 * "fault:sqlite:/tmp/x.db") passes every call to the inner store unless a
 * process-global knob says to fail it. Knobs are atomics, so a test thread
 * may turn them while a renewal or refill thread is calling the store.
 */
#ifndef IDMINT_FAULT_STORE_H
#define IDMINT_FAULT_STORE_H

/* Register the "fault" scheme (once; later calls do nothing). 0 or an IDMINT code. */
int ts_fault_register(void);

/* Clear every knob and the call counter. */
void ts_fault_reset(void);

/* While @p is_down is non-zero, open and every call fail with IDMINT_EUNAVAILABLE, doing nothing.
 */
void ts_fault_set_down(int is_down);

/*
 * The @p n-th store call from now (1 = the next) fails with
 * IDMINT_EUNAVAILABLE before reaching the inner store. 0 disarms.
 * Calls are every method except open and close.
 */
void ts_fault_fail_nth(unsigned n);

/*
 * The @p n-th store call from now is performed on the inner store, then
 * reports IDMINT_EUNAVAILABLE with its outputs untouched: a lost reply.
 * 0 disarms.
 */
void ts_fault_lose_reply_nth(unsigned n);

/* Delay every call by @p ms before passing it on (0: no delay). */
void ts_fault_set_delay_ms(unsigned ms);

/*
 * A planted defect for the checkers (idmint verify --ns, idmint trace):
 * while on, every lease take first forces worker 0 of its region free with
 * E = 0, so the taker gets worker 0 unfenced while its holder still mints:
 * two processes share a worker id and mint duplicates.
 */
void ts_fault_set_share_worker(int is_on);

/* What a decider (ts_fault_set_decider) makes of one call. */
enum { TS_FAULT_PASS = 0, TS_FAULT_FAIL = 1, TS_FAULT_LOSE = 2 };

/*
 * Ask @p decide(ctx, what) about every call (open and close excepted) after
 * the knobs above have passed it: TS_FAULT_PASS passes it on, TS_FAULT_FAIL
 * fails it with IDMINT_EUNAVAILABLE before the inner store sees it,
 * TS_FAULT_LOSE performs it and reports it lost. @p what names the method
 * ("lease_take"). The deterministic simulator's faults (tests/sim). NULL
 * removes it; ts_fault_reset() does too. Not for threads that race it.
 */
void ts_fault_set_decider(int (*decide)(void *ctx, const char *what), void *ctx);

/* Store calls seen since the last ts_fault_reset() (open and close excluded). */
unsigned long ts_fault_calls(void);

#endif /* IDMINT_FAULT_STORE_H */
