/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Region claims (docs/multi-node.md, "Regions"; models/region.pml). A
 * registry, an idmint store every regional authority reaches at set-up time,
 * keeps one record per region id ("region/N": who holds it, and the floor
 * its next claimant starts after) and the definition of every namespace
 * that spans regions. An authority that claimed a region keeps its own
 * record ("claim") and from then on:
 * - grants leases of that region only, and a take's fence is at least the
 *   registry's floor at the claim (idmint__authority_region_take);
 * - creates and opens a namespace with region bits only as the registry
 *   defines it (idmint__authority_region_ns_create / _ns_open).
 * Minting and renewals never read the registry; a take reads only the
 * authority's own record. The release follows the model: mark the claim
 * released, so nothing more is granted; end every lease's renewals (the
 * generation moves on) and read the highest E in the same step as each
 * worker row's move; then free the region in the registry with that E as
 * its floor.
 */
#include "internal.h"
#include "region_record.h"
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OWN_KEY       "claim"
#define RECORD_REGION "region/%u"
#define REGION_MAX    0xffffu
#define SETTLE_PASSES 3 /* passes over the worker rows at a release */
#define ANY_REGION    UINT32_MAX

/* Read the claim @p st keeps under @p key: 1 with *out and *version, 0 when there is none. */
static int record_read(struct store *st, const char *key, idmint_region_record *out,
                       uint64_t *version)
{
    char text[STORE_RECORD_MAX];
    int rc;

    if (!idmint__store_has_records(st)) {
        *version = 0;
        return 0;
    }
    rc = idmint__store_record_get(st, key, text, sizeof(text), version);
    if (rc == IDMINT_ENOTFOUND)
        return 0;
    if (rc != 0 || (rc = idmint__region_record_parse(text, out)) != 0)
        return rc;
    return 1;
}

static int record_write(struct store *st, const char *key, const idmint_region_record *c,
                        uint64_t expect, const char *actor, const char *action, int64_t now_ms)
{
    char text[STORE_RECORD_MAX];
    int rc = idmint__region_record_format(c, text, sizeof(text));

    return rc != 0 ? rc : idmint__store_record_put(st, key, text, expect, actor, action, now_ms);
}

/* The authority's location for messages, cut to fit a record's field. */
static void where_copy(char dst[256], const char *location)
{
    size_t n = strnlen(location, 255);

    memcpy(dst, location, n);
    dst[n] = '\0';
}

static int local_only(const idmint_authority *a, const char *what)
{
    int rc = idmint__authority_check(a);

    if (rc == 0 && a->st == NULL)
        rc = idmint__fail(IDMINT_EINVAL,
                          "%s: an http:// authority's region is its daemon's; run it against "
                          "the daemon's own store",
                          what);
    return rc;
}

/* 1 when region @p region fits the region bits of snowflake namespace @p ns. */
static int region_fits(const idmint_ns_info *ns, uint32_t region)
{
    uint32_t bits = ns->layout.region_bits;

    return ns->kind == IDMINT_KIND_SNOWFLAKE && (bits >= 32 || (region >> bits) == 0);
}

/* The first field in which @p here and the registry's @p def differ, into @p buf; 0 when none. */
static int definition_differs(const idmint_ns_info *here, const idmint_ns_info *def, char *buf,
                              size_t size)
{
    const idmint_layout *h = &here->layout, *d = &def->layout;

#define DIFF(field, what)                                                                          \
    if (h->field != d->field) {                                                                    \
        snprintf(buf, size, "%s %lld here, %lld in the registry", what, (long long)h->field,       \
                 (long long)d->field);                                                             \
        return 1;                                                                                  \
    }
    if (here->kind != def->kind) {
        snprintf(buf, size, "kind %s here, %s in the registry",
                 here->kind == IDMINT_KIND_RANGE ? "range" : "snowflake",
                 def->kind == IDMINT_KIND_RANGE ? "range" : "snowflake");
        return 1;
    }
    DIFF(time_bits, "time bits")
    DIFF(region_bits, "region bits")
    DIFF(worker_bits, "worker bits")
    DIFF(sequence_bits, "sequence bits")
    DIFF(unit_ms, "unit (ms)")
    DIFF(epoch_ms, "epoch (Unix ms)")
#undef DIFF
    /* A fence or migration may raise a copy's floor, never lower it. */
    if (here->floor < def->floor) {
        snprintf(buf, size, "floor %llu here, %llu in the registry",
                 (unsigned long long)here->floor, (unsigned long long)def->floor);
        return 1;
    }
    return 0;
}

/*
 * Namespace @p ns of an authority bound to a registry, against the
 * registry's definition: 0, IDMINT_EINVAL naming the difference, or
 * IDMINT_ENOTFOUND when the registry has none. @p reg is open. With
 * @p floor (a namespace being made), *floor is first raised to the
 * registry's floor, which the copy then takes.
 */
static int definition_adopt(struct store *reg, const char *registry, const idmint_ns_info *ns,
                            uint64_t *floor)
{
    idmint_ns_info def, here = *ns;
    char diff[160];
    int rc;

    def.size = sizeof(def);
    rc = idmint__store_ns_get(reg, ns->name, &def);
    if (rc == IDMINT_ENOTFOUND)
        return idmint__fail(IDMINT_ENOTFOUND,
                            "namespace '%s' has region bits but the registry %s does not define "
                            "it: define it there first (idmint ns create --authority REGISTRY), "
                            "then copy it (idmint ns create %s --from-registry)",
                            ns->name, registry, ns->name);
    if (rc != 0)
        return rc;
    if (floor != NULL && *floor < def.floor)
        *floor = here.floor = def.floor;
    if (definition_differs(&here, &def, diff, sizeof(diff)))
        return idmint__fail(IDMINT_EINVAL,
                            "namespace '%s' differs from the registry's definition (%s): %s; its "
                            "IDs would repeat another region's",
                            ns->name, registry, diff);
    return 0;
}

static int definition_check(struct store *reg, const char *registry, const idmint_ns_info *ns)
{
    return definition_adopt(reg, registry, ns, NULL);
}

/*
 * Open the registry at @p url, never creating one: a mistyped URL must not
 * become an empty registry that every claim then finds free.
 */
static int registry_open(const char *url, struct store **out)
{
    int rc = idmint__store_open_flags(url, NULL, STORE_OPEN_EXISTING, out);

    if (rc == IDMINT_ENOTFOUND)
        return idmint__fail(IDMINT_ENOTFOUND,
                            "there is no region registry at %s: make it by defining the "
                            "namespaces there (idmint --authority %s ns create ...)",
                            url, url);
    if (rc != 0 && rc != IDMINT_EINVAL)
        return idmint__fail(rc, "the region registry %s cannot be reached: %s", url,
                            idmint_errmsg());
    return rc;
}

int idmint__authority_region_take(idmint_authority *a, const idmint_ns_info *ns, uint32_t region,
                                  int64_t *floor_ms)
{
    idmint_region_record own;
    uint64_t version;
    int rc;

    *floor_ms = 0;
    if (a->st == NULL || (rc = record_read(a->st, OWN_KEY, &own, &version)) == 0)
        return 0; /* never claimed: any region a client asks for */
    if (rc < 0)
        return rc;
    if (own.state != IDMINT_REGION_CLAIMED)
        return idmint__fail(IDMINT_EACCESS,
                            "this authority's claim of region %u is %s: it grants no lease "
                            "(idmint region show)",
                            (unsigned)own.region, idmint__region_state_name(own.state));
    if (region != own.region)
        return idmint__fail(IDMINT_EACCESS,
                            "this authority serves region %u only (claimed in the registry "
                            "%s); it grants no lease of region %u in '%s'",
                            (unsigned)own.region, own.registry, (unsigned)region, ns->name);
    *floor_ms = own.floor_ms;
    return 0;
}

/*
 * The claim of @p a when @p ns spans regions (a snowflake namespace with
 * region bits) and @p a, on a store, holds one: 1 and *own; 0 when no
 * registry has a say; else an error.
 */
static int spanning_claim(idmint_authority *a, const idmint_ns_info *ns, idmint_region_record *own)
{
    uint64_t version;

    if (ns->kind != IDMINT_KIND_SNOWFLAKE || ns->layout.region_bits == 0 || a->st == NULL)
        return 0;
    return record_read(a->st, OWN_KEY, own, &version);
}

int idmint__authority_region_ns_create(idmint_authority *a, idmint_ns_info *ns)
{
    idmint_region_record own;
    struct store *reg = NULL;
    int rc = spanning_claim(a, ns, &own);

    if (rc <= 0)
        return rc;
    /* New namespaces wait for the registry: a copy nobody checked could differ. */
    if ((rc = registry_open(own.registry, &reg)) == 0)
        rc = definition_adopt(reg, own.registry, ns, &ns->floor);
    idmint__store_close(reg);
    return rc;
}

int idmint__authority_region_ns_open(idmint_authority *a, const idmint_ns_info *ns)
{
    idmint_region_record own;
    struct store *reg = NULL;
    int rc = spanning_claim(a, ns, &own);

    if (rc <= 0)
        return rc;
    /* Minting never waits on the registry: when it cannot be reached, the
     * copy checked when it was made (or claimed) is trusted. */
    if (idmint__store_open_flags(own.registry, NULL, STORE_OPEN_EXISTING, &reg) != 0)
        return 0;
    rc = definition_check(reg, own.registry, ns);
    idmint__store_close(reg);
    return rc == IDMINT_EUNAVAILABLE || rc == IDMINT_ESTORE || rc == IDMINT_ETIMEDOUT ? 0 : rc;
}

/* Refuse a URL that carries a password: the claim keeps the URL in clear. */
static int registry_url_check(const char *url)
{
    const char *p = url != NULL ? strstr(url, "://") : NULL;
    const char *at, *colon, *slash;

    if (url == NULL || url[0] == '\0')
        return idmint__fail(IDMINT_EINVAL, "no registry URL");
    if (strlen(url) >= sizeof(((idmint_region_record *)0)->registry) / 2)
        return idmint__fail(IDMINT_EINVAL, "the registry URL is too long");
    if (p == NULL)
        return 0;
    p += 3;
    at = strchr(p, '@');
    slash = strchr(p, '/');
    colon = strchr(p, ':');
    if (at != NULL && (slash == NULL || at < slash) && colon != NULL && colon < at)
        return idmint__fail(IDMINT_EINVAL,
                            "the registry URL carries a password, which the claim would keep in "
                            "clear: give it through ~/.pgpass or PGPASSFILE instead");
    return 0;
}

/* Every held worker id and every namespace of @p a against @p region and the registry. */
static int claim_ready(idmint_authority *a, struct store *reg, const char *registry,
                       uint32_t region)
{
    idmint_ns_info *list = NULL;
    idmint_worker_info *rows = NULL;
    size_t n = 0, m, i, j;
    int64_t now_ms = idmint__authority_now_ms(a);
    int rc = idmint__store_ns_list(a->st, &list, &n);

    for (i = 0; rc == 0 && i < n; i++) {
        const idmint_ns_info *ns = &list[i];

        if (ns->kind != IDMINT_KIND_SNOWFLAKE)
            continue;
        if (ns->layout.region_bits > 0 && !region_fits(ns, region))
            rc = idmint__fail(IDMINT_EINVAL, "region %u does not fit the %u region bits of '%s'",
                              (unsigned)region, (unsigned)ns->layout.region_bits, ns->name);
        if (rc == 0 && ns->layout.region_bits > 0)
            rc = definition_check(reg, registry, ns);
        if (rc == 0 && (rc = idmint__store_lease_list(a->st, ns->name, &rows, &m)) == 0) {
            for (j = 0; rc == 0 && j < m; j++)
                if (rows[j].holder[0] != '\0' &&
                    idmint__unit_start_ms(&ns->layout, rows[j].lease_until) > now_ms)
                    rc = idmint__fail(IDMINT_EINVAL,
                                      "worker id %u of region %u in '%s' is held: claim a "
                                      "region before the authority serves (stop its processes, "
                                      "or let their leases run out)",
                                      (unsigned)rows[j].worker_id, (unsigned)rows[j].region,
                                      ns->name);
            free(rows);
            rows = NULL;
        }
    }
    free(list);
    return rc;
}

static int own_identity(idmint_authority *a, char store_id[33])
{
    struct idmint__history_state h;
    int rc = idmint__store_history_check(a->st, 0, &h);

    if (rc == 0)
        memcpy(store_id, h.store_id, 33);
    return rc;
}

/* The registry's side of a claim: the region is ours, or it is refused. */
static int registry_claim(idmint_authority *a, struct store *reg, uint32_t region,
                          const char *store_id, const char *actor, int64_t now_ms,
                          idmint_region_record *got)
{
    char key[32];
    idmint_region_record rec;
    uint64_t version = 0;
    int rc, tries;

    snprintf(key, sizeof(key), RECORD_REGION, (unsigned)region);
    for (tries = 0; tries < 4; tries++) {
        memset(&rec, 0, sizeof(rec));
        if ((rc = record_read(reg, key, &rec, &version)) < 0)
            return rc;
        if (rc == 1 && rec.state == IDMINT_REGION_CLAIMED) {
            if (strcmp(rec.holder, store_id) == 0) {
                *got = rec; /* ours already: a claim run again */
                return 0;
            }
            return idmint__fail(IDMINT_ECONFLICT,
                                "region %u is claimed by authority %s at %s since %lld (Unix ms); "
                                "release it there first (idmint region release)",
                                (unsigned)region, rec.holder, rec.where, (long long)rec.since_ms);
        }
        rec.region = region;
        rec.state = IDMINT_REGION_CLAIMED;
        snprintf(rec.holder, sizeof(rec.holder), "%s", store_id);
        where_copy(rec.where, a->location);
        rec.registry[0] = '\0';
        rec.since_ms = now_ms;
        rc = record_write(reg, key, &rec, version, actor, "region.claim", now_ms);
        if (rc != IDMINT_ECONFLICT) {
            if (rc == 0)
                *got = rec;
            return rc;
        }
    }
    return rc;
}

/*
 * Move every worker row of @p region (ANY_REGION: of every region) in @p ns
 * to its next generation, E kept, so that no lease of it is renewed again,
 * and raise *floor_ms to the highest E seen. Rows already moved (their
 * holder is "") are read only.
 */
static int end_leases(idmint_authority *a, const idmint_ns_info *ns, uint32_t region,
                      const char *actor, int64_t *floor_ms)
{
    idmint_worker_info *rows = NULL;
    size_t n = 0, i;
    int pass, moved = 1, rc = 0;

    for (pass = 0; rc == 0 && moved && pass < SETTLE_PASSES; pass++) {
        moved = 0;
        if ((rc = idmint__store_lease_list(a->st, ns->name, &rows, &n)) != 0)
            break;
        for (i = 0; rc == 0 && i < n; i++) {
            int64_t e_ms;

            if (region != ANY_REGION && rows[i].region != region)
                continue;
            if (rows[i].holder[0] != '\0') {
                rc = idmint__store_lease_force_release(a->st, ns->name, rows[i].region,
                                                       rows[i].worker_id, IDMINT_MAX_VALUE, actor,
                                                       idmint__authority_now_ms(a));
                moved = 1;
            }
            e_ms = idmint__unit_start_ms(&ns->layout, rows[i].lease_until);
            if (e_ms > *floor_ms)
                *floor_ms = e_ms;
        }
        free(rows);
        rows = NULL;
    }
    /* A take that landed during the passes was moved by the next one; the
     * last pass found none, or rc says why it could not look. */
    if (rc == 0 && moved)
        rc = idmint__fail(IDMINT_EUNAVAILABLE,
                          "worker ids of '%s' kept being taken during the release: run it again",
                          ns->name);
    return rc;
}

/*
 * A new claim's epoch: every lease this authority granted before it (of any
 * region: it served whatever clients asked) ends at its E, so that none is
 * renewed under the claim (models/region.pml, NO_EPOCH).
 */
static int end_earlier_leases(idmint_authority *a, const char *actor)
{
    idmint_ns_info *list = NULL;
    size_t n = 0, i;
    int64_t ignored = 0;
    int rc = idmint__store_ns_list(a->st, &list, &n);

    for (i = 0; rc == 0 && i < n; i++)
        if (list[i].kind == IDMINT_KIND_SNOWFLAKE)
            rc = end_leases(a, &list[i], ANY_REGION, actor, &ignored);
    free(list);
    return rc;
}

int idmint_region_claim(idmint_authority *a, const char *registry_url, uint32_t region)
{
    idmint_region_record own, reg_rec;
    struct store *reg = NULL;
    char actor[64], store_id[33], reg_where[IDMINT__LOCATION_MAX];
    uint64_t own_version = 0;
    int64_t now_ms;
    int has_own, rc = local_only(a, "region claim");

    memset(&reg_rec, 0, sizeof(reg_rec));
    if (rc != 0 || (rc = registry_url_check(registry_url)) != 0)
        return rc;
    if (region > REGION_MAX)
        return idmint__fail(IDMINT_EINVAL, "region %u is above %u", (unsigned)region, REGION_MAX);
    if (!idmint__store_has_records(a->st))
        return idmint__fail(IDMINT_EINVAL, "the %s store keeps no region claims",
                            a->st->ops->scheme);
    if ((has_own = record_read(a->st, OWN_KEY, &own, &own_version)) < 0)
        return has_own;
    if (has_own && own.state == IDMINT_REGION_RELEASING)
        return idmint__fail(IDMINT_ECONFLICT,
                            "this authority's release of region %u has not ended: run "
                            "'idmint region release' again first",
                            (unsigned)own.region);
    if (has_own && (own.state == IDMINT_REGION_CLAIMED || own.state == IDMINT_REGION_CLAIMING) &&
        (own.region != region || strcmp(own.registry, registry_url) != 0))
        return idmint__fail(IDMINT_ECONFLICT,
                            "this authority holds region %u in the registry %s already; release "
                            "it first",
                            (unsigned)own.region, own.registry);
    if (has_own && own.state == IDMINT_REGION_CLAIMED)
        return 0; /* a claim run again after it ended */
    if ((rc = own_identity(a, store_id)) != 0 || (rc = registry_open(registry_url, &reg)) != 0)
        return rc;
    if (idmint__store_location(reg, registry_url, reg_where, sizeof(reg_where)) == 0 &&
        a->location[0] != '\0' && strcmp(reg_where, a->location) == 0)
        rc = idmint__fail(IDMINT_EINVAL, "the registry must be a store of its own, not the "
                                         "authority that claims");
    if (rc == 0 && !idmint__store_has_records(reg))
        rc = idmint__fail(IDMINT_EINVAL, "the registry's %s store keeps no region claims",
                          reg->ops->scheme);
    /* A claim that stopped half-way has begun ending the earlier leases. */
    if (rc == 0 && !(has_own && own.state == IDMINT_REGION_CLAIMING))
        rc = claim_ready(a, reg, registry_url, region);
    now_ms = idmint__authority_now_ms(a);
    idmint__authority_actor(a, actor, sizeof(actor));
    if (rc == 0)
        rc = registry_claim(a, reg, region, store_id, actor, now_ms, &reg_rec);
    idmint__store_close(reg);
    if (rc != 0)
        return rc;
    if (!(has_own && own.state == IDMINT_REGION_CLAIMING)) {
        /* The mark first: from here no take is granted until the claim ends. */
        memset(&own, 0, sizeof(own));
        own.region = region;
        own.state = IDMINT_REGION_CLAIMING;
        memcpy(own.holder, store_id, sizeof(own.holder));
        where_copy(own.where, a->location);
        snprintf(own.registry, sizeof(own.registry), "%s", registry_url);
        own.since_ms = now_ms;
        own.floor_ms = reg_rec.floor_ms;
        if ((rc = record_write(a->st, OWN_KEY, &own, own_version, actor, "region.claiming",
                               now_ms)) != 0)
            return rc;
        own_version++;
    }
    if ((rc = end_earlier_leases(a, actor)) != 0)
        return rc;
    own.state = IDMINT_REGION_CLAIMED;
    return record_write(a->st, OWN_KEY, &own, own_version, actor, "region.claim",
                        idmint__authority_now_ms(a));
}

int idmint_region_release(idmint_authority *a)
{
    idmint_region_record own, rec;
    idmint_ns_info *list = NULL;
    struct store *reg = NULL;
    char actor[64], key[32];
    uint64_t version = 0, reg_version = 0;
    size_t n = 0, i;
    int64_t floor_ms;
    int rc = local_only(a, "region release");

    if (rc != 0)
        return rc;
    if ((rc = record_read(a->st, OWN_KEY, &own, &version)) <= 0)
        return rc < 0 ? rc : idmint__fail(IDMINT_ENOTFOUND, "this authority holds no region claim");
    idmint__authority_actor(a, actor, sizeof(actor));
    if (own.state == IDMINT_REGION_CLAIMED || own.state == IDMINT_REGION_CLAIMING) {
        /* The mark first: from here no take is granted (idmint__authority_region_take). */
        own.state = IDMINT_REGION_RELEASING;
        if ((rc = record_write(a->st, OWN_KEY, &own, version, actor, "region.releasing",
                               idmint__authority_now_ms(a))) != 0)
            return rc;
        version++;
    }
    floor_ms = own.floor_ms;
    if (own.state == IDMINT_REGION_RELEASING) {
        rc = idmint__store_ns_list(a->st, &list, &n);
        for (i = 0; rc == 0 && i < n; i++) {
            if (!region_fits(&list[i], own.region))
                continue;
            if (!list[i].is_disabled)
                rc = idmint__store_ns_set_disabled(a->st, list[i].name, 1, actor,
                                                   idmint__authority_now_ms(a));
            if (rc == 0)
                rc = end_leases(a, &list[i], own.region, actor, &floor_ms);
        }
        free(list);
        if (rc != 0)
            return rc;
    }
    if ((rc = registry_open(own.registry, &reg)) != 0)
        return rc;
    snprintf(key, sizeof(key), RECORD_REGION, (unsigned)own.region);
    if ((rc = record_read(reg, key, &rec, &reg_version)) == 1 &&
        rec.state == IDMINT_REGION_CLAIMED && strcmp(rec.holder, own.holder) == 0) {
        rec.state = IDMINT_REGION_FREE;
        rec.holder[0] = '\0';
        rec.where[0] = '\0';
        rec.since_ms = idmint__authority_now_ms(a);
        if (floor_ms > rec.floor_ms)
            rec.floor_ms = floor_ms;
        rc = record_write(reg, key, &rec, reg_version, actor, "region.release", rec.since_ms);
    } else if (rc >= 0) {
        rc = 0; /* freed by an earlier run of this release */
    }
    idmint__store_close(reg);
    if (rc != 0 || own.state == IDMINT_REGION_RELEASED)
        return rc;
    own.state = IDMINT_REGION_RELEASED;
    own.floor_ms = floor_ms;
    own.since_ms = idmint__authority_now_ms(a);
    return record_write(a->st, OWN_KEY, &own, version, actor, "region.released", own.since_ms);
}

int idmint_region_get(idmint_authority *a, idmint_region_record *out)
{
    idmint_region_record own;
    uint64_t version;
    int rc = local_only(a, "region show");

    if (rc != 0)
        return rc;
    if (out == NULL)
        return idmint__fail(IDMINT_EINVAL, "region claim output is NULL");
    if ((rc = record_read(a->st, OWN_KEY, &own, &version)) <= 0)
        return rc < 0 ? rc : idmint__fail(IDMINT_ENOTFOUND, "this authority holds no region claim");
    *out = own;
    return 0;
}

int idmint_registry_get(const char *registry_url, uint32_t region, idmint_region_record *out)
{
    idmint_region_record rec;
    struct store *reg = NULL;
    char key[32];
    uint64_t version;
    int rc;

    if (out == NULL || registry_url == NULL)
        return idmint__fail(IDMINT_EINVAL, "registry URL or output is NULL");
    if (region > REGION_MAX)
        return idmint__fail(IDMINT_EINVAL, "region %u is above %u", (unsigned)region, REGION_MAX);
    if ((rc = registry_open(registry_url, &reg)) != 0)
        return rc;
    snprintf(key, sizeof(key), RECORD_REGION, (unsigned)region);
    rc = record_read(reg, key, &rec, &version);
    idmint__store_close(reg);
    if (rc <= 0)
        return rc < 0 ? rc
                      : idmint__fail(IDMINT_ENOTFOUND, "region %u was never claimed in %s",
                                     (unsigned)region, registry_url);
    *out = rec;
    return 0;
}

int idmint_region_ns_definition(idmint_authority *a, const char *name, idmint_ns_info *out)
{
    idmint_region_record own;
    idmint_ns_info def;
    struct store *reg = NULL;
    uint64_t version;
    int rc = local_only(a, "namespace from the registry");

    if (rc != 0)
        return rc;
    if (out == NULL || name == NULL)
        return idmint__fail(IDMINT_EINVAL, "namespace name or output is NULL");
    if ((rc = record_read(a->st, OWN_KEY, &own, &version)) <= 0)
        return rc < 0 ? rc : idmint__fail(IDMINT_ENOTFOUND, "this authority holds no region claim");
    if ((rc = registry_open(own.registry, &reg)) != 0)
        return rc;
    def.size = sizeof(def);
    rc = idmint__store_ns_get(reg, name, &def);
    idmint__store_close(reg);
    if (rc == IDMINT_ENOTFOUND)
        return idmint__fail(IDMINT_ENOTFOUND, "the registry %s defines no namespace '%s'",
                            own.registry, name);
    if (rc == 0) {
        def.is_disabled = 0;
        idmint__struct_copy_out(out, &def);
    }
    return rc;
}
