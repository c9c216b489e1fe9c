/* SPDX-License-Identifier: Apache-2.0 */
/* The SQL functions (idmint--0.2.0.sql). */
#include "postgres.h"

#include <string.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "errors.h"
#include "idmint.h"
#include "settings.h"
#include "supply.h"

PG_FUNCTION_INFO_V1(idmint_pg_next);
PG_FUNCTION_INFO_V1(idmint_pg_next_n);
PG_FUNCTION_INFO_V1(idmint_pg_uuid7);
PG_FUNCTION_INFO_V1(idmint_pg_decode);
PG_FUNCTION_INFO_V1(idmint_pg_bounds);
PG_FUNCTION_INFO_V1(idmint_pg_status);

/** The most IDs one idmint_next_n() call returns. */
#define NEXT_N_MAX 1000000

/* The namespace argument @p arg, checked: never NULL, a name the server may mint. */
static void namespace_arg(FunctionCallInfo fcinfo, int arg, char *out)
{
    text *t;
    size_t len;
    if (PG_ARGISNULL(arg)) {
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("idmint: the namespace must not be NULL")));
    }
    t = PG_GETARG_TEXT_PP(arg);
    len = VARSIZE_ANY_EXHDR(t);
    if (len == 0 || len >= SUPPLY_NAME_MAX || memchr(VARDATA_ANY(t), '\0', len) != NULL) {
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("idmint: a namespace name is 1 to %d characters: [a-z0-9][a-z0-9_.-]*",
                        SUPPLY_NAME_MAX - 1)));
    }
    memcpy(out, VARDATA_ANY(t), len);
    out[len] = '\0';
    if (!idmint_pg_namespace_allowed(out)) {
        ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
                        errmsg("idmint: namespace \"%s\" is not in idmint.namespaces", out)));
    }
}

static int64 id_datum(uint64_t id)
{
    /* IDs are positive int64 (the library never sets the sign bit). */
    return (int64)id;
}

Datum idmint_pg_next(PG_FUNCTION_ARGS)
{
    char ns[SUPPLY_NAME_MAX];
    uint64_t id;
    namespace_arg(fcinfo, 0, ns);
    supply_take(ns, &id, 1, idmint_pg_wait_ms, idmint_pg_max_age_ms);
    PG_RETURN_INT64(id_datum(id));
}

Datum idmint_pg_next_n(PG_FUNCTION_ARGS)
{
    char ns[SUPPLY_NAME_MAX];
    int32 n;
    uint64_t *ids;
    ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;

    namespace_arg(fcinfo, 0, ns);
    if (PG_ARGISNULL(1)) {
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("idmint: the count must not be NULL")));
    }
    n = PG_GETARG_INT32(1);
    if (n < 1 || n > NEXT_N_MAX) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("idmint: count %d is out of range: 1 to %d", n, NEXT_N_MAX)));
    }
    InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
    ids = palloc(sizeof *ids * (Size)n);
    /* The ring holds SUPPLY_RING at most: take the count in pieces. */
    for (int32 done = 0; done < n;) {
        uint32_t piece = (uint32_t)(n - done) < SUPPLY_RING ? (uint32_t)(n - done) : SUPPLY_RING;
        supply_take(ns, ids + done, piece, idmint_pg_wait_ms, idmint_pg_max_age_ms);
        done += (int32)piece;
    }
    for (int32 i = 0; i < n; i++) {
        Datum value = Int64GetDatum(id_datum(ids[i]));
        bool isnull = false;
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
    }
    pfree(ids);
    return (Datum)0;
}

Datum idmint_pg_uuid7(PG_FUNCTION_ARGS)
{
    pg_uuid_t *uuid = palloc(sizeof *uuid);
    int rc;
    (void)fcinfo;
    rc = idmint_uuid7(uuid->data);
    if (rc != 0) {
        idmint_pg_raise(rc);
    }
    PG_RETURN_UUID_P(uuid);
}

static int64_t timestamptz_to_unix_ms(TimestampTz ts, bool round_up, const char *what)
{
    int64_t ms;
    if (TIMESTAMP_NOT_FINITE(ts)) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("idmint: %s must be a finite time", what)));
    }
    ms = ts / 1000;
    if (ts % 1000 != 0 && (ts < 0) != round_up) {
        ms += round_up ? 1 : -1;
    }
    return ms + PG_EPOCH_UNIX_MS;
}

static void definition_arg(FunctionCallInfo fcinfo, idmint_ns_info *info)
{
    char ns[SUPPLY_NAME_MAX];
    namespace_arg(fcinfo, 0, ns);
    idmint_ns_info_init(info, IDMINT_KIND_SNOWFLAKE);
    supply_definition(ns, info, idmint_pg_wait_ms);
    if (info->kind == IDMINT_KIND_RANGE) {
        ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
                        errmsg("idmint: namespace \"%s\" is a range namespace: its IDs carry no "
                               "time, region or worker",
                               ns)));
    }
}

Datum idmint_pg_decode(PG_FUNCTION_ARGS)
{
    idmint_ns_info info;
    idmint_decoded d;
    int64 id;
    TupleDesc desc;
    Datum values[4];
    bool nulls[4] = {false, false, false, false};
    int rc;

    if (PG_ARGISNULL(1)) {
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("idmint: the ID must not be NULL")));
    }
    definition_arg(fcinfo, &info);
    id = PG_GETARG_INT64(1);
    if (id <= 0) {
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("idmint: ID %lld is not positive", (long long)id)));
    }
    rc = idmint_decode(&info.layout, (uint64_t)id, &d);
    if (rc != 0) {
        idmint_pg_raise(rc);
    }
    if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE) {
        elog(ERROR, "idmint_decode: the result type is not a row");
    }
    values[0] = TimestampTzGetDatum(((TimestampTz)d.unix_ms - PG_EPOCH_UNIX_MS) * 1000);
    values[1] = Int32GetDatum((int32)d.region);
    values[2] = Int32GetDatum((int32)d.worker);
    values[3] = Int64GetDatum((int64)d.sequence);
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

Datum idmint_pg_bounds(PG_FUNCTION_ARGS)
{
    idmint_ns_info info;
    int64_t from_ms, to_ms;
    uint64_t lo, hi;
    TupleDesc desc;
    Datum values[2];
    bool nulls[2] = {false, false};
    int rc;

    if (PG_ARGISNULL(1) || PG_ARGISNULL(2)) {
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
                        errmsg("idmint: the window's ends must not be NULL")));
    }
    definition_arg(fcinfo, &info);
    /* Whole ms: a window that ends inside a ms takes in that ms. */
    from_ms = timestamptz_to_unix_ms(PG_GETARG_TIMESTAMPTZ(1), false, "the window's start");
    to_ms = timestamptz_to_unix_ms(PG_GETARG_TIMESTAMPTZ(2), true, "the window's end");
    rc = idmint_ns_bounds(&info, from_ms, to_ms, &lo, &hi);
    if (rc != 0) {
        idmint_pg_raise(rc);
    }
    if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE) {
        elog(ERROR, "idmint_bounds: the result type is not a row");
    }
    values[0] = Int64GetDatum(id_datum(lo));
    values[1] = Int64GetDatum(id_datum(hi));
    PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

Datum idmint_pg_status(PG_FUNCTION_ARGS)
{
    ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
    supply_status st;

    if (!supply_attached()) {
        idmint_pg_raise_not_loaded();
    }
    InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
    for (int i = 0; i < supply_slot_count(); i++) {
        Datum values[11];
        bool nulls[11] = {false};
        if (!supply_status_at(i, &st)) {
            continue;
        }
        values[0] = CStringGetTextDatum(st.name);
        values[1] = CStringGetTextDatum(st.is_range ? "range" : "snowflake");
        values[2] = BoolGetDatum(st.is_open);
        values[3] = Int32GetDatum((int32)st.worker_id);
        nulls[3] = !st.is_open || st.is_range;
        values[4] = Int64GetDatum((int64)st.generation);
        nulls[4] = nulls[3];
        values[5] = Int32GetDatum((int32)st.buffered);
        values[6] = Int64GetDatum((int64)st.handed_out);
        values[7] = Int64GetDatum((int64)st.discarded);
        values[8] = Int64GetDatum((int64)st.handles);
        values[9] = CStringGetTextDatum(st.last_message);
        nulls[9] = st.last_error == 0;
        values[10] = Int32GetDatum((int32)st.leases);
        nulls[10] = nulls[3];
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    return (Datum)0;
}
