/* SPDX-License-Identifier: Apache-2.0 */
/*
 * org.idmint.Native's minting calls, for org.idmint.Minter. A handle is
 * the idmint pointer in a jlong; Minter's use count guarantees it is live
 * for the whole of every call here. A call that may wait (next, fill)
 * waits in the library with no Java array pinned and no monitor held: IDs
 * land in C memory first and are copied into the Java array after.
 */
#include "jni_util.h"
#include "org_idmint_Native.h"

#include <idmint.h>
#include <stdlib.h>

/* A batch this small is minted on the stack; a larger one in a heap buffer. */
#define STACK_IDS 1024

static idmint *handle_of(jlong h)
{
    return (idmint *)(intptr_t)h;
}

JNIEXPORT jlong JNICALL Java_org_idmint_Native_open(JNIEnv *env, jclass cls, jstring authority,
                                                    jstring ns, jintArray opts, jstring token)
{
    jint v[10];
    jni_text url, name, tok;
    idmint_options o;
    idmint *m = NULL;
    int rc = -1;
    int i;

    (void)cls;
    idmint_options_init(&o);
    (*env)->GetIntArrayRegion(env, opts, 0, 10, v);
    if ((*env)->ExceptionCheck(env))
        return 0;
    {
        /* MinterOptions' order; -1 keeps the library's default. */
        uint32_t *dest[10] = {&o.region,          &o.lease_ms,      &o.renew_ms,
                              &o.max_borrow_ms,   &o.clock_wait_ms, &o.range_block,
                              &o.refill_percent,  &o.deadline_ms,   &o.range_target_ms,
                              &o.history_check_ms};
        for (i = 0; i < 10; i++)
            if (v[i] >= 0)
                *dest[i] = (uint32_t)v[i];
    }
    if (jni_text_get(env, authority, &url) != 0)
        return 0;
    if (jni_text_get(env, ns, &name) == 0) {
        if (jni_text_get(env, token, &tok) == 0) {
            o.token = tok.c;
            rc = idmint_open(&m, url.c, name.c, &o);
            if (rc != 0)
                jni_throw_code(env, rc);
            jni_text_release(env, &tok);
        }
        jni_text_release(env, &name);
    }
    jni_text_release(env, &url);
    return rc == 0 ? (jlong)(intptr_t)m : 0;
}

JNIEXPORT jlong JNICALL Java_org_idmint_Native_next(JNIEnv *env, jclass cls, jlong h)
{
    uint64_t id;
    int rc = idmint_next(handle_of(h), &id);

    (void)cls;
    if (rc != 0) {
        jni_throw_code(env, rc);
        return 0;
    }
    return (jlong)id;
}

JNIEXPORT void JNICALL Java_org_idmint_Native_fill(JNIEnv *env, jclass cls, jlong h, jlongArray dst,
                                                   jint off, jint len)
{
    uint64_t stack_ids[STACK_IDS];
    uint64_t *ids = stack_ids;
    int rc;

    (void)cls;
    /* Minter checked dst, off and 1 <= len <= MAX_BATCH. */
    if (len > STACK_IDS) {
        ids = malloc((size_t)len * sizeof(*ids));
        if (ids == NULL) {
            (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                             "no memory for the batch of IDs");
            return;
        }
    }
    rc = idmint_next_n(handle_of(h), ids, (size_t)len);
    if (rc == 0) /* uint64_t and jlong have one size and the IDs fit 63 bits */
        (*env)->SetLongArrayRegion(env, dst, off, len, (const jlong *)ids);
    else
        jni_throw_code(env, rc);
    if (ids != stack_ids)
        free(ids);
}

JNIEXPORT jlongArray JNICALL Java_org_idmint_Native_info(JNIEnv *env, jclass cls, jlong h,
                                                         jobjectArray incarnation)
{
    idmint_handle_info in;
    jlong v[19];
    jstring inc;
    int rc;

    (void)cls;
    idmint_handle_info_init(&in);
    rc = idmint_info(handle_of(h), &in);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    /* MinterInfo.fromNative's order. */
    v[0] = in.is_range;
    v[1] = in.region;
    v[2] = in.worker_id;
    v[3] = (jlong)in.generation;
    v[4] = (jlong)in.fence_found;
    v[5] = (jlong)in.lease_until;
    v[6] = (jlong)in.last_time;
    v[7] = in.layout.time_bits;
    v[8] = in.layout.region_bits;
    v[9] = in.layout.worker_bits;
    v[10] = in.layout.sequence_bits;
    v[11] = in.layout.unit_ms;
    v[12] = in.layout.epoch_ms;
    v[13] = (jlong)in.range_left;
    v[14] = (jlong)in.sequence_waits;
    v[15] = (jlong)in.range_block;
    v[16] = (jlong)in.range_rate;
    v[17] = in.outage_budget_ms > INT64_MAX ? -1 : (jlong)in.outage_budget_ms;
    v[18] = (jlong)in.range_reservations;
    inc = jni_string(env, in.incarnation);
    if (inc == NULL)
        return NULL;
    (*env)->SetObjectArrayElement(env, incarnation, 0, inc);
    return jni_longs(env, v, 19);
}

JNIEXPORT jint JNICALL Java_org_idmint_Native_leaseStatus(JNIEnv *env, jclass cls, jlong h)
{
    (void)env;
    (void)cls;
    return idmint_lease_status(handle_of(h));
}

JNIEXPORT void JNICALL Java_org_idmint_Native_close(JNIEnv *env, jclass cls, jlong h)
{
    (void)env;
    (void)cls;
    idmint_close(handle_of(h));
}
