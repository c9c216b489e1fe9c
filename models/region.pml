/*
 * SPDX-License-Identifier: Apache-2.0
 * Region claims (issue 33), checked with spin: the protocol the regional
 * authorities are to follow, before any code of it exists. One region id,
 * one worker id of it, NAUTH authorities (each with its own store) and one
 * registry that all of them reach at set-up time. An authority claims the
 * region in the registry, records the claim (and the registry's floor for
 * the region) in its own store, and from then hands out the worker id to its
 * own processes, under the lease fence: a taker mints only time values
 * strictly after max(the E it found, the claim's floor), and strictly before
 * its own E. An operator may release a claim at any time; another authority
 * (or the same one) may then claim the region again, as often as MAXCLAIMS.
 *
 * The release, two steps like the operator's act: (1) in the releasing
 * authority's store, in one transaction, mark the claim released (no take or
 * renewal is granted after it) and read the highest E its store ever
 * granted for the region; (2) in the registry, free the claim and raise the
 * region's floor to that E. A holder of the released authority mints on, up
 * to its E, without hearing of the release (minting never waits on the
 * registry), so the next claimant's holders must start above it.
 *
 * Clocks are arbitrary: every E asked for and every time value minted is
 * chosen freely, and any taker may believe the E it finds has passed. The
 * property: no time value of the worker id is minted under two claims'
 * authorities (two regions' worth of IDs sharing one region id are the
 * duplicates this prevents).
 *
 * Broken twins; spin must find the duplicate (tests/model/check_models.sh):
 * -DNO_FENCE     the claimant ignores the registry's floor;
 * -DNOT_MARKED   the release does not mark the store: the released
 *                authority keeps renewing past the floor it reported;
 * -DFLOOR_FIRST  the floor is read before the mark, in another transaction,
 *                so a renewal between the two moves E past it;
 * -DNO_EPOCH     a lease taken under an authority's earlier claim is renewed
 *                under its later one: the holder's fence predates the floor
 *                the later claim took (the model found this one: a claim must
 *                start a new epoch of the authority's worker rows, so that
 *                every lease of an earlier claim ends at its E).
 * A reachability probe, which must fail to show the search is not vacuous:
 * -DREACH_BOTH   both authorities mint the worker id, one after the other's
 *                claim was released.
 */
#ifndef MAXT
#define MAXT 6 /* time values 1..MAXT-1 are minted; E is 0..MAXT */
#endif
#ifndef NAUTH
#define NAUTH 2 /* authorities, 1..NAUTH */
#endif
#ifndef MAXCLAIMS
#define MAXCLAIMS 3 /* claims per run, first included */
#endif

#ifdef NO_EPOCH
#define RENEWABLE true
#else
#define RENEWABLE (mine == epoch[a])
#endif
#ifdef FLOOR_FIRST
#define RELEASE_READY (releasing != 0 && released[releasing])
#else
#define RELEASE_READY (releasing != 0)
#endif

/* The registry. */
byte claim = 0;  /* the authority holding the region; 0: free */
byte rfloor = 0; /* no claimant mints at or below this */
byte claims = 0;

/* Each authority's store: its claim record and the worker id's row. */
bool bound[NAUTH + 1];    /* it holds a claim (recorded in its store) */
bool released[NAUTH + 1]; /* its claim was released: no take or renewal */
byte afloor[NAUTH + 1];   /* the registry's floor when it claimed */
byte E[NAUTH + 1];        /* the worker row's E in its store */
byte highest[NAUTH + 1];  /* the highest E its store ever granted */
byte epoch[NAUTH + 1];    /* its claims so far: a lease is renewed only under its own */
byte pending = 0;         /* a release between its two steps: the floor it read */
byte releasing = 0;       /* whose release is between its steps; 0: none */

/* Which authority's holder minted each time value of the worker id. */
byte minted_by[MAXT];
bool has_minted[NAUTH + 1]; /* for the reachability probe */

inline raise(x, v)
{
    if
    :: x < v -> x = v
    :: else -> skip
    fi
}

/* A holder process of authority a: takes the worker id, renews, mints. */
proctype holder(byte a)
{
    byte fence = 0, myE = 0, t = 0, mine = 0;
    bool holds = false;

end:
    do
    :: atomic { /* take: the row's E passed as far as this taker believes */
           !holds && bound[a] && !released[a] && E[a] < MAXT && afloor[a] < MAXT ->
           fence = E[a];
           raise(fence, afloor[a]);
           /* its own E: any value after the fence (its clock is arbitrary) */
           select(myE : fence + 1 .. MAXT);
           E[a] = myE;
           raise(highest[a], myE);
           mine = epoch[a];
           holds = true
       }
    :: d_step { /* renew: refused once the claim is released, and under a later claim */
           holds && bound[a] && !released[a] && myE < MAXT && RENEWABLE ->
           myE++;
           raise(E[a], myE);
           raise(highest[a], myE)
       }
    :: atomic { /* mint a time value strictly between its fence and its E */
           holds && fence + 1 < myE ->
           select(t : fence + 1 .. myE - 1);
           assert(minted_by[t] == 0 || minted_by[t] == a); /* no duplicate */
           minted_by[t] = a;
           has_minted[a] = true;
#ifdef REACH_BOTH
           assert(!(has_minted[1] && has_minted[2])); /* both authorities minted */
#endif
           t = 0
       }
    :: d_step { /* the lease ends, or the process stops: it mints no more */
           holds -> holds = false; fence = 0; myE = 0; mine = 0
       }
    od
}

/* The operators: claims and releases, in any order. */
proctype operators()
{
    byte a = 0;

end:
    do
    :: atomic { /* an authority claims the free region */
           claim == 0 && releasing == 0 && claims < MAXCLAIMS ->
           select(a : 1 .. NAUTH);
           claim = a;
           claims++;
           /* Its store records the claim; a store that holds an unreleased
            * claim of the region already cannot be given another. */
           bound[a] = true;
           released[a] = false;
           epoch[a]++;
#ifdef NO_FENCE
           afloor[a] = 0;
#else
           afloor[a] = rfloor;
#endif
           a = 0
       }
    :: d_step { /* a second claim of a held region is refused: nothing changes */
           claim != 0 -> skip
       }
#ifdef FLOOR_FIRST
    :: d_step { /* release, step 0: the floor read in a transaction of its own */
           claim != 0 && releasing == 0 ->
           releasing = claim;
           pending = highest[claim]
       }
    :: d_step { /* release, step 1: the mark */
           releasing != 0 && !released[releasing] ->
           released[releasing] = true
       }
#else
    :: d_step { /* release, step 1: mark the store and read its highest E, in one transaction */
           claim != 0 && releasing == 0 ->
           releasing = claim;
#ifndef NOT_MARKED
           released[claim] = true;
#endif
           pending = highest[claim]
       }
#endif
    :: d_step { /* release, step 2: the registry frees the claim above that E */
           RELEASE_READY ->
           raise(rfloor, pending);
           claim = 0; /* the authority's own store keeps its record: released */
           releasing = 0;
           pending = 0
       }
    od
}

init
{
    atomic {
        byte i = 1;

        do
        :: i <= NAUTH -> run holder(i); i++
        :: else -> break
        od;
        run operators()
    }
}
