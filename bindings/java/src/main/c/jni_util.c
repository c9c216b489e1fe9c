/* SPDX-License-Identifier: Apache-2.0 */
#include "jni_util.h"

#include <idmint.h>
#include <stdarg.h>

/* IdmintException.of(int, String): cached at load, as errors come on the hot path. */
static jclass exception_class;
static jmethodID exception_of;

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
    JNIEnv *env;
    jclass local;

    (void)reserved;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_10) != JNI_OK)
        return JNI_ERR;
    local = (*env)->FindClass(env, "org/idmint/IdmintException");
    if (local == NULL)
        return JNI_ERR;
    exception_class = (*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    if (exception_class == NULL)
        return JNI_ERR;
    exception_of = (*env)->GetStaticMethodID(env, exception_class, "of",
                                             "(ILjava/lang/String;)Lorg/idmint/IdmintException;");
    if (exception_of == NULL)
        return JNI_ERR;
    return JNI_VERSION_10;
}

static void throw_with(JNIEnv *env, int code, const char *detail)
{
    jstring text = (*env)->NewStringUTF(env, detail);
    jthrowable ex;

    if (text == NULL)
        return; /* OutOfMemoryError pending */
    ex = (jthrowable)(*env)->CallStaticObjectMethod(env, exception_class, exception_of, (jint)code,
                                                    text);
    (*env)->DeleteLocalRef(env, text);
    if (ex != NULL && !(*env)->ExceptionCheck(env))
        (*env)->Throw(env, ex);
}

void jni_throw_code(JNIEnv *env, int code)
{
    throw_with(env, code, idmint_errmsg());
}

void jni_throw_invalid(JNIEnv *env, const char *detail)
{
    throw_with(env, IDMINT_EINVAL, detail);
}

int jni_text_get(JNIEnv *env, jstring s, jni_text *out)
{
    out->java = s;
    out->c = NULL;
    if (s == NULL)
        return 0;
    out->c = (*env)->GetStringUTFChars(env, s, NULL);
    return out->c != NULL ? 0 : -1;
}

void jni_text_release(JNIEnv *env, jni_text *t)
{
    if (t->c != NULL)
        (*env)->ReleaseStringUTFChars(env, t->java, t->c);
    t->c = NULL;
}

jstring jni_string(JNIEnv *env, const char *s)
{
    return (*env)->NewStringUTF(env, s);
}

jlongArray jni_longs(JNIEnv *env, const jlong *values, jsize n)
{
    jlongArray a = (*env)->NewLongArray(env, n);

    if (a != NULL)
        (*env)->SetLongArrayRegion(env, a, 0, n, values);
    return a;
}

jobject jni_call_factory(JNIEnv *env, const char *cls, const char *factory, const char *sig, ...)
{
    jclass c = (*env)->FindClass(env, cls);
    jmethodID m;
    jobject obj = NULL;
    va_list ap;

    if (c == NULL)
        return NULL;
    m = (*env)->GetStaticMethodID(env, c, factory, sig);
    if (m != NULL) {
        va_start(ap, sig);
        obj = (*env)->CallStaticObjectMethodV(env, c, m, ap);
        va_end(ap);
    }
    (*env)->DeleteLocalRef(env, c);
    return obj;
}

jobjectArray jni_objects(JNIEnv *env, const char *cls, jsize n)
{
    jclass c = (*env)->FindClass(env, cls);
    jobjectArray a;

    if (c == NULL)
        return NULL;
    a = (*env)->NewObjectArray(env, n, c, NULL);
    (*env)->DeleteLocalRef(env, c);
    return a;
}

int jni_layout(JNIEnv *env, jint t, jint r, jint w, jint s, jlong unit_ms, jlong epoch_ms,
               idmint_layout *out)
{
    const jint bits[4] = {t, r, w, s};
    int i;

    for (i = 0; i < 4; i++) {
        if (bits[i] < 0 || bits[i] > 63) {
            jni_throw_invalid(env, "layout bit counts must be 0..63");
            return -1;
        }
    }
    if (unit_ms < 1 || unit_ms > UINT32_MAX) {
        jni_throw_invalid(env, "layout unitMs must be 1..86400000");
        return -1;
    }
    out->time_bits = (uint8_t)t;
    out->region_bits = (uint8_t)r;
    out->worker_bits = (uint8_t)w;
    out->sequence_bits = (uint8_t)s;
    out->unit_ms = (uint32_t)unit_ms;
    out->epoch_ms = epoch_ms;
    return 0;
}
