/*
 * SPDX-License-Identifier: Apache-2.0
 * The worker-lease protocol of DESIGN.md §4 for one worker id, checked with
 * spin. Two holder processes, each living as up to MAXINC incarnations, take,
 * mint, renew, release and crash at any point; the authority may lose any
 * take or renewal reply, a delayed renewal may arrive long after it was sent,
 * and an operator may force the id away once. Clocks are arbitrary: every E
 * asked for and every time value minted is chosen freely, and any taker may
 * believe the E it finds has passed, so safety cannot rest on them. The
 * property: no time value is ever minted by two incarnations.
 *
 * -DBROKEN_FENCE builds a variant whose taker ignores the E it found; spin
 * must find the duplicate (tests/model/check_models.sh expects that).
 *
 * Every step is one d_step over a single loop, so no intermediate or
 * bookkeeping states are stored; see models/README.md for why each
 * abstraction keeps every behaviour that matters.
 */
#ifndef MAXT
#define MAXT 6 /* time values 0..MAXT-1 (0 is never minted); E is 0..MAXT */
#endif
#ifndef MAXINC
#define MAXINC 3 /* incarnations per holder process */
#endif
#ifndef MAXLOST
#define MAXLOST 1 /* lost take replies per run: each one costs a generation */
#endif
#define NHOLDERS 2
#define NONE     0

byte a_holder = NONE; /* authority: incarnation holding the id */
byte a_gen = 0;       /* authority: grows on every take and forced release */
byte a_E = 0;         /* authority: lease end E, in time units */
byte minted = 0;      /* bit v: time value v has been minted */
byte takes_lost = 0;

/*
 * The one renewal in flight that may still arrive: it raises E when it lands
 * only if its holder and generation still match. It is kept only while it
 * could change something (tidy), so dead copies do not multiply states.
 */
byte ghost_holder = NONE;
byte ghost_gen = 0;
byte ghost_until = 0;

inline tidy()
{
    if
    :: ghost_holder != a_holder || ghost_gen != a_gen || ghost_until <= a_E ->
        ghost_holder = NONE;
        ghost_gen = 0;
        ghost_until = 0
    :: else -> skip
    fi
}

#ifdef BROKEN_FENCE
#define FENCE0 0
#else
#define FENCE0 found
#endif

/* Holder and generation as the authority's conditional writes check them. */
#define MATCH (gen != 0 && a_holder == me && a_gen == gen)

/* A take may start a new incarnation or retry after a lost reply. The taker's
 * clock is free, so it may always believe E has passed; E becomes
 * max(E, now + lease), i.e. any e >= E. */
#define CAN_TAKE(e) \
    (gen == 0 && (me != NONE || incs < MAXINC) && (e) <= MAXT && (e) >= a_E)

inline begin_take()
{
    if
    :: me == NONE ->
        incs++;
        me = _pid * MAXINC + incs
    :: else -> skip
    fi
}

#define TAKE(e)                                     \
    :: d_step {                                     \
        CAN_TAKE(e) ->                              \
        begin_take();                               \
        found = a_E;                                \
        a_holder = me;                              \
        a_gen++;                                    \
        gen = a_gen;                                \
        a_E = e;                                    \
        myE = e;                                    \
        last = FENCE0;                              \
        tidy()                                      \
    }

/* Written at the authority, reply lost: the taker keeps gen == 0 and may
 * retry under the same incarnation, or give up (crash). */
#define TAKE_LOST(e)                                \
    :: d_step {                                     \
        CAN_TAKE(e) && takes_lost < MAXLOST ->      \
        begin_take();                               \
        takes_lost++;                               \
        a_holder = me;                              \
        a_gen++;                                    \
        a_E = e;                                    \
        tidy()                                      \
    }

/*
 * Reachability probes for tests/model/check_models.sh: each one must fail,
 * which shows the bounds reach the situation named.
 * REACH_STALE_MINT: a holder whose lease is gone still mints below its E
 * after another incarnation minted at or above it.
 * REACH_REPLAY: a delayed renewal lands and raises E.
 * REACH_FULL: every time value minted, over four or more generations.
 */
#ifdef REACH_STALE_MINT
#define PROBE_MINT assert(!(a_gen != gen && (minted >> myE) != 0))
#elif defined(REACH_FULL)
#define PROBE_MINT assert(!(minted == (1 << MAXT) - 2 && a_gen >= 4))
#else
#define PROBE_MINT skip
#endif

/* Strictly after the fence and the last value, strictly before own E. */
#define MINT(v)                                     \
    :: d_step {                                     \
        gen != 0 && (v) < MAXT && (v) > last && (v) < myE -> \
        assert((minted & (1 << (v))) == 0);         \
        minted = minted | (1 << (v));               \
        last = v;                                   \
        PROBE_MINT                                  \
    }

/* Conditional renewal, E = max(E, now + lease) = any e >= E. */
#define RENEW(e)                                    \
    :: d_step {                                     \
        MATCH && (e) <= MAXT && (e) >= a_E ->       \
        a_E = e;                                    \
        myE = e;                                    \
        tidy()                                      \
    }                                               \
    :: d_step {                                     \
        MATCH && (e) <= MAXT && (e) > a_E ->        \
        a_E = e; /* reply lost: keep the older E */ \
        tidy()                                      \
    }                                               \
    :: d_step {                                     \
        MATCH && (e) <= MAXT && (e) > a_E ->        \
        ghost_holder = me; /* request delayed */    \
        ghost_gen = gen;                            \
        ghost_until = e                             \
    }

inline forget()
{
    me = NONE;
    gen = 0;
    found = 0;
    myE = 0;
    last = 0
}

active [NHOLDERS] proctype Holder()
{
    byte incs = 0, me = NONE, gen = 0, found = 0, myE = 0, last = 0;

end:
    do
    TAKE(0)
    TAKE(1)
    TAKE(2)
    TAKE(3)
    TAKE(4)
    TAKE(5)
    TAKE(6)
    TAKE_LOST(0)
    TAKE_LOST(1)
    TAKE_LOST(2)
    TAKE_LOST(3)
    TAKE_LOST(4)
    TAKE_LOST(5)
    TAKE_LOST(6)
    MINT(1)
    MINT(2)
    MINT(3)
    MINT(4)
    MINT(5)
    RENEW(1)
    RENEW(2)
    RENEW(3)
    RENEW(4)
    RENEW(5)
    RENEW(6)
    :: d_step { /* clean release: E = max(E found, last minted + 1) */
        MATCH ->
        if
        :: found > last + 1 -> a_E = found
        :: else -> a_E = last + 1
        fi;
        a_holder = NONE;
        tidy();
        forget()
    }
    :: d_step { /* release after a failed open, nothing minted: E = E found */
        MATCH && last == FENCE0 ->
        a_E = found;
        a_holder = NONE;
        tidy();
        forget()
    }
    :: d_step { /* crash (kill -9), lease lost, or gave up: the id rests until E */
        me != NONE ->
        forget()
    }
    od
}

/* The delayed renewal lands (it can only raise E: tidy keeps it live only then). */
active proctype Network()
{
end:
    do
    :: d_step {
        ghost_holder != NONE ->
#ifdef REACH_REPLAY
        assert(false);
#endif
        a_E = ghost_until;
        tidy()
    }
    od
}

/* An operator forces the id away once: holder cleared, generation grows, E kept. */
active proctype Operator()
{
end:
    if
    :: d_step { a_holder != NONE -> a_holder = NONE; a_gen++; tidy() }
    fi
}

#if MAXT > 6
#error "TAKE/RENEW/MINT are listed for MAXT <= 6"
#endif
