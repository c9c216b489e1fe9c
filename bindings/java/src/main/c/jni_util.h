/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every JNI entry point of the binding shares: raising the library's
 * errors as Java exceptions, and borrowing Java strings as C strings.
 * Every function here is called on a thread the JVM attached, with the
 * JNIEnv of that thread; none keeps a local reference past its caller's
 * return.
 */
#ifndef IDMINT_JNI_UTIL_H
#define IDMINT_JNI_UTIL_H

#include <jni.h>

/*
 * Throw the exception for library code @p code (negative), with
 * idmint_errmsg() of this thread as its detail: the binding's
 * IdmintException.of() picks the subclass. Call it right after the failed
 * library call, before any other idmint call on this thread.
 */
void jni_throw_code(JNIEnv *env, int code);

/* Throw IdmintException.InvalidArgument with @p detail (the binding's own check). */
void jni_throw_invalid(JNIEnv *env, const char *detail);

/* A Java string borrowed as modified UTF-8 (the library rejects what is not ASCII). */
typedef struct jni_text {
    jstring java;
    const char *c; /* NULL when java is NULL, or when it could not be had */
} jni_text;

/*
 * Borrow @p s. @return 0, or -1 with an OutOfMemoryError pending (the
 * caller returns at once). A NULL @p s gives c == NULL and 0.
 */
int jni_text_get(JNIEnv *env, jstring s, jni_text *out);

/* Give back what jni_text_get() borrowed. */
void jni_text_release(JNIEnv *env, jni_text *t);

/* A new Java string of @p s, or NULL with an exception pending. */
jstring jni_string(JNIEnv *env, const char *s);

/*
 * A new long[] of @p n from @p values, or NULL with an exception pending.
 */
jlongArray jni_longs(JNIEnv *env, const jlong *values, jsize n);

/*
 * Call static @p factory of class @p cls (signature @p sig, returning an
 * object) with the arguments that follow. @return the object, or NULL with
 * an exception pending. The class and method are looked up on each call:
 * admin calls are rare, and no stale cache can outlive a class unload.
 */
jobject jni_call_factory(JNIEnv *env, const char *cls, const char *factory, const char *sig, ...);

/* An array of @p n objects of class @p cls, or NULL with an exception pending. */
jobjectArray jni_objects(JNIEnv *env, const char *cls, jsize n);

/*
 * A layout from Java's ints, checked for what the C struct cannot hold (a
 * bit count outside 0..255, a negative unit) so that no value is cut short
 * on its way; the library judges the rest. @return 0, or -1 with
 * IdmintException.InvalidArgument pending.
 */
struct idmint_layout;
int jni_layout(JNIEnv *env, jint t, jint r, jint w, jint s, jlong unit_ms, jlong epoch_ms,
               struct idmint_layout *out);

#endif
