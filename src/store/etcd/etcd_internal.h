/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The interface between the layers of the etcd store (src/store/etcd/),
 * private to them. Each layer calls only those below it: the operations
 * (store_etcd.c, etcd_leases.c, etcd_range.c, etcd_records.c,
 * etcd_batches.c) over the queue (etcd_queue.c) over the transaction
 * (etcd_txn.c) over the wire (etcd_wire.c) over the codec (etcd_codec.c,
 * etcd_values.c).
 *
 * Conventions, unless a function says otherwise. Functions that can fail
 * return 0 or a negative IDMINT_E... code with the message set
 * (idmint__fail); wire and txn functions may also return ETCD_UNKNOWN or
 * ETCD_APPLIED as they say. A json_t * argument that a function "steals"
 * is released by it, also on failure; a json_t * returned is a new
 * reference, NULL only when out of memory. Keys are written into
 * caller-owned buffers of ETCD_KEY_MAX bytes. Ranges (struct etcd_range)
 * are filled by the callee and freed by the caller with etcd_range_free or
 * etcd_ranges_free, also after an error. Thread safety: a struct etcd_store
 * is used by one thread at a time (store.h), and nothing here has state of
 * its own beyond it.
 */
#ifndef IDMINT_STORE_ETCD_INTERNAL_H
#define IDMINT_STORE_ETCD_INTERNAL_H

#include "store.h"
#include "internal.h"
#include "curl_client.h"

#include <jansson.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETCD_DEFAULT_PREFIX      "/idmint"
/* 2: P/history, floor and origin; 3: grants, batches, collisions; 4: batches by owner, deduplicated
 * collisions, both on leases; 5: P/tip (the history chain), store id and lineage, longest leases */
#define ETCD_SCHEMA_VERSION      5
#define ETCD_MAX_MEMBERS         16
#define ETCD_CONNECT_TIMEOUT_MS  500L  /* one TCP connect */
#define ETCD_ATTEMPT_MS          2000u /* one request to one member */
#define ETCD_CALL_BUDGET_MS      5000u /* one store call: every member, every retry */
#define ETCD_MAX_LOST            256   /* lost compares one call retries */
#define ETCD_BACKOFF_FIRST_MS    20u   /* after a round of members all failed; doubles */
#define ETCD_BACKOFF_MAX_MS      320u
#define ETCD_LOST_WAIT_MAX_US    1000000u /* the longest wait after a lost compare */
/* A call whose members answer but whose compares keep losing (a start burst
 * of hundreds on one namespace) may go on this long; silent members still
 * end it at ETCD_CALL_BUDGET_MS. */
#define ETCD_CONTENDED_BUDGET_MS 10000u
#define ETCD_AUDIT_PAGE          500u /* audit records per range request */
#define ETCD_MAX_REPLY_BYTES     (64u * 1024u * 1024u)
#define ETCD_KEY_MAX             1024 /* bytes: prefix, name, escaped ids */
#define ETCD_PREFIX_MAX          200
#define ETCD_NAME_MAX            512 /* the URL as shown in messages */
#define ETCD_OPID_LEN            32  /* hex digits */
/* Others' waiting range requests one reservation's txn grants: 2 compares and 4 ops
 * each, and 6 of its own, within --max-txn-ops (default 128). */
#define ETCD_COMBINE_MAX         24
/* A waiting request reads again after a round per ETCD_COMBINE_MAX + 1 ahead of
 * it: the time the namespace key took per write since the request first read
 * it, within these bounds, or this before the key moved. */
#define ETCD_WAIT_ROUND_US       15000u
#define ETCD_WAIT_ROUND_MIN_US   2000u
#define ETCD_WAIT_ROUND_MAX_US   200000u
/* Txns a reservation that met others waiting goes on sending for them, and
 * for how long at most: its own answer waits for them. */
#define ETCD_SERVE_ROUNDS        8
#define ETCD_SERVE_MS            100u
/* The namespace unmoved this long (once more per ETCD_COMBINE_MAX + 1 ahead),
 * a waiting request sends its txn though older ones wait: they may be dead. */
#define ETCD_WAIT_STALL_MS       250u
#define ETCD_PRUNE_TXN           40 /* records one prune txn deletes: 3 ops each, --max-txn-ops 128 */
#define ETCD_GRANT_PAGE          256            /* worker grants per range request of a trace */
#define ETCD_BATCH_INLINE        (256u * 1024u) /* runs kept in the batch key, bytes */
#define ETCD_BATCH_PART          (512u * 1024u) /* bytes of runs per part: --max-request-bytes 1.5 MiB */
/* A record's lease is shared with the records of the same kind this handle
 * writes within this long after it (at most keep / 8): one grant per
 * window, not per record, and a record lives at most this much past its
 * retention. */
#define ETCD_LEASE_REUSE_MAX_MS  600000u

/* etcd_write: sent, no answer (an unknown outcome): read again and decide. */
#define ETCD_UNKNOWN 1
/* etcd_write: every compare held and the success branch ran. */
#define ETCD_APPLIED 2

struct etcd_store {
    struct store base;               /* must be first */
    struct idmint__curl_client http; /* keep-alive per member */
    char *members[ETCD_MAX_MEMBERS]; /* "http://host:port", malloc'd */
    size_t n_members;
    size_t cur;                   /* the member tried first: the last that answered */
    char prefix[ETCD_PREFIX_MAX]; /* no trailing '/' */
    char hkey[ETCD_KEY_MAX];      /* P/history */
    char tkey[ETCD_KEY_MAX];      /* P/tip: the tip of the last granting txn */
    uint64_t call_tip;            /* the tip of the call in progress' grants; 0: none drawn yet */
    int is_compacted;             /* the last request asked for a compacted revision */
    char name[ETCD_NAME_MAX];     /* "etcd://..." for messages */
    uint64_t deadline_ms;         /* monotonic end of the call in progress */
    uint64_t call_start_ms;       /* monotonic start of the call in progress */
    int is_oom;                   /* a JSON builder ran out of memory since the last send */
    uint64_t jitter;              /* xorshift state for the waits after a lost compare */
    int64_t applied_rev;          /* revision of the last applied write; 0 if its reply had none */
    /* The namespace as this store's last reservation wrote it, so the next
     * one on it can send its txn without reading first (etcd_range_reserve). */
    char seen_key[ETCD_KEY_MAX]; /* P/ns/NAME; "" for none */
    idmint_ns_info seen_ns;
    int64_t seen_rev; /* seen_key's mod_revision after that write */
    /* The leases batches [0] and collision records [1] are written with (expiry_lease). */
    struct etcd_expiry {
        int64_t id;        /* etcd lease id; 0: none yet */
        int64_t keep_ms;   /* the retention it was granted for */
        uint64_t until_ms; /* monotonic: records written before then live at least keep_ms */
    } expiry[2];
    int is_lease_gone; /* the last request named a lease etcd does not know */
};

/* One key-value pair of a range answer. key and value are NUL-terminated copies. */
struct etcd_kv {
    char *key;
    char *value;
    size_t value_len; /* bytes */
    int64_t create_rev;
    int64_t mod_rev;
    int64_t version; /* writes of the key since it was created */
};

/* One range answer: kvs in the order etcd sent them. */
struct etcd_range {
    struct etcd_kv *kvs;
    size_t n;
    uint64_t count; /* keys in the range, also those a limit left out */
};

/* A worker lease row as stored. */
struct etcd_row {
    uint32_t region;
    uint32_t worker_id;
    char holder[33]; /* "" when released */
    uint64_t generation;
    uint64_t until; /* E */
    uint64_t fence; /* E found by the take that made this generation */
    int64_t mod_rev;
};

/* How one attempt ended, beyond its IDMINT code. */
enum etcd_outcome {
    ETCD_OK,       /* 200 and a JSON object */
    ETCD_NOT_SENT, /* never reached the member: try another, a write included */
    ETCD_MAYBE,    /* sent, no usable answer: another member; a write's outcome is unknown */
    ETCD_DEFINITE, /* an answer that another try would not change */
};

/* Of a request waiting in the namespace: the namespace's revision when last seen to move. */
struct etcd_turn {
    int64_t ns_rev;
    uint64_t since_ms;
    int64_t first_version; /* the namespace key's version when first read */
    uint64_t first_us;
};

/* ==== etcd_codec.c ==== */

/* @p len bytes of @p data in base64; malloc'd, NULL when out of memory. */
char *etcd_b64_encode(const void *data, size_t len);

/*
 * Decode base64 @p text: 0 with *out (malloc'd, NUL-terminated) and *len,
 * -1 if it is not base64, -2 when out of memory.
 */
int etcd_b64_decode(const char *text, char **out, size_t *len);

/* A field etcd or we wrote as a decimal string; absent means 0 (proto3 default). */
int etcd_get_u64(json_t *obj, const char *key, uint64_t *out);

/* As etcd_get_u64, signed. */
int etcd_get_i64(json_t *obj, const char *key, int64_t *out);

/* @p v as etcd and our values write an int64: a decimal string. */
json_t *etcd_j_u64(uint64_t v);

/* The same, signed. */
json_t *etcd_j_i64(int64_t v);

/* A small field: 0..@p max. */
int etcd_get_small(json_t *o, const char *key, uint64_t max, uint64_t *out);

/* A text field into @p out (@p size bytes, cut to fit); absent is "". -1 if it is not text. */
int etcd_get_text(json_t *o, const char *key, char *out, size_t size);

/*
 * Text of at most @p cap bytes at @p in as a JSON string, printable ASCII
 * kept and any other byte '?': what a holder says of itself is recorded,
 * and never the reason a grant fails.
 */
json_t *etcd_j_text(const char *in, size_t cap);

/* IDMINT_ESTORE: key @p key does not hold @p what (written by something other than idmint?). */
int etcd_bad_value(const struct etcd_store *s, const char *key, const char *what);

/* IDMINT_ENOMEM while doing @p what. */
int etcd_oom(const struct etcd_store *s, const char *what);

/* Write "P<fmt...>" into @p out (ETCD_KEY_MAX bytes): 0, or IDMINT_EINVAL when too long. */
int etcd_key_fmt(const struct etcd_store *s, char *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The end of the range of keys that start with @p prefix: its last byte + 1. */
void etcd_key_prefix_end(const char *prefix, char *out);

/* The key schema (store_etcd.c): each writes P/... into @p out, 0 or IDMINT_EINVAL. */
int etcd_key_ns(const struct etcd_store *s, const char *ns, char *out);

int etcd_key_lease(const struct etcd_store *s, const char *ns, uint32_t region, uint32_t worker_id,
                   char *out);

int etcd_key_inc_prefix(const struct etcd_store *s, const char *ns, const char *incarnation,
                        char *out);

int etcd_key_audit(const struct etcd_store *s, const char *opid, char *out);

/* P/wgrant/NS/REGION/WORKER/: every generation of one worker id. */
int etcd_key_wgrant_prefix(const struct etcd_store *s, const char *ns, uint32_t region,
                           uint32_t worker_id, char *out);

int etcd_key_wgrant(const struct etcd_store *s, const char *ns, uint32_t region, uint32_t worker_id,
                    uint64_t generation, char *out);

int etcd_key_rgrant(const struct etcd_store *s, const char *ns, uint64_t start, char *out);

/* P/obatch/OWNER/KEY: the batch @p owner saved under @p key. */
int etcd_key_batch(const struct etcd_store *s, const char *owner, const char *key, char *out);

/* P/batch/KEY: a batch of schema 3, when one key named one batch in the store. */
int etcd_key_batch_v3(const struct etcd_store *s, const char *key, char *out);

/* P/coll/NS/ID/REPORTER: the record of @p c's report. */
int etcd_key_collision(const struct etcd_store *s, const idmint_collision *c, char *out);

/* "@p key/" into @p out and the end of the range of keys under it into @p end. */
int etcd_key_children(const struct etcd_store *s, const char *key, char *out, char *end);

/* P/FAMILY/NAME/INCARNATION/REQUEST (family "inc": a request record). */
int etcd_key_request(const struct etcd_store *s, const char *family, const char *ns,
                     const char *incarnation, const char *request_id, char *out);

/* P/pend/NAME/MS/INCARNATION/REQUEST: a request left waiting at @p now_ms (20 digits), so
 * key order is the order they were left in. */
int etcd_key_waiting(const struct etcd_store *s, const char *ns, int64_t now_ms,
                     const char *incarnation, const char *request_id, char *out);

/* The record key of the waiting request @p pkey (P/pend/NS/MS/INC/REQ) into @p out; -1 if it is not
 * one. */
int etcd_waiting_record_key(const struct etcd_store *s, const char *ns, const char *pkey,
                            char *out);

/* The part @p i of a batch's runs under key @p hkey, claim @p claim. */
int etcd_key_batch_part(const struct etcd_store *s, const char *hkey, const char *claim, size_t i,
                        char *out);

/* The last @p digits digits of @p key as a number; -1 if they are not that. */
int etcd_key_tail_u64(const char *key, size_t digits, uint64_t *out);

/*
 * The families of the age index, by enum idmint__retained. Collision
 * records have none, and schema 4's batches are not in it: they end with
 * their lease (expiry_lease).
 */
extern const char etcd_age_family[IDMINT__KEEP__COUNT];

/* An age stamp as a key segment. Before 1970 sorts as 1970: no clock of an authority says that. */
unsigned long long etcd_age_ms(int64_t ms);

/* P/age/F/MS/SUB: the age index key of record @p target (P/SUB) stamped @p ms. */
int etcd_key_age(const struct etcd_store *s, int what, int64_t ms, const char *target, char *out);

/* The record P/SUB an age index key P/age/F/MS/SUB indexes, into @p out; -1 if it is not one. */
int etcd_age_target(const struct etcd_store *s, const char *age_key, char *out);

/* A fresh op id for one audited call (ETCD_OPID_LEN hex digits). */
int etcd_opid_new(char out[ETCD_OPID_LEN + 1]);

/* A key as etcd's JSON spells it: base64. */
json_t *etcd_j_key(const char *key);

/* Append @p item (stolen) to @p arr; an allocation failure is remembered in s->is_oom. */
void etcd_add(struct etcd_store *s, json_t *arr, json_t *item);

/* {"request_range": {key, range_end?}}: one key, or [key, end) when @p end is not NULL. */
json_t *etcd_op_range(const char *key, const char *end);

/*
 * {"request_range"} of the first @p limit keys in [@p key, @p end): the
 * oldest waiting requests, their keys starting with the time they were left.
 * No sort and no filter, so etcd reads only those (either makes it read
 * every key in the range).
 */
json_t *etcd_op_range_first(const char *key, const char *end, unsigned limit);

/* {"request_range"} counting the keys in [@p key, @p end), from etcd's index alone. */
json_t *etcd_op_count(const char *key, const char *end);

/* {"request_put": {key, value}} with @p value (stolen) as compact JSON text. */
json_t *etcd_op_put(const char *key, json_t *value);

/* {"request_put"} of @p key with the text @p text as its value. */
json_t *etcd_op_put_text(const char *key, const char *text);

/* etcd_op_put with the key attached to etcd lease @p lease: etcd deletes it when the lease ends. */
json_t *etcd_op_put_lease(const char *key, json_t *value, int64_t lease);

/* {"request_delete_range": {key, range_end?}}: one key, or [key, end). */
json_t *etcd_op_delete(const char *key, const char *end);

/* Compare: @p key's mod_revision is @p rev (0: the key does not exist). */
json_t *etcd_cmp_mod(const char *key, int64_t rev);

/* Compare: @p key does not exist (create_revision 0). */
json_t *etcd_cmp_absent(const char *key);

/* Compare: @p key exists (create_revision above 0). */
json_t *etcd_cmp_exists(const char *key);

/*
 * Put P/maxlease/NAME/UNITS (@p units, 20 digits) for a lease of @p units
 * granted in @p ns: the largest such key is the longest lease granted there
 * (store.h, version 6), kept without a read or a compare. NULL (an
 * allocation failure, remembered by etcd_add) when the key does not fit.
 */
json_t *etcd_op_lease_max(const struct etcd_store *s, const char *ns, uint64_t units);

/* ==== etcd_values.c ==== */

/* Parse the JSON object in @p kv's value; NULL (and a message) if it is not one. */
json_t *etcd_kv_json(const struct etcd_store *s, const struct etcd_kv *kv, const char *what);

/* A namespace's value, created at @p created_ms. */
json_t *etcd_ns_to_json(const idmint_ns_info *ns, int64_t created_ms);

/* The namespace in @p kv (key P/ns/NAME) into @p out. */
int etcd_ns_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, idmint_ns_info *out);

/* The row in @p kv (key P/lease/NS/REGION/WORKER). */
int etcd_row_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, struct etcd_row *out);

/* A worker lease row's value. */
json_t *etcd_row_to_json(const char *holder, uint64_t generation, uint64_t until, uint64_t fence);

/* Set @p o's origin fields from @p origin; an allocation failure is remembered in s->is_oom. */
void etcd_origin_to_json(struct etcd_store *s, json_t *o, const struct idmint__origin *origin);

/* A worker grant's value: holder @p holder's fingerprint, @p origin, [@p first, @p last). */
json_t *etcd_wgrant_json(struct etcd_store *s, const char *holder,
                         const struct idmint__origin *origin, uint64_t first, uint64_t last,
                         int64_t now_ms);

/* A range grant's value: [start, @p end) of the incarnation whose fingerprint is @p fp. */
json_t *etcd_rgrant_json(struct etcd_store *s, const char *fp, const struct idmint__origin *origin,
                         uint64_t end, int64_t now_ms);

/* The worker grant in @p kv (key P/wgrant/NS/REGION/WORKER/GEN) of (@p region, @p worker_id). */
int etcd_wgrant_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, uint32_t region,
                        uint32_t worker_id, idmint_grant_info *g);

/* The range grant in @p kv (key P/rgrant/NS/START). */
int etcd_rgrant_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, idmint_grant_info *g);

/*
 * An audit record. @p result (stolen; may be NULL) is what the call decided,
 * so that a retry after a lost reply can answer as the applied attempt did.
 */
json_t *etcd_audit_json(int64_t at_ms, const char *actor, const char *action, const char *ns,
                        const char *detail, json_t *result);

/* The "result" object of the audit record @p kv (NULL and ESTORE if absent); caller decrefs. */
json_t *etcd_audit_result(const struct etcd_store *s, const struct etcd_kv *kv);

/* The id in the history key @p kv into @p id (33 bytes). */
int etcd_history_id_of(const struct etcd_store *s, const struct etcd_kv *kv, char *id);

/*
 * The history key @p hkv of an older schema with @p store_id added (one it
 * has is kept), or NULL when it is not a JSON object (the txn then fails to
 * build: a damaged key is never replaced silently).
 */
json_t *etcd_history_upgraded(struct etcd_store *s, const struct etcd_kv *hkv,
                              const char *store_id);

/*
 * The history key a fence writes: id @p history_id, the store id of @p hkv
 * (the one a store of an older schema lacked: a new one), and the lineage
 * with the id @p hkv held first, IDMINT__LINEAGE_MAX ids at most.
 */
json_t *etcd_history_fenced(struct etcd_store *s, const struct etcd_kv *hkv, const char *history_id,
                            int64_t now_ms);

/*
 * What history_check reads of the history key @p hkv: the id, the store id
 * and the lineage (a JSON string: ids newest first, a space between).
 */
int etcd_history_key_state(struct etcd_store *s, const struct etcd_kv *hkv,
                           struct idmint__history_state *out);

/* The tip in P/tip's @p kv; 0 when it is not a number (never a tip). */
uint64_t etcd_tip_of(const struct etcd_kv *kv);

/* The request record in @p kv: its count and range. */
int etcd_record_from_kv(const struct etcd_store *s, const struct etcd_kv *kv, uint64_t *count,
                        struct idmint__range *res);

/* The batch key's value for @p b, claim @p claim: its runs, or how many parts hold them. */
json_t *etcd_batch_json(struct etcd_store *s, const struct idmint__batch *b, const char *claim,
                        size_t n_parts);

/* A collision record's value; @p opid names the call that wrote it. */
json_t *etcd_collision_json(const idmint_collision *c, int64_t now_ms, const char *opid);

/* The collision record in @p kv into @p out; its seq is the key's create_revision. */
int etcd_collision_from_kv(const struct etcd_store *s, const struct etcd_kv *kv,
                           idmint_collision *out);

/* ==== etcd_wire.c ==== */

/*
 * Set up the HTTP client of @p s (its members are parsed): 0, or
 * IDMINT_ENOMEM with a message. etcd_wire_close releases it, also after a
 * failed open.
 */
int etcd_wire_open(struct etcd_store *s);
void etcd_wire_close(struct etcd_store *s);

/*
 * POST @p body (stolen) to @p path within the call's deadline, moving to the
 * next member on a connection error, a timeout or an "unavailable" answer.
 * 0 with *reply; ETCD_UNKNOWN for a write (@p is_write) that may have been
 * applied (the caller reads again: never resend a write blindly); else a
 * negative code. A read, or a write that surely was not sent, is retried.
 */
int etcd_post(struct etcd_store *s, const char *path, json_t *body, int is_write, json_t **reply);

/* Free what a range holds (NULL-safe members); it is then empty. */
void etcd_range_free(struct etcd_range *r);

void etcd_ranges_free(struct etcd_range *r, size_t n);

/* Parse one RangeResponse object @p o into @p out (empty when it has no "kvs"). */
int etcd_range_parse(struct etcd_store *s, json_t *o, struct etcd_range *out);

/* The one kv of a single-key range, or NULL when the key does not exist. */
const struct etcd_kv *etcd_range_one(const struct etcd_range *r);

/*
 * Read the range ops of @p ops (a JSON array, stolen) at one revision: one
 * read-only txn, linearizable (never serializable). @p out gets one
 * etcd_range per op (free with etcd_ranges_free, also on error).
 */
int etcd_read(struct etcd_store *s, json_t *ops, struct etcd_range *out, size_t n);

/*
 * One conditional write: if every compare of @p compare holds, run
 * @p success, else @p failure (range ops only; all three stolen).
 * ETCD_APPLIED, with the revision written at in s->applied_rev (and, when
 * @p ok_last is not NULL, the answer of @p success's last op, a range, in
 * it: free with etcd_range_free); 0 when a compare failed, with the failure
 * branch's ranges in @p fail (n of them; free with etcd_ranges_free, also on
 * error); ETCD_UNKNOWN when it may or may not have applied; or a negative
 * code.
 */
int etcd_write(struct etcd_store *s, json_t *compare, json_t *success, json_t *failure,
               struct etcd_range *fail, size_t n, struct etcd_range *ok_last);

/* Read @p n keys and the history key at one revision: r[i] gets keys[i], r[n] the history key. */
int etcd_read_keys(struct etcd_store *s, const char *const *keys, size_t n, struct etcd_range *r);

/* Every key with prefix P@p sub in one linearizable read (key order). */
int etcd_read_prefix(struct etcd_store *s, const char *sub, struct etcd_range *r);

/* One range request of @p page keys in [@p key, @p end), key order; @p descend: the last first. */
int etcd_range_page(struct etcd_store *s, const char *key, const char *end, size_t page,
                    int descend, struct etcd_range *out);

/* Start a store call: its deadline covers every member and every retry. */
void etcd_call_begin(struct etcd_store *s);

/* Parse "//h1:p,h2:p/prefix" into s->members and s->prefix. */
int etcd_url_parse(struct etcd_store *s, const char *location);

/* ==== etcd_txn.c ==== */

/*
 * The tip of this call's grants into *tip, drawn on first use: every
 * attempt of one call puts the same tip, so the one that applied (a lost
 * reply) is known. 0 or IDMINT_EUNAVAILABLE.
 */
int etcd_call_tip(struct etcd_store *s, uint64_t *tip);

/*
 * After the @p lost-th lost compare in a row of one call (0 first): wait a
 * random 0 to 2^(lost + 1) ms, at most ETCD_LOST_WAIT_MAX_US. Racers that all
 * retried at once would mostly collide again, and every collision is a Raft
 * proposal: an fsync on each member for nothing. With 250 racers on one
 * key a cap of 16 ms still sent dozens per win, and the call's 5 s ran out
 * for most; the cap is now long enough to thin them to a few. A loss means
 * the members answered, so the call gets an attempt's time beyond its wait,
 * up to ETCD_CONTENDED_BUDGET_MS in all.
 */
uint64_t etcd_jitter_next(struct etcd_store *s);

/* The members answered: the call may go on for an attempt's time, up to
 * ETCD_CONTENDED_BUDGET_MS in all. */
void etcd_contended_extend(struct etcd_store *s);

/* IDMINT_EUNAVAILABLE: @p what lost its compare ETCD_MAX_LOST times in a row. */
int etcd_lost_too_often(const struct etcd_store *s, const char *what);

/* IDMINT_ERESTORED: a granting write found P/history gone, and changed nothing. */
int etcd_history_missing(const struct etcd_store *s);

/*
 * @p out of a write at revision @p rev with tip @p tip that read the history
 * key as @p kv: its revision is the counter. A reply without a revision is
 * no news.
 */
int etcd_history_at(const struct etcd_store *s, const struct etcd_kv *kv, int64_t rev, uint64_t tip,
                    struct idmint__history *out);

/*
 * The history of our write that applied in an earlier attempt whose reply
 * was lost: the revision of the audit key @p akv it created, with the id
 * of @p hkv read with it and the txn's tip @p tip. A history key written
 * since (a fence) makes it no news: the holder's next write shows the new
 * id.
 */
int etcd_history_applied(const struct etcd_store *s, const struct etcd_kv *hkv,
                         const struct etcd_kv *akv, uint64_t tip, struct idmint__history *out);

/*
 * A granting write (store.h, version 3): etcd_write that also compares that
 * P/history exists and reads it, last, in the success branch. @p fail must
 * end with a range of s->hkey, so the n ranges of @p r end with it too.
 * ETCD_APPLIED with @p hist filled; etcd_history_missing() when a compare failed
 * with P/history gone (nothing changed); else as etcd_write.
 */
int etcd_grant_write(struct etcd_store *s, json_t *cmp, json_t *ok, json_t *fail,
                     struct etcd_range *r, size_t n, struct idmint__history *hist);

/*
 * The optimistic transaction every write of this store makes, written once:
 * read, judge what was read and build a txn that compares it, send, and on a
 * lost compare judge the failure branch (what the compare saw) and go again,
 * at most ETCD_MAX_LOST times. An unknown outcome (a reply lost) is read
 * again, or sent again for a plan without a read: every txn compares
 * something only its first success changes (our audit key absent, a record
 * absent), so at most one attempt of a call ever applies.
 */

/* What a plan's judge answers besides 0 (the call is done) and a negative code. */
#define ETCD_TXN_SEND 3 /* the txn in *t is to be sent */
#define ETCD_TXN_READ 4 /* read again before judging; not an attempt */

/* Bits of what a plan's after_lost answers. */
#define ETCD_TXN_COUNTS 1 /* the attempt counts towards ETCD_MAX_LOST */
#define ETCD_TXN_REREAD 2 /* drop the failure branch's ranges: read again */

/* Bits of etcd_txn_plan.flags. */
#define ETCD_TXN_BACKOFF    1u /* a random wait (lost_backoff) after a lost compare */
#define ETCD_TXN_BLIND      2u /* the first attempt goes without a read */
#define ETCD_TXN_JUDGE_LAST 4u /* the failure branch of the last attempt is judged once more */
#define ETCD_TXN_READ_BACK  8u /* the success branch ends with a range: done gets it */

/* The reads of a reservation, before the records a failed txn read and the history key. */
#define ETCD_RESERVE_READS  5
/* The most ranges one read or failure branch returns (a reservation's). */
#define ETCD_TXN_MAX_RANGES (ETCD_RESERVE_READS + ETCD_COMBINE_MAX)

/* One attempt, as a plan's judge builds it. */
struct etcd_txn {
    json_t *cmp, *ok, *fail;         /* new empty arrays the judge appends to (the runner's) */
    size_t n_fail;                   /* ranges fail reads, at most ETCD_TXN_MAX_RANGES */
    struct idmint__history *history; /* not NULL: a granting write (etcd_grant_write) fills it */
};

/*
 * What varies between the writes. Every callback gets the ctx given to
 * etcd_txn_run; r and n are the ranges of the last read or failure branch,
 * owned by the runner (valid until the callback returns).
 */
struct etcd_txn_plan {
    const char *what; /* "taking a worker id": for the message after ETCD_MAX_LOST */
    unsigned flags;   /* ETCD_TXN_* */
    size_t n_reads;   /* ranges read fills */
    /* The read before an attempt into r (n_reads ranges, zeroed): 0 or a code.
     * NULL: never read; after an unknown outcome the judge builds the same txn again. */
    int (*read)(struct etcd_store *s, void *ctx, struct etcd_range *r);
    /* Index of our audit key's range in a read or failure branch; -1: none. */
    int audit_at;
    /* Our audit key exists: an earlier attempt applied. Its answer ends the call
     * (0 or a code); NULL: 0. */
    int (*applied)(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n);
    /* Judge r (NULL, n 0 before any read) and build the attempt into *t: ETCD_TXN_SEND,
     * ETCD_TXN_READ, 0 (done, nothing to write) or a negative code. @p lost counts the
     * attempts so far. */
    int (*judge)(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n, int lost,
                 struct etcd_txn *t);
    /* NULL, or resolve an unknown outcome: ETCD_APPLIED, 0 (lost), ETCD_UNKNOWN or a code. */
    int (*unknown)(struct etcd_store *s, void *ctx);
    /* NULL (every attempt counts; a failure branch is the next read), or after a lost
     * compare (@p rc 0, r the failure branch) or an unknown outcome (ETCD_UNKNOWN):
     * ETCD_TXN_COUNTS | ETCD_TXN_REREAD bits, or a negative code. */
    int (*after_lost)(struct etcd_store *s, void *ctx, const struct etcd_range *r, size_t n,
                      int rc);
    /* NULL (0), or after the txn applied: the call's answer. @p last is the success
     * branch's last range with ETCD_TXN_READ_BACK (else empty). */
    int (*done)(struct etcd_store *s, void *ctx, const struct etcd_range *last);
};

/*
 * Run @p plan to its end: 0, or a negative code (IDMINT_EUNAVAILABLE after
 * ETCD_MAX_LOST counted attempts lost). Whatever it read is freed.
 */
int etcd_txn_run(struct etcd_store *s, const struct etcd_txn_plan *plan, void *ctx);

/* ==== etcd_named_records.c: records (store.h, version 8) ==== */

int etcd_record_get(struct store *st, const char *key, char *value, size_t size, uint64_t *version);
int etcd_record_put(struct store *st, const char *key, const char *value, uint64_t expect,
                    const char *actor, const char *action, int64_t now_ms);

/* ==== etcd_queue.c ==== */

/* A waiting request's value: what its grant needs, as its caller would write it. */
json_t *etcd_queue_entry_json(struct etcd_store *s, const char *fp,
                              const struct idmint__origin *origin, uint64_t count, int64_t now_ms);

/* Into @p ok: the request record @p ikey of @p res granted for @p count, its grant and age key. */
int etcd_range_grant_ops(struct etcd_store *s, const char *ns, const char *ikey, const char *fp,
                         uint64_t count, const struct idmint__range *res, int64_t now_ms,
                         json_t *ok);

/*
 * Into the txn being built: grant the requests others left waiting
 * (@p waiting, oldest first; @p own_pkey, the caller's, is passed over) from
 * @p info on, advancing its next_value. Each is compared unchanged and its
 * record absent, answered with a record and a grant as its caller would
 * have written them, and deleted; its record is read in @p fail (*n_fail
 * counts them), so that if one is there after all (a waiting key no caller
 * of ours wrote) the next attempt finds it in @p known and does not
 * compare on it again. One that cannot be read, that has a record, or that
 * the namespace refuses is deleted unanswered: its caller reads again,
 * finds no record and no longer waiting, and decides for itself.
 */
int etcd_queue_grant(struct etcd_store *s, const char *ns, const char *own_pkey,
                     const char *own_ikey, const struct etcd_range *waiting,
                     const struct etcd_range *known, size_t n_known, idmint_ns_info *info,
                     int64_t now_ms, json_t *cmp, json_t *ok, json_t *fail, size_t *n_fail);

/*
 * Leave a request waiting at @p pkey for whichever reservation commits next,
 * unless its record @p ikey is there already. 0 either way (and when the
 * outcome is unknown: the next read decides), or a negative code.
 */
int etcd_queue_post(struct etcd_store *s, const char *ikey, const char *pkey, json_t *value);

/* How many requests other than @p pkey wait in @p waiting; its place among them into *pos. */
size_t etcd_queue_others(const struct etcd_range *waiting, const char *pkey, size_t *pos);

/*
 * Whether a caller whose request waits @p pos places back (0: the oldest)
 * behind @p others sends its txn now: when it is the oldest (that txn grants
 * the next ETCD_COMBINE_MAX too), when none other waits, or when the
 * namespace has not moved for ETCD_WAIT_STALL_MS, once more for every
 * ETCD_COMBINE_MAX + 1 ahead of it (the oldest may be callers killed while
 * they waited; their requests are granted with the others, ranges no one
 * uses). Else *wait_us
 * is how long to wait before reading again: a round for every
 * ETCD_COMBINE_MAX + 1 ahead of it, at least one, so that hundreds waiting
 * do not read etcd hot. A round is the time the namespace key (@p nkv) took
 * per write since this caller first read it.
 */
int etcd_queue_turn(struct etcd_store *s, size_t pos, size_t others, const struct etcd_kv *nkv,
                    struct etcd_turn *turn, uint64_t *wait_us);

/*
 * After a reservation that met others waiting committed: go on granting
 * what waits, ETCD_COMBINE_MAX a txn, for up to ETCD_SERVE_ROUNDS txns or
 * ETCD_SERVE_MS, while each commits and some wait. The next oldest would do
 * it in its turn, but only once it has read that its turn came; the caller
 * that just committed knows now. Its own answer is made: what goes wrong
 * here only ends the serving (and the message is cleared).
 */
void etcd_queue_serve(struct etcd_store *s, const char *ns, const char *nkey, const char *wait_key,
                      const char *wait_end, int64_t now_ms);

/*
 * Wait @p wait_us (what etcd_queue_turn said) before reading again, unless
 * that would pass the call's ETCD_CONTENDED_BUDGET_MS: then
 * IDMINT_EUNAVAILABLE, naming namespace @p ns. The wait counts as
 * contention: the call's deadline moves on (etcd_contended_extend).
 */
int etcd_queue_wait(struct etcd_store *s, const char *ns, uint64_t wait_us);

/* ==== etcd_leases.c ==== */

/* The operations of store.h's table, as store_etcd.c lists them (store.h documents each). */
int etcd_lease_take(struct store *st, const char *ns, uint64_t worker_count, uint64_t now_unit,
                    uint64_t until_unit, struct idmint__lease *lease, const char *actor,
                    int64_t now_ms);

int etcd_lease_renew(struct store *st, const char *ns, struct idmint__lease *lease,
                     uint64_t until_unit, int64_t now_ms);

int etcd_lease_release(struct store *st, const char *ns, struct idmint__lease *lease,
                       uint64_t final_unit, const char *actor, int64_t now_ms);

int etcd_lease_list(struct store *st, const char *ns, idmint_worker_info **out, size_t *n);

int etcd_lease_force_release(struct store *st, const char *ns, uint32_t region, uint32_t worker_id,
                             uint64_t max_until_unit, const char *actor, int64_t now_ms);

/* ==== etcd_range.c ==== */

/* Reserve a range (store.h): etcd_range.c says how. */
int etcd_range_reserve(struct store *st, const char *ns, const char *incarnation,
                       const char *request_id, uint64_t count, int64_t now_ms,
                       struct idmint__range *out);

int etcd_range_forget(struct store *st, const char *ns, const char *incarnation,
                      const char *before_request_id, uint64_t *forgotten);

/* ==== etcd_records.c ==== */

/*
 * One txn: every namespace of @p steps as it was read (its mod_revision
 * compared), the history key and one audit key, put together. The audit
 * key holds the steps' records and the summary: records in one key share
 * its revision, so keeping them in one key keeps them together in every
 * page of audit_list. A lost race reads everything again.
 */
int etcd_fence(struct store *st, const struct idmint__fence_step *steps, size_t n,
               const char *history_id, const char *actor, int64_t now_ms);

/*
 * Two reads: P/history and P/tip at one revision (the head: P/tip's
 * mod_revision and value), then P/tip at @p seq when it lies at or below
 * the head. Revisions at or below the head never change, so the second
 * read needs no snapshot of the first. A compacted seq is one the log no
 * longer holds (oldest_seq past it).
 */
int etcd_history_check(struct store *st, uint64_t seq, struct idmint__history_state *out);

/*
 * Records with create_revision > @p after_seq in create_revision order, in
 * pages: each record is created by the transaction of the change it
 * records, and a later commit always has a higher revision, so paging by
 * revision never skips one that commits late nor repeats one. The records
 * of one fence share a revision: they are never split, so a page may hold
 * fewer than @p limit, and more when one fence alone does not fit.
 */
int etcd_audit_list(struct store *st, int64_t after_seq, size_t limit, idmint_audit_entry **out,
                    size_t *n);

int etcd_grant_find(struct store *st, const char *ns, const struct idmint__grant_query *q,
                    idmint_grant_info **out, size_t *n);

/*
 * Grants by their age index. Batches and collision records of schema 4 end
 * with their lease, so there is nothing to do for them here; what is left
 * in the age index of batches is schema 3's, pruned as it was.
 */
int etcd_prune(struct store *st, int what, int64_t before_ms, size_t limit, uint64_t *pruned);

/* ==== etcd_batches.c ==== */

/*
 * The batch of (@p owner, @p key), or else one schema 3 saved under @p key
 * for the same owner (a retry that spans the upgrade is answered as
 * before; another owner's is not this caller's), read at one revision.
 */
int etcd_batch_get(struct store *st, const char *owner, const char *key, struct idmint__batch *out);

int etcd_batch_claim(struct store *st, const struct idmint__batch *b, struct idmint__batch *saved,
                     int *inserted);

int etcd_collision_add(struct store *st, const idmint_collision *c, const char *actor,
                       int64_t now_ms, int64_t keep_ms, idmint_collision *saved, int *inserted);

/* As audit_list: pages by create_revision, so none is skipped or repeated. */
int etcd_collision_list(struct store *st, int64_t after_seq, size_t limit, idmint_collision **out,
                        size_t *n);

#endif /* IDMINT_STORE_ETCD_INTERNAL_H */
