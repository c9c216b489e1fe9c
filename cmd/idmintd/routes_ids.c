/* SPDX-License-Identifier: Apache-2.0 */
/*
 * GET /v1/ids (the hot route; with an Idempotency-Key, routes_batch.c) and
 * GET /v1/ids/{id}/decode. On a loop, GET /v1/ids mints only from a handle
 * already open and never waits: what needs the store (a key, a namespace
 * not open yet) goes to a store thread, and a batch larger than what the
 * current time unit holds is finished from a timer on the loop, also one a
 * store thread began (neither kind of thread ever sleeps for a unit). The ids body is
 * written by hand into request memory: the namespace name needs no escaping
 * (it matched [a-z0-9][a-z0-9_.-]*) and IDs are decimal strings.
 */
#include "daemon.h"

#include "idmint_service.h"
#include "json.h"
#include "reply.h"
#include "routes_authority.h"
#include "routes_ids.h"
#include "route_table.h"
#include "routes_defer.h"

#include <stdio.h>
#include <string.h>

#define U64_DIGITS_MAX 20

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* Write @p v in decimal at @p dst; returns the number of digits. */
static size_t u64_decimal(uint64_t v, char *dst)
{
    char tmp[U64_DIGITS_MAX];
    size_t n = U64_DIGITS_MAX, len;

    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100) * 2;

        v /= 100;
        tmp[--n] = digit_pairs[pair + 1];
        tmp[--n] = digit_pairs[pair];
    }
    if (v >= 10) {
        unsigned pair = (unsigned)v * 2;

        tmp[--n] = digit_pairs[pair + 1];
        tmp[--n] = digit_pairs[pair];
    } else {
        tmp[--n] = (char)('0' + v);
    }
    len = U64_DIGITS_MAX - n;
    memcpy(dst, tmp + n, len);
    return len;
}

static int accepts_text(const struct http_req *r)
{
    static const char want[] = "text/plain";
    size_t i;

    if (r->accept == NULL || r->accept_len < sizeof(want) - 1)
        return 0;
    for (i = 0; i + sizeof(want) - 1 <= r->accept_len; i++)
        if (memcmp(r->accept + i, want, sizeof(want) - 1) == 0)
            return 1;
    return 0;
}

/*
 * A batch being minted on a loop: what the current time unit held went
 * out, the rest waits for the next unit in a timer (http_after), so the
 * loop serves other requests meanwhile. In request memory, made only for a
 * batch that has to wait: most fit in their unit and need none. A store
 * thread never waits for a unit: it hands such a batch to its loop
 * (routes_ids_finish_on_loop), which finishes it here.
 */
struct loop_batch {
    struct daemon_thread *w;
    struct ns_handle *nh;
    const struct route_row *row;
    const char *actor;
    uint64_t t0_ns;
    struct route_match m;
    uint64_t *ids;
    size_t count, done;
    int is_keyed; /* saved (routes_batch_save) before it is answered */
    char ns[64];
};

/* A batch a store thread hands to its loop: what it minted, and what is asked. */
struct ids_handoff {
    char ns[64];
    uint32_t count; /* asked for */
    uint32_t done;  /* minted: ids[0..done) */
    int is_keyed;   /* as in struct loop_batch */
    uint64_t ids[]; /* done of them */
};

/* Mint into ids[*done..count) what is ready now. 0 or an IDMINT_E* code. */
static int mint_ready(struct daemon_thread *w, struct ns_handle *nh, uint64_t *ids, size_t count,
                      size_t *done, uint32_t *wait_ms)
{
    size_t got = 0;
    int rc = handles_try_next_n(nh, ids + *done, count - *done, &got, wait_ms);

    if (rc == 0) {
        metrics_add(&w->metrics.ids_issued[nh->slot], got);
        *done += got;
    }
    return rc;
}

static void batch_go_on(struct http_req *r, void *arg);

/*
 * Answer @p b (a keyed one: hand it to a store thread to be saved first),
 * or come back after @p wait_ms for its rest. 1 when waiting.
 */
static int batch_answer_or_wait(struct http_req *r, struct loop_batch *b, int rc, uint32_t wait_ms)
{
    if (rc != 0)
        routes_fail(r, rc, NULL);
    else if (b->done == b->count && b->is_keyed)
        routes_batch_save(r, b->w, &b->m, b->ids, b->count);
    else if (b->done == b->count)
        routes_ids_reply(r, b->ns, b->ids, b->count);
    else if (http_after(r, wait_ms, batch_go_on, b) == 0)
        return 1;
    else /* IDs minted and not sent are a gap, never handed out again. */
        routes_fail(r, IDMINT_ENOMEM, "out of memory waiting for the next time unit");
    return 0;
}

/* The timer: mint what is ready; answer when all are, else wait again. */
static void batch_go_on(struct http_req *r, void *arg)
{
    struct loop_batch *b = arg;
    struct daemon_thread *w = b->w;
    uint32_t wait_ms = 0;
    int rc;

    /* The loop's worker serves other requests between ticks: make it this
     * request's again, for the answer, the metrics and a hand-over. */
    w->status = 0;
    w->row = b->row;
    w->t0_ns = b->t0_ns;
    w->actor = b->actor;
    w->is_deferred = 0;
    rc = mint_ready(w, b->nh, b->ids, b->count, &b->done, &wait_ms);
    if (!batch_answer_or_wait(r, b, rc, wait_ms) && !w->is_deferred)
        metrics_count_answer(w, b->row, w->status, b->t0_ns); /* a timer's answer counts itself */
}

/*
 * Mint ids[done..count) of @p ns on a loop, never waiting: answer (or save,
 * @p is_keyed) once all are minted, or finish from a timer.
 */
static void mint_on_loop(struct http_req *r, struct daemon_thread *w, const struct route_match *m,
                         struct ns_handle *nh, const char *ns, uint64_t *ids, size_t count,
                         size_t done, int is_keyed)
{
    struct loop_batch *b;
    uint32_t wait_ms = 0;
    int rc = mint_ready(w, nh, ids, count, &done, &wait_ms);

    if (rc != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    if (done == count && !is_keyed) {
        routes_ids_reply(r, ns, ids, count);
        return;
    }
    if ((b = (struct loop_batch *)(void *)http_alloc(r, sizeof(*b))) == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory waiting for the next time unit");
        return;
    }
    memset(b, 0, sizeof(*b));
    b->w = w;
    b->nh = nh;
    b->row = w->row;
    b->actor = w->actor;
    b->t0_ns = w->t0_ns;
    b->m = *m;
    b->ids = ids;
    b->count = count;
    b->done = done;
    b->is_keyed = is_keyed;
    snprintf(b->ns, sizeof(b->ns), "%s", ns);
    if (batch_answer_or_wait(r, b, 0, wait_ms))
        w->is_deferred = 1; /* still inside the dispatcher: the timer counts it */
}

/* On the loop, after routes_ids_finish_on_loop: mint the rest of the batch. */
static void ids_go_on(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const struct ids_handoff *h = w->handoff;
    struct ns_handle *nh;
    uint64_t *ids;

    if (h == NULL || w->handoff_size < sizeof(*h) || h->done > h->count ||
        w->handoff_size < sizeof(*h) + (size_t)h->done * sizeof(uint64_t)) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch to its event loop");
        return;
    }
    /* Open already: the store thread opened it, and handles stay. */
    if ((nh = handles_find(&w->d->handles, h->ns)) == NULL) {
        routes_fail(r, IDMINT_EUNAVAILABLE, "the namespace's handle is not open");
        return;
    }
    if ((ids = (uint64_t *)(void *)http_alloc(r, (size_t)h->count * sizeof(uint64_t))) == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return;
    }
    memcpy(ids, h->ids, (size_t)h->done * sizeof(uint64_t));
    mint_on_loop(r, w, m, nh, h->ns, ids, h->count, h->done, h->is_keyed);
}

int routes_ids_finish_on_loop(struct http_req *r, struct daemon_thread *w, const char *ns,
                              const uint64_t *ids, size_t done, size_t count, int is_keyed)
{
    size_t size = sizeof(struct ids_handoff) + done * sizeof(uint64_t);
    struct ids_handoff *h = (struct ids_handoff *)(void *)http_alloc(r, size);

    if (h == NULL)
        return -1;
    memset(h, 0, sizeof(*h));
    snprintf(h->ns, sizeof(h->ns), "%s", ns);
    h->count = (uint32_t)count;
    h->done = (uint32_t)done;
    h->is_keyed = is_keyed;
    memcpy(h->ids, ids, done * sizeof(uint64_t));
    return routes_defer_resume(r, w, ids_go_on, h, size);
}

void routes_ids_get(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const uint32_t max_count = w->d->cfg.max_count;
    char ns[64], count_text[32];
    struct ns_handle *nh;
    uint64_t count = 1, *ids;
    size_t i;
    int q, rc;

    (void)m;
    if (routes_query_ns(r, ns, sizeof(ns)) != 0)
        return;
    q = routes_query(r, "count", count_text, sizeof(count_text));
    if (q != 0) {
        size_t len = q > 0 ? strlen(count_text) : 0;

        count = 0;
        if (len == 0 || len > 10 || strspn(count_text, "0123456789") != len) {
            routes_fail_http(r, 400, "invalid_argument",
                             "count must be a whole number from 1 to max_count");
            return;
        }
        for (i = 0; i < len; i++)
            count = count * 10 + (uint64_t)(count_text[i] - '0');
        if (count < 1 || count > max_count) {
            char text[96];

            snprintf(text, sizeof(text), "count %llu is outside 1..%u", (unsigned long long)count,
                     (unsigned)max_count);
            routes_fail_http(r, 400, "invalid_argument", text);
            return;
        }
    }
    /* On a loop, only a handle already open: opening one needs the store. */
    nh = w->is_store ? NULL : handles_find(&w->d->handles, ns);
    if (!w->is_store && (r->idempotency_keys > 0 || nh == NULL)) {
        routes_defer_store(r, w, m, routes_ids_get);
        return;
    }
    if (nh == NULL && (rc = handles_get(&w->d->handles, ns, &nh)) != 0) {
        routes_fail(r, rc, NULL);
        return;
    }
    if (r->idempotency_keys > 0) {
        routes_batch_mint(r, w, ns, nh, (uint32_t)count);
        return;
    }
    ids = (uint64_t *)(void *)http_alloc(r, (size_t)count * sizeof(uint64_t));
    if (ids == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return;
    }
    if (w->is_store) {
        size_t done = 0;
        uint32_t wait_ms = 0;

        /* Never wait for a time unit here: a store thread held through
         * units is one the lease routes and every other store call lack.
         * What the unit holds is minted now, the rest on the loop. */
        if ((rc = mint_ready(w, nh, ids, (size_t)count, &done, &wait_ms)) != 0) {
            routes_fail(r, rc, NULL);
            return;
        }
        if (done == count)
            routes_ids_reply(r, ns, ids, (size_t)count);
        else if (routes_ids_finish_on_loop(r, w, ns, ids, done, (size_t)count, 0) != 0)
            routes_fail(r, IDMINT_ENOMEM, "out of memory handing a batch to its event loop");
        return;
    }
    mint_on_loop(r, w, m, nh, ns, ids, (size_t)count, 0, 0);
}

void routes_ids_reply(struct http_req *r, const char *ns, const uint64_t *ids, size_t count)
{
    size_t i, ns_len = strlen(ns);
    char *body = http_alloc(r, count * (U64_DIGITS_MAX + 3) + ns_len + 32), *p;

    if (body == NULL) {
        routes_fail(r, IDMINT_ENOMEM, "out of memory");
        return;
    }
    p = body;
    if (accepts_text(r)) {
        for (i = 0; i < count; i++) {
            p += u64_decimal(ids[i], p);
            *p++ = '\n';
        }
        routes_reply(r, 200, "text/plain; charset=utf-8", body, (size_t)(p - body));
        return;
    }
    memcpy(p, "{\"namespace\":\"", 14);
    p += 14;
    memcpy(p, ns, ns_len);
    p += ns_len;
    memcpy(p, "\",\"ids\":[", 9);
    p += 9;
    for (i = 0; i < count; i++) {
        if (i > 0)
            *p++ = ',';
        *p++ = '"';
        p += u64_decimal(ids[i], p);
        *p++ = '"';
    }
    memcpy(p, "]}", 2);
    p += 2;
    routes_reply(r, 200, "application/json", body, (size_t)(p - body));
}

void routes_ids_decode(struct http_req *r, struct daemon_thread *w, const struct route_match *m)
{
    const char *id_text = m->segment;
    char ns[64], when[32];
    idmint_ns_info info;
    idmint_decoded dec;
    idmint_authority *a;
    struct json *o;
    uint64_t id;

    if (routes_query_ns(r, ns, sizeof(ns)) != 0)
        return;
    if (idmint_id_parse(id_text, &id) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return;
    }
    if (routes_snowflake_ns(r, w, ns, &a, &info,
                            "namespace is a range namespace: its IDs carry no fields to decode") !=
        0)
        return;
    if (idmint_decode(&info.layout, id, &dec) != 0) {
        routes_fail(r, IDMINT_EINVAL, NULL);
        return;
    }
    if (idmint_format_iso8601(dec.unix_ms, when, sizeof(when)) != 0)
        when[0] = '\0';
    o = json_new_object();
    json_set_u64_str(o, "id", id);
    json_set_str(o, "namespace", ns);
    json_set_str(o, "time", when);
    json_set_int(o, "unix_ms", dec.unix_ms);
    json_set_int(o, "region", dec.region);
    json_set_int(o, "worker", dec.worker);
    json_set_int(o, "sequence", (int64_t)dec.sequence); /* S <= 62: fits */
    routes_json_tree(r, 200, o);
}
