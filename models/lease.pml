/*
 * SPDX-License-Identifier: Apache-2.0
 * The worker-lease protocol of DESIGN.md §4 for one worker id, checked with
 * spin. Two holder processes, each living as up to MAXINC incarnations, take,
 * mint, renew, release and crash at any point; the authority may lose any
 * take or renewal reply, a delayed renewal may arrive long after it was sent,
 * and an operator may force the id away once, pulling E back. A forger that
 * knows the worker id and generation (listings show them) but not the holder
 * secret sends releases with any final time, and every holder's release may
 * carry any final time too (a bug, a bad clock, or a request forged by
 * whoever has the holder's secret). Clocks are arbitrary: every E asked for
 * and every time value minted is chosen freely, and any taker may believe the
 * E it finds has passed, so safety cannot rest on them. The property: no time value is ever
 * minted by two incarnations, except a value that its own holder gave up by
 * releasing with a final time below it (the store cannot know what a holder
 * minted; see FORFEIT).
 *
 * Broken twins; spin must find the duplicate (tests/model/check_models.sh):
 * -DBROKEN_FENCE          the taker ignores the E it found;
 * -DBROKEN_RELEASE        the old release rule: the holder id came from a
 *                         listing, so a forger passes the holder check, and
 *                         E = final time as sent;
 * -DBROKEN_RELEASE_HOLDER only the holder check is missing (E still clamped);
 * -DBROKEN_RELEASE_CLAMP  only the clamp is missing (E = final time as sent);
 * -DBROKEN_FORCE          force_release may pull E below what was minted
 *                         or what a live holder may still mint.
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
byte a_found = 0;     /* authority: the E found at take (the row's fence);
                       * 0 whenever the row has no holder (it is dead then:
                       * only a take, which sets it, can use the row next) */
byte minted = 0;      /* bit v: time value v has been minted */
byte takes_lost = 0;

/*
 * Each holder's generation (0: holds nothing it may mint under) and its own
 * idea of E. They are the holder's private state, kept global only because
 * the Operator's floor reads them and a d_step cannot make remote references.
 * Holder is the first active proctype, so its _pids are 0..NHOLDERS-1.
 */
byte h_gen[NHOLDERS];
byte h_myE[NHOLDERS];
#define gen h_gen[_pid]
#define myE h_myE[_pid]

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

/*
 * The store's release rule (DESIGN.md §4, ST_LEASE_RELEASE): accepted only
 * with the row's holder secret (who) and generation (g); an empty holder is
 * refused (check_holder), so a released row cannot be released again. Then
 * E = min(max(final time, the row's fence), the row's E): the clamp is the
 * store's, computed from the row, never from the client's word.
 */
#ifdef BROKEN_RELEASE
#define BROKEN_RELEASE_HOLDER
#define BROKEN_RELEASE_CLAMP
#endif
#ifdef BROKEN_RELEASE_HOLDER /* the holder id in the request came from a listing */
#define ACCEPT(who, g) (a_holder != NONE && a_gen == (g))
#else
#define ACCEPT(who, g) (a_holder != NONE && a_holder == (who) && a_gen == (g))
#endif
#define MIN(a, b) ((a) < (b) -> (a) : (b))
#define MAX(a, b) ((a) > (b) -> (a) : (b))
#ifdef BROKEN_RELEASE_CLAMP
#define CLAMP(f) (f)
#else
#define CLAMP(f) MIN(MAX(f, a_found), a_E)
#endif

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
        a_found = a_E;                              \
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
        a_found = a_E;                              \
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
 * REACH_CLAMP_LOW: a release's final time is below the row's fence while a
 * value between the two has been minted (the clamp is what protects it).
 * REACH_CLAMP_HIGH: a release's final time is beyond the row's E.
 * REACH_OWN_REPEAT: values given up (FORFEIT) are kept as minted; a later
 * incarnation mints one again (what an understated final time costs).
 * REACH_FORCE_LOWER: force_release pulls E back to exactly the highest value a
 * live holder may still mint.
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
        mine = mine | (1 << (v));                   \
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

#ifdef REACH_CLAMP_LOW
#define PROBE_RELEASE(f) \
    assert(!((f) < a_found && ((minted >> ((f) + 1)) & ((1 << (a_found - (f))) - 1)) != 0))
#elif defined(REACH_CLAMP_HIGH)
#define PROBE_RELEASE(f) assert(!((f) > a_E))
#else
#define PROBE_RELEASE(f) skip
#endif
#ifdef REACH_OWN_REPEAT /* keep given-up values: a later mint of one fails */
#define GIVE_UP skip
#else
#define GIVE_UP minted = minted & ~FORFEIT
#endif

/*
 * Values a release gives up: those this incarnation minted itself (mine)
 * above the E its release left. Only an understated final time (below
 * last) gives any up; another incarnation's values are never given up,
 * so a release that moves E below them still shows as a duplicate.
 * Evaluated after a_E is set.
 */
#define FORFEIT (mine & ~((1 << (a_E + 1)) - 1))

/* The holder sends release(me, gen, f); the store checks and clamps. The
 * holder forgets the lease whatever the reply (a lost reply is the same). */
#define RELEASE(f)                                  \
    :: d_step {                                     \
        MATCH && ACCEPT(me, gen) && (f) <= MAXT ->  \
        assert(a_found == found);                   \
        PROBE_RELEASE(f);                           \
        a_E = CLAMP(f);                             \
        GIVE_UP;                                    \
        a_holder = NONE;                            \
        a_found = 0;                                \
        tidy();                                     \
        forget()                                    \
    }

inline forget()
{
    me = NONE;
    gen = 0;
    found = 0;
    myE = 0;
    last = 0;
    mine = 0
}

active [NHOLDERS] proctype Holder()
{
    /* mine: the values this incarnation minted; gen and myE are above */
    byte incs = 0, me = NONE, found = 0, last = 0, mine = 0;

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
    RELEASE(last + 1) /* the honest release: E = last minted + 1 */
    RELEASE(0)        /* any other final time, e.g. after a failed open, */
    RELEASE(1)        /* a bug, a bad clock, or a forged request made    */
    RELEASE(2)        /* with the holder's own token and secret          */
    RELEASE(3)
    RELEASE(4)
    RELEASE(5)
    RELEASE(6)
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

/*
 * A forger (a careless or hostile client) knows the worker id and the
 * generation, which listings show, but not the holder secret, which no
 * listing or audit record shows (only a fingerprint). It sends release(FORGER,
 * a_gen, f) for any final time f at any moment. The store refuses it (a
 * refused release changes nothing, so the step is simply not enabled);
 * under -DBROKEN_RELEASE[_HOLDER] it is accepted.
 */
#define FORGER 255 /* no incarnation's id: me = _pid * MAXINC + incs */
#define FORGE(f)                                    \
    :: d_step {                                     \
        ACCEPT(FORGER, a_gen) && (f) <= MAXT ->     \
        a_E = CLAMP(f);                             \
        a_holder = NONE;                            \
        a_found = 0;                                \
        tidy()                                      \
    }

active proctype Forger()
{
end:
    do
    FORGE(0)
    FORGE(1)
    FORGE(2)
    FORGE(3)
    FORGE(4)
    FORGE(5)
    FORGE(6)
    od
}

/*
 * An operator forces the id away once, on any row: holder cleared,
 * generation grows, and E is kept (idmint_worker_force_release) or pulled
 * back to min(E, now + a bound) (docs/design.md: the longest lease). Pulling
 * back is safe only while the bound is at least every value already minted
 * and every live holder's own E, which rests on clocks: a holder whose clock
 * runs ahead may have been granted, and may have minted up to, a later E.
 * The model takes that as given: the new E is anything from FLOOR up to E.
 * FLOOR is the lowest E a taker may find and still not collide (takers mint
 * strictly after it): the highest value minted, and the highest value each
 * live holder may still mint (its own E - 1). Any real bound that meets the
 * assumption is >= FLOOR, so this adversary is the stronger. Keeping E is
 * always among the choices (E >= FLOOR in every reachable state).
 * -DBROKEN_FORCE drops the floor.
 */
#define TOP_MINTED /* highest value minted, or 0 */ \
    ((minted >> 5) != 0 -> 5 : ((minted >> 4) != 0 -> 4 : ((minted >> 3) != 0 -> 3 : \
     ((minted >> 2) != 0 -> 2 : ((minted >> 1) != 0 -> 1 : 0)))))
/* the highest value holder p may still mint (below its own E), or 0 */
#define LIVE_TOP(p) (h_gen[p] != 0 && h_myE[p] > 0 -> h_myE[p] - 1 : 0)
#ifdef BROKEN_FORCE
#define FLOOR 0
#else
#define FLOOR MAX(TOP_MINTED, MAX(LIVE_TOP(0), LIVE_TOP(1)))
#endif
#ifdef REACH_FORCE_LOWER
#define PROBE_FORCE(e) \
    assert(!((e) < a_E && (e) > 0 && ((e) == LIVE_TOP(0) || (e) == LIVE_TOP(1))))
#else
#define PROBE_FORCE(e) skip
#endif
#define FORCE(e)                                    \
    :: d_step {                                     \
        (e) >= FLOOR && (e) <= a_E ->               \
        PROBE_FORCE(e);                             \
        a_holder = NONE;                            \
        a_gen++;                                    \
        a_E = e;                                    \
        a_found = 0;                                \
        tidy()                                      \
    }

active proctype Operator()
{
end:
    if
    FORCE(0)
    FORCE(1)
    FORCE(2)
    FORCE(3)
    FORCE(4)
    FORCE(5)
    FORCE(6)
    fi
}

#if MAXT > 6
#error "TAKE/RENEW/MINT/RELEASE/FORGE/FORCE/TOP_MINTED are listed for MAXT <= 6"
#endif
