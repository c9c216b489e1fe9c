/*
 * SPDX-License-Identifier: Apache-2.0
 * Restores of a range namespace, checked with spin (src/history.c,
 * src/range.c refill_main, src/authority_restore.c idmint_authority_fence,
 * src/store/store_sqlite.c sq_history, sqlite_backup, sqlite_fence).
 *
 * The store keeps next value, a history (id, grant counter) and a backup
 * mark. Every granting reservation adds 1 to the counter in its own
 * transaction and replies (id, counter); a replayed reservation (a retry
 * answered from its saved record) replies with no history. Two holders
 * (range supplies) reserve blocks, double-buffered, hand out values one at
 * a time, lose one reply per run and retry it, crash, and restart as new
 * incarnations. A holder remembers the last (id, counter) it saw and stops
 * at once and for good, throwing away what it holds, when a reply's id
 * differs or its counter is <= the one it saw, or when the store refuses
 * with IDMINT_ERESTORED. A copy of the whole store is taken at any moment,
 * and put back under the running holders at any later moment. The operator
 * then fences it: next value above N = the highest value issued so far (or
 * the store's own next value, if that is higher: a fence never moves back),
 * a new history id, the mark cleared. Fresh holders may start after the
 * restore. The property: no value is ever issued twice, over the whole
 * run; and no holder issues a value after a reply showed it the counter go
 * backwards or the id change.
 *
 * The real model: the copy is marked (idmint authority backup), and the
 * operator fences once every holder of the lost history has stopped (each
 * stops at its first contact with the marked copy, or is killed), as
 * tests/reliability/test_restore_sqlite.sh does. There the mark does all
 * the work: no reply ever shows a holder the history going backwards.
 *
 * Variants (tests/model/check_models.sh; models/README.md has the trails):
 * -DPLAIN_COPY        the copy is not marked (a cp of the file): the
 *                     restored store grants at once; fresh holders start
 *                     only after the fence. The code as it is duplicates.
 * -DALL_WROTE         the copy is put back only after every live holder has
 *                     seen a counter above the copy's (the drill's timing).
 * -DSTORE_CHECK       a proposed fix, not the code: the holder sends the
 *                     (id, counter) it saw, and the store refuses, rolling
 *                     back, a grant whose reply the holder would refuse.
 *                     Today the grant is committed first (raising the
 *                     counter, and saving a record that a retry gets back
 *                     with no history), and only then refused by the holder.
 * -DPLAIN_COPY -DALL_WROTE -DSTORE_CHECK verifies. Its broken twins, which
 * must fail the uniqueness assertion:
 * -DNO_HISTORY_CHECK  no history check, in the holder or the store;
 * -DWEAK_CHECK        the check refuses counter < seen instead of <= seen;
 * -DFRESH_EARLY       fresh holders start before the fence.
 * (NO_HISTORY_CHECK and WEAK_CHECK also turn off the assertion of property
 * (1), which they break by construction: what counts is whether they
 * duplicate. On the marked copy both verify: the check is not what
 * protects a marked copy.) Broken twins of the real model:
 * -DFENCE_NO_ABOVE    the fence leaves next value where the copy had it;
 * -DFENCE_EARLY       the fence runs while a holder of the lost history
 *                     still runs, with N = the highest value issued so far.
 *
 * -DCHAIN            the code (src/history.c, src/witness.c,
 *                     authority_restore.c): every grant also draws a tip,
 *                     logged with its counter; a holder proves, under this
 *                     host's witness lock, that the store's log still holds
 *                     the pair it saw and its grant's own pair before it
 *                     hands out anything of the grant, and raises the
 *                     witness to it; it checks its pair again at any time
 *                     (every history_check_ms), and stops when the log has
 *                     lost it; a fresh holder starts, at any time, only if
 *                     the log holds the witness's pair (or the store was
 *                     fenced over it). Here a restore reuses counter values
 *                     with tips of a new epoch, so the counter alone cannot
 *                     tell the restored log from the real one.
 *                     -DCHAIN and -DCHAIN -DPLAIN_COPY (an unmarked restore
 *                     under live holders, fresh holders starting at any
 *                     moment) verify. Broken twins, which must duplicate:
 * -DNO_TIP            the check compares counters only (the code before);
 * -DNO_WITNESS        no host evidence: a fresh holder is a brand-new host's
 *                     (what docs/operations.md says it cannot detect);
 * -DLATE_WITNESS      the holder raises the witness after it starts using
 *                     its grant, outside the lock.
 *
 * Every step is one d_step over a single loop, and dead state is cleared,
 * as in range.pml.
 */
#ifndef MAXV
#define MAXV 12 /* values 1..MAXV-1; MAXV is max_value (exclusive) */
#endif
#ifndef MAXINC
#define MAXINC 2 /* incarnations per holder process */
#endif
#ifndef BLOCK
#define BLOCK 2 /* values per reservation */
#endif
#ifndef MAXLOST
#define MAXLOST 1 /* lost reservation replies per run */
#endif
#define NH      2
#define NONE    0

/* The store. The history id is 1 until the fence makes it 2. */
byte nv = 1;         /* next value */
byte sq = 0;         /* grant counter */
byte hid = 1;        /* history id */
bool mark = false;   /* a marked backup: refuses every grant */
byte rec_own = NONE; /* the saved record of the one lost reply: whose, */
byte rec_s = 0;      /* and the start of the range it saved, */
byte rec_sq = 0;     /* and the counter of the grant that made it */

/* The copy: next value, counter and record; its history id is 1. */
byte b_nv = 0, b_sq = 0, b_rec_own = NONE, b_rec_s = 0, b_rec_sq = 0;
bool taken = false, restored = false, fenced = false;

int issued = 0; /* bit v: value v has been issued */

#ifdef CHAIN
/* The log's tips, as epochs: counters up to rp carry tips of epoch 1 (the
 * history before the restore); later ones, tips of epoch ep. */
byte ep = 1;
byte rp = 255; /* 255: no restore yet */
/* This host's witness: the newest pair any holder of the host proved. */
byte w_hid = 0, w_sq = 0, w_ep = 0;
byte h_sep[NH];                         /* the epoch of the pair each holder saw */
bool h_rpend[NH];                       /* a grant's reply not yet proven */
byte h_rs[NH], h_rsq[NH], h_rep[NH];    /* its start, counter and epoch, */
byte h_rhid[NH];                        /* and history id */
#define sep  h_sep[_pid]
#define rpend h_rpend[_pid]
#define EP_AT(sq_) ((sq_) <= rp -> 1 : ep)
#ifdef NO_TIP
#define IN_LOG(s, e) ((s) <= sq)
#else
#define IN_LOG(s, e) ((s) <= sq && (e) == EP_AT(s))
#endif
/* idmint__history_verify, for a holder and for the witness. */
#define HOLDER_OK(h, s, e) (!mark && ((h) == 0 || ((h) == hid && IN_LOG(s, e))))
#define WITNESS_OK (!mark && (w_hid == 0 || (w_hid != hid && w_hid == 1) || \
                              (w_hid == hid && IN_LOG(w_sq, w_ep))))
#ifdef NO_WITNESS
#define START_OK (!mark)
#else
#define START_OK WITNESS_OK
#endif
/* Raise the witness to (h, s, e) when newer (a fenced-over id counts as older). */
inline raise_witness(wh, ws, we)
{
    if
    :: wh != w_hid || ws > w_sq -> w_hid = wh; w_sq = ws; w_ep = we
    :: else -> skip
    fi
}
#endif
byte top = 0;   /* the highest value issued: what the operator reads downstream */
byte lost = 0;

/*
 * Each holder's incarnation (NONE: none running), whether it is of the lost
 * history (started before the restore), the history it saw (shid 0: none
 * yet), its lost reply, and whether a reply showed it the history going
 * backwards (property 1). Global because the operator's steps and tidy()
 * read them; Holder is the first proctype, so its _pids are 0..NH-1.
 */
byte h_me[NH];
bool h_lost[NH];
byte h_shid[NH];
byte h_sseq[NH];
bool h_pend[NH];
bool h_saw[NH];
#define me   h_me[_pid]
#define shid h_shid[_pid]
#define sseq h_sseq[_pid]
#define pend h_pend[_pid]

#ifdef PLAIN_COPY
#define MARK_COPY false
#if defined(FRESH_EARLY) || defined(CHAIN)
#define MAY_START true
#else
#define MAY_START (!restored || fenced)
#endif
#else
#define MARK_COPY true
#define MAY_START true /* a fresh holder on the marked copy is refused */
#endif

/* The holder's check (idmint__history_follow) on a reply (rh, rs). */
#ifdef WEAK_CHECK
#define BEHIND(rh, rs) (shid != 0 && ((rh) != shid || (rs) < sseq))
#else
#define BEHIND(rh, rs) (shid != 0 && ((rh) != shid || (rs) <= sseq))
#endif
#define TRULY_BEHIND(rh, rs) (shid != 0 && ((rh) != shid || (rs) <= sseq))
#ifdef NO_HISTORY_CHECK
#define CHECK_STOPS(rh, rs) false
#else
#define CHECK_STOPS(rh, rs) BEHIND(rh, rs)
#endif
/* STORE_CHECK: the store refuses a grant whose reply (hid, sq + 1) the holder would refuse. */
#if defined(STORE_CHECK) && !defined(NO_HISTORY_CHECK)
#define STORE_REFUSES CHECK_STOPS(hid, sq + 1)
#else
#define STORE_REFUSES false
#endif

#define REPLAY (pend && rec_own == me) /* a retry whose record the store has */
/* The store can answer: a replay, a refusal, or a grant within max_value.
 * An exhausted store refuses; the holder then waits, so no step. */
#define STORE_ANSWERS (REPLAY || mark || STORE_REFUSES || nv + BLOCK <= MAXV)
#ifdef CHAIN
#define CAN_START (me == NONE && incs < MAXINC && MAY_START && START_OK)
#define CAN_ASK   (me != NONE && x == y && !rpend)
#else
#define CAN_START (me == NONE && incs < MAXINC && MAY_START)
#define CAN_ASK   (me != NONE && x == y) /* no prefetched range (or a retry) */
#endif

/* Records only matter to the retry of the holder that lost the reply. */
#define REC_LIVE(o) ((o) != NONE && ((h_me[0] == (o) && h_pend[0]) || (h_me[1] == (o) && h_pend[1])))
inline tidy()
{
    if
    :: !REC_LIVE(rec_own) -> rec_own = NONE; rec_s = 0; rec_sq = 0
    :: else -> skip
    fi;
    if
    :: !REC_LIVE(b_rec_own) -> b_rec_own = NONE; b_rec_s = 0; b_rec_sq = 0
    :: else -> skip
    fi
}

inline begin()
{
    if
    :: me == NONE ->
        incs++;
        me = _pid * MAXINC + incs;
        h_lost[_pid] = !restored
    :: else -> skip
    fi
}

/* Stop for good, or crash: nothing held is ever issued. */
inline forget()
{
    me = NONE;
    h_lost[_pid] = false;
    shid = 0;
    sseq = 0;
    pend = false;
    h_saw[_pid] = false;
#ifdef CHAIN
    sep = 0;
    rpend = false;
    h_rs[_pid] = 0;
    h_rsq[_pid] = 0;
    h_rep[_pid] = 0;
    h_rhid[_pid] = 0;
#endif
    v = 0;
    e = 0;
    x = 0;
    y = 0
}

inline install(start)
{
    if
    :: v == e -> v = start; e = start + BLOCK
    :: else -> x = start; y = start + BLOCK
    fi;
    pend = false
}

/*
 * Probes; each must fail an assertion, which shows the bounds reach the
 * situation named. check_models.sh runs the first two; the other two are
 * for runs by hand (a twin shows them: FENCE_NO_ABOVE, NO_HISTORY_CHECK).
 * REACH_DISCARD: the marked copy refuses a holder that still holds values.
 * REACH_REPLAY: the restored store answers a retry from its saved record.
 * REACH_FENCE_LIFT: the fence moves next value up.
 * REACH_BEHIND: a holder stops because the history went backwards.
 */
#ifdef REACH_DISCARD
#define PROBE_REFUSED assert(!(mark && v < e))
#else
#define PROBE_REFUSED skip
#endif
#ifdef REACH_REPLAY
#define PROBE_REPLAY assert(!restored)
#else
#define PROBE_REPLAY skip
#endif
#ifdef REACH_BEHIND
#define PROBE_BEHIND assert(false)
#else
#define PROBE_BEHIND skip
#endif

/* One reservation, in the store's transaction, and its reply delivered. */
#define RESERVE_DELIVERED                                                  \
    :: d_step {                                                            \
        (CAN_START || CAN_ASK) && STORE_ANSWERS ->                         \
        begin();                                                           \
        if                                                                 \
        :: REPLAY -> /* answered from the record, with no history */       \
            PROBE_REPLAY;                                                  \
            printf("H%d.%d: retry answered from the record: [%d,%d)\n", _pid, me, rec_s, rec_s + BLOCK); \
            install(rec_s)                                                 \
        :: !REPLAY && (mark || STORE_REFUSES) -> /* IDMINT_ERESTORED */    \
            PROBE_REFUSED;                                                 \
            if                                                             \
            :: mark -> printf("H%d.%d: refused: a marked copy; stops\n", _pid, me) \
            :: else ->                                                     \
                PROBE_BEHIND;                                              \
                printf("H%d.%d: refused at (%d,%d), saw (%d,%d); stops\n", _pid, me, hid, sq, shid, sseq) \
            fi;                                                            \
            forget()                                                       \
        :: else -> /* a grant: counter + 1, committed, then the check */   \
            sq++;                                                          \
            s = nv;                                                        \
            nv = nv + BLOCK;                                               \
            if                                                             \
            :: TRULY_BEHIND(hid, sq) -> h_saw[_pid] = true                 \
            :: else -> skip                                                \
            fi;                                                            \
            if                                                             \
            :: CHECK_STOPS(hid, sq) ->                                     \
                PROBE_BEHIND;                                              \
                printf("H%d.%d: granted [%d,%d) at (%d,%d), saw (%d,%d): stops\n", _pid, me, s, s + BLOCK, hid, sq, shid, sseq); \
                forget()                                                   \
            :: else ->                                                     \
                printf("H%d.%d: granted [%d,%d) at (%d,%d)\n", _pid, me, s, s + BLOCK, hid, sq); \
                shid = hid;                                                \
                sseq = sq;                                                 \
                install(s)                                                 \
            fi                                                             \
        fi;                                                                \
        s = 0;                                                             \
        tidy()                                                             \
    }

/* A new grant whose reply is lost: committed with its record; the holder
 * retries the same request later (a refusal or a replay that is lost
 * changes nothing, and is the same as a later retry). */
#define RESERVE_LOST                                                       \
    :: d_step {                                                            \
        CAN_ASK && lost < MAXLOST && !REPLAY && !mark && !STORE_REFUSES && \
        nv + BLOCK <= MAXV ->                                              \
        lost++;                                                            \
        sq++;                                                              \
        printf("H%d.%d: granted [%d,%d) at (%d,%d), reply lost\n", _pid, me, nv, nv + BLOCK, hid, sq); \
        rec_own = me;                                                      \
        rec_s = nv;                                                        \
        rec_sq = sq;                                                       \
        nv = nv + BLOCK;                                                   \
        pend = true;                                                       \
        tidy()                                                             \
    }

#ifdef CHAIN
/*
 * The code's steps (refill_main, idmint__authority_history_adopt and
 * _check). A reservation commits and leaves its reply to be proven; the
 * proof may come after a restore. A replay carries the pair of the grant
 * that made its record (the store keeps it with the record): the holder
 * proves it, and the pair it saw, before it installs the saved range, whose
 * record may be the restored store's. The record's pair is in the log by
 * construction here (the record and its grant are one transaction, and a
 * copy holds both or neither), so the epoch is the log's own.
 */
#define REPLAY_OK (HOLDER_OK(shid, sseq, sep) && IN_LOG(rec_sq, EP_AT(rec_sq)) && W_OK)
#define RESERVE_CHAIN                                                      \
    :: d_step {                                                            \
        (CAN_START || CAN_ASK) && STORE_ANSWERS ->                         \
        begin();                                                           \
        if                                                                 \
        :: REPLAY && REPLAY_OK ->                                          \
            W_RAISE(hid, rec_sq, EP_AT(rec_sq));                           \
            if                                                             \
            :: rec_sq > sseq -> shid = hid; sseq = rec_sq; sep = EP_AT(rec_sq) \
            :: else -> skip                                                \
            fi;                                                            \
            install(rec_s)                                                 \
        :: REPLAY && !REPLAY_OK -> forget()                                \
        :: !REPLAY && mark ->                                              \
            printf("H%d.%d: refused: a marked copy; stops\n", _pid, me);   \
            forget()                                                       \
        :: else ->                                                         \
            sq++;                                                          \
            rpend = true;                                                  \
            h_rs[_pid] = nv;                                               \
            h_rsq[_pid] = sq;                                              \
            h_rep[_pid] = ep;                                              \
            h_rhid[_pid] = hid;                                            \
            printf("H%d.%d: granted [%d,%d) at (%d,%d,e%d)\n", _pid, me, nv, nv + BLOCK, hid, sq, ep); \
            nv = nv + BLOCK                                                \
        fi;                                                                \
        tidy()                                                             \
    }
#ifdef NO_WITNESS
#define W_OK true
#define W_RAISE(h, s_, e_) skip
#else
#define W_OK WITNESS_OK
#define W_RAISE(h, s_, e_) raise_witness(h, s_, e_)
#endif
#ifdef LATE_WITNESS
#define ADOPT_RAISE(h, s_, e_) skip
#else
#define ADOPT_RAISE(h, s_, e_) W_RAISE(h, s_, e_)
#endif
/* Prove the pair seen and the grant's, under the witness lock; raise; use the grant. */
#define ADOPT_CHAIN                                                        \
    :: d_step {                                                            \
        rpend ->                                                           \
        if                                                                 \
        :: HOLDER_OK(shid, sseq, sep) &&                                   \
           HOLDER_OK(h_rhid[_pid], h_rsq[_pid], h_rep[_pid]) && W_OK ->    \
            ADOPT_RAISE(h_rhid[_pid], h_rsq[_pid], h_rep[_pid]);           \
            shid = h_rhid[_pid];                                           \
            sseq = h_rsq[_pid];                                            \
            sep = h_rep[_pid];                                             \
            install(h_rs[_pid]);                                           \
            rpend = false;                                                 \
            h_rs[_pid] = 0; h_rsq[_pid] = 0; h_rep[_pid] = 0; h_rhid[_pid] = 0 \
        :: else ->                                                         \
            printf("H%d.%d: the store lost its history: stops\n", _pid, me); \
            forget()                                                       \
        fi;                                                                \
        tidy()                                                             \
    }
/* The periodic check: prove the pair seen, then take the head as seen. */
#define CHECK_CHAIN                                                        \
    :: d_step {                                                            \
        me != NONE && !rpend && shid != 0 ->                               \
        if                                                                 \
        :: HOLDER_OK(shid, sseq, sep) && W_OK ->                           \
            shid = hid;                                                    \
            sseq = sq;                                                     \
            sep = EP_AT(sq);                                               \
            W_RAISE(hid, sq, EP_AT(sq))                                    \
        :: else ->                                                         \
            printf("H%d.%d: the check finds the history lost: stops\n", _pid, me); \
            forget()                                                       \
        fi;                                                                \
        tidy()                                                             \
    }
#endif

#if defined(NO_HISTORY_CHECK) || defined(WEAK_CHECK)
#define PROPERTY1 skip
#else
#define PROPERTY1 assert(!h_saw[_pid])
#endif

active [NH] proctype Holder()
{
    byte incs = 0, v = 0, e = 0, x = 0, y = 0, s = 0;

end:
    do
#ifdef CHAIN
    RESERVE_CHAIN
    ADOPT_CHAIN
    CHECK_CHAIN
#else
    RESERVE_DELIVERED
#endif
    RESERVE_LOST
    :: d_step { /* hand out one value */
        v < e ->
        assert(v > 0 && v < MAXV);
        assert((issued & (1 << v)) == 0);
        PROPERTY1;
        printf("H%d.%d: issues %d\n", _pid, me, v);
        issued = issued | (1 << v);
        if
        :: v > top -> top = v
        :: else -> skip
        fi;
        v++;
        if
        :: v == e -> v = x; e = y; x = 0; y = 0
        :: else -> skip
        fi
    }
    :: d_step { /* crash (kill -9) at any point */
        me != NONE ->
        printf("H%d.%d: crashes\n", _pid, me);
        forget();
        tidy()
    }
    od
}

#ifdef FENCE_EARLY
#define FENCE_WHEN true
#else
#define FENCE_WHEN (!h_lost[0] && !h_lost[1]) /* every lost-history holder stopped */
#endif
#ifdef ALL_WROTE /* every live holder has seen a counter above the copy's */
#define RESTORE_WHEN ((h_me[0] == NONE || h_sseq[0] > b_sq) && (h_me[1] == NONE || h_sseq[1] > b_sq))
#else
#define RESTORE_WHEN true
#endif
#ifdef REACH_FENCE_LIFT
#define PROBE_FENCE assert(top + 1 <= nv)
#else
#define PROBE_FENCE skip
#endif

active proctype Operator()
{
end:
    do
    :: d_step { /* the copy: the whole state, in one read transaction */
        !taken ->
        b_nv = nv;
        b_sq = sq;
        b_rec_own = rec_own;
        b_rec_s = rec_s;
        b_rec_sq = rec_sq;
        printf("copy taken: next %d, counter %d\n", nv, sq);
        taken = true
    }
    :: d_step { /* put back under the running holders */
        taken && !restored && RESTORE_WHEN ->
        nv = b_nv;
        sq = b_sq;
        hid = 1;
        rec_own = b_rec_own;
        rec_s = b_rec_s;
        rec_sq = b_rec_sq;
        mark = MARK_COPY;
#ifdef CHAIN
        rp = b_sq; /* the log's entries after the copy are gone; new ones get new tips */
        ep = 2;
#endif
        printf("copy put back: next %d, counter %d, marked %d\n", nv, sq, mark);
        b_nv = 0;
        b_sq = 0;
        b_rec_own = NONE;
        b_rec_s = 0;
        b_rec_sq = 0;
        restored = true;
        tidy()
    }
    :: d_step { /* the fence, with N = the highest value issued */
        restored && !fenced && FENCE_WHEN ->
        PROBE_FENCE;
#ifndef FENCE_NO_ABOVE
        if
        :: top + 1 > nv -> nv = top + 1
        :: else -> skip
        fi;
#endif
        hid = 2;
        sq++;
        mark = false;
        printf("fence: N = %d, next %d, history 2\n", top, nv);
        fenced = true
    }
    od
}

#if MAXV > 30
#error "issued is one int: MAXV <= 30"
#endif
