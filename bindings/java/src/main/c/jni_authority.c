/* SPDX-License-Identifier: Apache-2.0 */
/*
 * org.idmint.Native's administration calls, for org.idmint.Authority,
 * which serialises them (the library serves one thread at a time per
 * authority) and keeps the pointer live for each call. Rows come back as
 * the binding's records, built by their static fromNative factories.
 */
#include "jni_util.h"
#include "org_idmint_Native.h"

#include <idmint.h>
#include <stdio.h>

static idmint_authority *authority_of(jlong h)
{
    return (idmint_authority *)(intptr_t)h;
}

JNIEXPORT jlong JNICALL Java_org_idmint_Native_authorityOpen(JNIEnv *env, jclass cls, jstring url,
                                                             jint region, jboolean existing_only)
{
    idmint_authority *a = NULL;
    jni_text u;
    int rc;

    (void)cls;
    if (region < 0) {
        jni_throw_invalid(env, "region must be 0..65535");
        return 0;
    }
    if (jni_text_get(env, url, &u) != 0)
        return 0;
    rc = existing_only ? idmint_authority_open_existing(&a, u.c, (uint32_t)region)
                       : idmint_authority_open(&a, u.c, (uint32_t)region);
    jni_text_release(env, &u);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return 0;
    }
    return (jlong)(intptr_t)a;
}

JNIEXPORT void JNICALL Java_org_idmint_Native_authorityClose(JNIEnv *env, jclass cls, jlong h)
{
    (void)env;
    (void)cls;
    idmint_authority_close(authority_of(h));
}

JNIEXPORT void JNICALL Java_org_idmint_Native_nsCreate(JNIEnv *env, jclass cls, jlong h,
                                                       jstring name, jint kind,
                                                       jintArray layout_bits, jlong unit_ms,
                                                       jlong epoch_ms, jlong start, jlong max,
                                                       jint block, jint max_block)
{
    idmint_ns_info info;
    jni_text n;
    int rc;

    (void)cls;
    idmint_ns_info_init(&info,
                        kind == IDMINT_KIND_RANGE ? IDMINT_KIND_RANGE : IDMINT_KIND_SNOWFLAKE);
    if (kind == IDMINT_KIND_SNOWFLAKE) {
        jint bits[4];

        (*env)->GetIntArrayRegion(env, layout_bits, 0, 4, bits);
        if ((*env)->ExceptionCheck(env) || jni_layout(env, bits[0], bits[1], bits[2], bits[3],
                                                      unit_ms, epoch_ms, &info.layout) != 0)
            return;
    } else {
        /* 0 keeps the library's default; a negative value is no count at all. */
        if (start < 0 || max < 0 || block < 0 || max_block < 0) {
            jni_throw_invalid(env, "start, max, block and maxBlock must not be negative");
            return;
        }
        if (start > 0)
            info.next_value = (uint64_t)start;
        if (max > 0)
            info.max_value = (uint64_t)max;
        if (block > 0)
            info.block = (uint32_t)block;
        if (max_block > 0)
            info.max_block = (uint32_t)max_block;
    }
    if (jni_text_get(env, name, &n) != 0)
        return;
    if (snprintf(info.name, sizeof(info.name), "%s", n.c) >= (int)sizeof(info.name)) {
        jni_text_release(env, &n);
        jni_throw_invalid(env, "namespace name is longer than 63 characters");
        return;
    }
    jni_text_release(env, &n);
    rc = idmint_ns_create(authority_of(h), &info);
    if (rc != 0)
        jni_throw_code(env, rc);
}

static jobject namespace_object(JNIEnv *env, const idmint_ns_info *in)
{
    jlong v[14] = {in->kind,
                   in->is_disabled,
                   in->created_ms,
                   in->layout.time_bits,
                   in->layout.region_bits,
                   in->layout.worker_bits,
                   in->layout.sequence_bits,
                   in->layout.unit_ms,
                   in->layout.epoch_ms,
                   (jlong)in->next_value,
                   (jlong)in->max_value,
                   in->block,
                   in->max_block,
                   (jlong)in->floor};
    jstring name = jni_string(env, in->name);
    jstring origin = name != NULL ? jni_string(env, in->origin) : NULL;
    jlongArray numbers = origin != NULL ? jni_longs(env, v, 14) : NULL;
    jobject ns = NULL;

    if (numbers != NULL)
        ns = jni_call_factory(env, "org/idmint/Namespace", "fromNative",
                              "(Ljava/lang/String;Ljava/lang/String;[J)Lorg/idmint/Namespace;",
                              name, origin, numbers);
    (*env)->DeleteLocalRef(env, name);
    (*env)->DeleteLocalRef(env, origin);
    (*env)->DeleteLocalRef(env, numbers);
    return ns;
}

JNIEXPORT jobject JNICALL Java_org_idmint_Native_nsGet(JNIEnv *env, jclass cls, jlong h,
                                                       jstring name)
{
    idmint_ns_info info;
    jni_text n;
    int rc;

    (void)cls;
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    if (jni_text_get(env, name, &n) != 0)
        return NULL;
    rc = idmint_ns_get(authority_of(h), n.c, &info);
    jni_text_release(env, &n);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    return namespace_object(env, &info);
}

JNIEXPORT jobjectArray JNICALL Java_org_idmint_Native_nsList(JNIEnv *env, jclass cls, jlong h)
{
    idmint_ns_info *list = NULL;
    jobjectArray out;
    size_t n = 0, i;
    int rc;

    (void)cls;
    rc = idmint_ns_list(authority_of(h), &list, &n);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    out = jni_objects(env, "org/idmint/Namespace", (jsize)n);
    for (i = 0; out != NULL && i < n; i++) {
        jobject ns = namespace_object(env, idmint_ns_info_at(list, i));
        if (ns == NULL) {
            out = NULL;
            break;
        }
        (*env)->SetObjectArrayElement(env, out, (jsize)i, ns);
        (*env)->DeleteLocalRef(env, ns);
    }
    idmint_free(list);
    return out;
}

JNIEXPORT void JNICALL Java_org_idmint_Native_nsSetDisabled(JNIEnv *env, jclass cls, jlong h,
                                                            jstring name, jboolean disabled)
{
    jni_text n;
    int rc;

    (void)cls;
    if (jni_text_get(env, name, &n) != 0)
        return;
    rc = idmint_ns_set_disabled(authority_of(h), n.c, disabled ? 1 : 0);
    jni_text_release(env, &n);
    if (rc != 0)
        jni_throw_code(env, rc);
}

JNIEXPORT jobjectArray JNICALL Java_org_idmint_Native_workers(JNIEnv *env, jclass cls, jlong h,
                                                              jstring ns)
{
    idmint_worker_info *list = NULL;
    jobjectArray out;
    size_t n = 0, i;
    jni_text name;
    int rc;

    (void)cls;
    if (jni_text_get(env, ns, &name) != 0)
        return NULL;
    rc = idmint_workers_list(authority_of(h), name.c, &list, &n);
    jni_text_release(env, &name);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    out = jni_objects(env, "org/idmint/Worker", (jsize)n);
    for (i = 0; out != NULL && i < n; i++) {
        const idmint_worker_info *w = idmint_worker_info_at(list, i);
        jlong v[4] = {w->region, w->worker_id, (jlong)w->generation, (jlong)w->lease_until};
        jstring holder = jni_string(env, w->holder);
        jlongArray numbers = holder != NULL ? jni_longs(env, v, 4) : NULL;
        jobject row =
            numbers != NULL
                ? jni_call_factory(env, "org/idmint/Worker", "fromNative",
                                   "(Ljava/lang/String;[J)Lorg/idmint/Worker;", holder, numbers)
                : NULL;
        if (row == NULL) {
            out = NULL;
            break;
        }
        (*env)->SetObjectArrayElement(env, out, (jsize)i, row);
        (*env)->DeleteLocalRef(env, row);
        (*env)->DeleteLocalRef(env, holder);
        (*env)->DeleteLocalRef(env, numbers);
    }
    idmint_free(list);
    return out;
}

JNIEXPORT void JNICALL Java_org_idmint_Native_forceRelease(JNIEnv *env, jclass cls, jlong h,
                                                           jstring ns, jint region, jint worker_id)
{
    jni_text name;
    int rc;

    (void)cls;
    if (region < 0 || worker_id < 0) {
        jni_throw_invalid(env, "region and workerId must not be negative");
        return;
    }
    if (jni_text_get(env, ns, &name) != 0)
        return;
    rc =
        idmint_worker_force_release(authority_of(h), name.c, (uint32_t)region, (uint32_t)worker_id);
    jni_text_release(env, &name);
    if (rc != 0)
        jni_throw_code(env, rc);
}

JNIEXPORT jobjectArray JNICALL Java_org_idmint_Native_audit(JNIEnv *env, jclass cls, jlong h,
                                                            jlong after_seq, jint limit)
{
    idmint_audit_entry *list = NULL;
    jobjectArray out;
    size_t n = 0, i;
    int rc;

    (void)cls;
    rc = idmint_audit_list(authority_of(h), after_seq, (size_t)limit, &list, &n);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    out = jni_objects(env, "org/idmint/AuditEntry", (jsize)n);
    for (i = 0; out != NULL && i < n; i++) {
        const idmint_audit_entry *e = idmint_audit_entry_at(list, i);
        jlong v[2] = {e->seq, e->at_ms};
        jstring s[4] = {jni_string(env, e->actor), jni_string(env, e->action),
                        jni_string(env, e->ns), jni_string(env, e->detail)};
        jlongArray numbers = jni_longs(env, v, 2);
        jobject row = NULL;
        int k;

        if (!(*env)->ExceptionCheck(env))
            row = jni_call_factory(env, "org/idmint/AuditEntry", "fromNative",
                                   "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;"
                                   "Ljava/lang/String;[J)Lorg/idmint/AuditEntry;",
                                   s[0], s[1], s[2], s[3], numbers);
        for (k = 0; k < 4; k++)
            (*env)->DeleteLocalRef(env, s[k]);
        (*env)->DeleteLocalRef(env, numbers);
        if (row == NULL) {
            out = NULL;
            break;
        }
        (*env)->SetObjectArrayElement(env, out, (jsize)i, row);
        (*env)->DeleteLocalRef(env, row);
    }
    idmint_free(list);
    return out;
}

JNIEXPORT void JNICALL Java_org_idmint_Native_backup(JNIEnv *env, jclass cls, jlong h, jstring dest)
{
    jni_text d;
    int rc;

    (void)cls;
    if (jni_text_get(env, dest, &d) != 0)
        return;
    rc = idmint_authority_backup(authority_of(h), d.c);
    jni_text_release(env, &d);
    if (rc != 0)
        jni_throw_code(env, rc);
}

static jobject grant_object(JNIEnv *env, const idmint_grant_info *g)
{
    char text[512];
    jlong v[9] = {g->kind,        g->region, g->worker_id,  (jlong)g->generation, (jlong)g->first,
                  (jlong)g->last, g->pid,    g->granted_ms, g->updated_ms};
    jobjectArray s = jni_objects(env, "java/lang/String", 5);
    const char *c[5] = {g->holder, g->host, g->program, g->token, text};
    jlongArray numbers;
    jobject row = NULL;
    int k;

    if (s == NULL)
        return NULL;
    idmint_grant_format(g, text, sizeof(text));
    for (k = 0; k < 5; k++) {
        jstring one = jni_string(env, c[k]);
        if (one == NULL)
            return NULL;
        (*env)->SetObjectArrayElement(env, s, k, one);
        (*env)->DeleteLocalRef(env, one);
    }
    numbers = jni_longs(env, v, 9);
    if (numbers != NULL)
        row = jni_call_factory(env, "org/idmint/Grant", "fromNative",
                               "([Ljava/lang/String;[J)Lorg/idmint/Grant;", s, numbers);
    (*env)->DeleteLocalRef(env, s);
    (*env)->DeleteLocalRef(env, numbers);
    return row;
}

JNIEXPORT jobjectArray JNICALL Java_org_idmint_Native_trace(JNIEnv *env, jclass cls, jlong h,
                                                            jstring ns, jlong id)
{
    idmint_grant_info *list = NULL;
    jobjectArray out;
    size_t n = 0, i;
    jni_text name;
    int rc;

    (void)cls;
    if (jni_text_get(env, ns, &name) != 0)
        return NULL;
    rc = idmint_trace(authority_of(h), name.c, (uint64_t)id, &list, &n);
    jni_text_release(env, &name);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    out = jni_objects(env, "org/idmint/Grant", (jsize)n);
    for (i = 0; out != NULL && i < n; i++) {
        jobject row = grant_object(env, idmint_grant_info_at(list, i));
        if (row == NULL) {
            out = NULL;
            break;
        }
        (*env)->SetObjectArrayElement(env, out, (jsize)i, row);
        (*env)->DeleteLocalRef(env, row);
    }
    idmint_free(list);
    return out;
}

JNIEXPORT jlongArray JNICALL Java_org_idmint_Native_nsBounds(JNIEnv *env, jclass cls, jlong h,
                                                             jstring ns, jlong from_ms, jlong to_ms)
{
    idmint_ns_info info;
    uint64_t lo, hi;
    jlong v[2];
    jni_text name;
    int rc;

    (void)cls;
    idmint_ns_info_init(&info, IDMINT_KIND_SNOWFLAKE);
    if (jni_text_get(env, ns, &name) != 0)
        return NULL;
    rc = idmint_ns_get(authority_of(h), name.c, &info);
    jni_text_release(env, &name);
    if (rc == 0)
        rc = idmint_ns_bounds(&info, from_ms, to_ms, &lo, &hi);
    if (rc != 0) {
        jni_throw_code(env, rc);
        return NULL;
    }
    v[0] = (jlong)lo;
    v[1] = (jlong)hi;
    return jni_longs(env, v, 2);
}
