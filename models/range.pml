/*
 * SPDX-License-Identifier: Apache-2.0
 * The range protocol of DESIGN.md §5, checked with spin. Clients reserve
 * blocks under (incarnation, request id), lose replies and retry with the
 * same request id and count, issue values from what they got, crash at any
 * point and restart as a new incarnation whose request ids start again at 0.
 * The authority reserves in one atomic step with the request record (durable
 * before the reply). The property: no value is ever issued twice, and no
 * value reaches max_value (nothing wraps).
 *
 * -DBROKEN_REPLAY keys the saved requests by request id alone (forgetting
 * the incarnation); spin must find the duplicate.
 *
 * Every step is one d_step over a single loop, so no intermediate states are
 * stored; see models/README.md for the bounds and why they suffice.
 */
#ifndef MAXV
#define MAXV 8 /* values 1..MAXV-1; MAXV is max_value (exclusive) */
#endif
#ifndef MAXINC
#define MAXINC 2 /* incarnations per client process */
#endif
#define NCLIENTS 2
#define NREQ     2 /* reservations per incarnation */
#define NKEYS    ((NCLIENTS * MAXINC + 1) * NREQ)
#define NONE     0

byte next_value = 1;
byte saved_start[NKEYS];
byte saved_count[NKEYS]; /* 0: no request saved under this key */
byte issued = 0;         /* bit v: value v has been issued */

#ifdef BROKEN_REPLAY
#define KEY req
#else
#define KEY (me * NREQ + req)
#endif

/*
 * A reservation of count c: a new request (pending == 0) or the retry of a
 * lost one, which resends the same request id and count. A new incarnation
 * starts here too. Only when no range is in hand (the double buffer is
 * folded away: the next range is only used once the current one is done).
 */
#define CAN_RESERVE(c) \
    ((me != NONE || incs < MAXINC) && req < NREQ && v == e && (pending == 0 || pending == (c)))

inline begin_reserve()
{
    if
    :: me == NONE ->
        incs++;
        me = _pid * MAXINC + incs
    :: else -> skip
    fi
}

/* The authority's transaction; leaves ok, s (start) and the record. */
inline authority(c)
{
    if
    :: saved_count[KEY] == (c) ->
#ifdef REACH_RETRY_SAVED
        assert(pending == 0); /* a retry gets the range saved for it */
#endif
        s = saved_start[KEY];
        ok = true
    :: saved_count[KEY] != 0 && saved_count[KEY] != (c) ->
        ok = false /* conflict */
    :: saved_count[KEY] == 0 && next_value + (c) <= MAXV ->
        s = next_value;
        next_value = next_value + (c);
        saved_start[KEY] = s;
        saved_count[KEY] = c;
        ok = true
    :: saved_count[KEY] == 0 && next_value + (c) > MAXV ->
        ok = false /* exhausted */
    fi
}

#define RESERVE(c)                                                  \
    :: d_step { /* reply delivered */                               \
        CAN_RESERVE(c) ->                                           \
        begin_reserve();                                            \
        authority(c);                                               \
        if                                                          \
        :: ok -> v = s; e = s + (c)                                 \
        :: else -> skip /* refused: the next request id */          \
        fi;                                                         \
        req++;                                                      \
        pending = 0;                                                \
        s = 0;                                                      \
        ok = false                                                  \
    }                                                               \
    :: d_step { /* reply lost: retry later with the same id */      \
        CAN_RESERVE(c) ->                                           \
        begin_reserve();                                            \
        authority(c);                                               \
        pending = c;                                                \
        s = 0;                                                      \
        ok = false                                                  \
    }

active [NCLIENTS] proctype Client()
{
    byte incs = 0, me = NONE, req = 0, pending = 0, v = 0, e = 0, s = 0;
    bool ok = false;

end:
    do
    RESERVE(1)
    RESERVE(2)
    :: d_step {
        v < e ->
        assert(v > 0 && v < MAXV);
        assert((issued & (1 << v)) == 0);
        issued = issued | (1 << v);
#ifdef REACH_FULL
        assert(issued != (1 << MAXV) - 2); /* every value issued */
#endif
        v++
    }
    :: d_step { /* crash (kill -9) at any point: the rest of the range is abandoned */
        me != NONE ->
        me = NONE;
        req = 0;
        pending = 0;
        v = 0;
        e = 0
    }
    od
}

#if MAXV > 8
#error "issued is one byte: MAXV <= 8"
#endif
