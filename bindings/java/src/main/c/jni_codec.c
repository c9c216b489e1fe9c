/* SPDX-License-Identifier: Apache-2.0 */
/* org.idmint.Native's calls that need no handle: Idmint, Layout, IdmintException. */
#include "jni_util.h"
#include "org_idmint_Native.h"

#include <idmint.h>
#include <stdlib.h>

JNIEXPORT jint JNICALL Java_org_idmint_Native_version(JNIEnv *env, jclass cls)
{
    (void)env;
    (void)cls;
    return (jint)idmint_version();
}

JNIEXPORT jstring JNICALL Java_org_idmint_Native_strerror(JNIEnv *env, jclass cls, jint code)
{
    (void)cls;
    return jni_string(env, idmint_strerror(code));
}

JNIEXPORT jlongArray JNICALL Java_org_idmint_Native_layoutDefault(JNIEnv *env, jclass cls)
{
    idmint_layout l;
    jlong v[6];

    (void)cls;
    idmint_layout_default(&l);
    v[0] = l.time_bits;
    v[1] = l.region_bits;
    v[2] = l.worker_bits;
    v[3] = l.sequence_bits;
    v[4] = l.unit_ms;
    v[5] = l.epoch_ms;
    return jni_longs(env, v, 6);
}

JNIEXPORT void JNICALL Java_org_idmint_Native_layoutValidate(JNIEnv *env, jclass cls, jint t,
                                                             jint r, jint w, jint s, jint unit_ms,
                                                             jlong epoch_ms)
{
    idmint_layout l;
    int rc;

    (void)cls;
    if (jni_layout(env, t, r, w, s, unit_ms, epoch_ms, &l) != 0)
        return;
    rc = idmint_layout_validate(&l);
    if (rc != 0)
        jni_throw_code(env, rc);
}

JNIEXPORT jlongArray JNICALL Java_org_idmint_Native_decode(JNIEnv *env, jclass cls, jint t, jint r,
                                                           jint w, jint s, jint unit_ms,
                                                           jlong epoch_ms, jlong id)
{
    idmint_layout l;
    idmint_decoded d;
    jlong v[5];
    int rc;

    (void)cls;
    if (jni_layout(env, t, r, w, s, unit_ms, epoch_ms, &l) != 0)
        return NULL;
    rc = idmint_decode(&l, (uint64_t)id, &d);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    v[0] = (jlong)d.time_units;
    v[1] = d.unix_ms;
    v[2] = d.region;
    v[3] = d.worker;
    v[4] = (jlong)d.sequence;
    return jni_longs(env, v, 5);
}

JNIEXPORT jlongArray JNICALL Java_org_idmint_Native_bounds(JNIEnv *env, jclass cls, jint t, jint r,
                                                           jint w, jint s, jint unit_ms,
                                                           jlong epoch_ms, jlong from_ms,
                                                           jlong to_ms)
{
    idmint_layout l;
    uint64_t lo, hi;
    jlong v[2];
    int rc;

    (void)cls;
    if (jni_layout(env, t, r, w, s, unit_ms, epoch_ms, &l) != 0)
        return NULL;
    rc = idmint_bounds(&l, from_ms, to_ms, &lo, &hi);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    v[0] = (jlong)lo;
    v[1] = (jlong)hi;
    return jni_longs(env, v, 2);
}

/* Two longs per UUID, as java.util.UUID(most, least) takes them: big-endian halves. */
static jlong be64(const uint8_t *b)
{
    uint64_t v = 0;
    int i;

    for (i = 0; i < 8; i++)
        v = (v << 8) | b[i];
    return (jlong)v;
}

JNIEXPORT void JNICALL Java_org_idmint_Native_uuid7(JNIEnv *env, jclass cls, jlongArray out, jint n)
{
    uint8_t(*u)[16];
    jlong *halves;
    int rc;
    jint i;

    (void)cls;
    if (n <= 0)
        return;
    /* Java checked 0 < n <= MAX_BATCH and that out holds 2n. */
    u = malloc((size_t)n * sizeof(*u));
    halves = malloc((size_t)n * 2 * sizeof(*halves));
    if (u == NULL || halves == NULL) {
        free(u);
        free(halves);
        (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                         "no memory for the batch of UUIDs");
        return;
    }
    rc = idmint_uuid7_n(u, (size_t)n);
    if (rc == 0) {
        for (i = 0; i < n; i++) {
            halves[2 * i] = be64(u[i]);
            halves[2 * i + 1] = be64(u[i] + 8);
        }
        (*env)->SetLongArrayRegion(env, out, 0, 2 * n, halves);
    } else {
        jni_throw_code(env, rc);
    }
    free(u);
    free(halves);
}
