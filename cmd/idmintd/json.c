/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The only file that calls jansson. struct json is jansson's json_t under
 * another name, so the rest of the daemon never includes <jansson.h>.
 * Integers past 2^53 never travel as JSON numbers: they are decimal strings.
 */
#include "json.h"

#include <jansson.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *J(const struct json *v)
{
    return (json_t *)(uintptr_t)v;
}

static struct json *W(json_t *v)
{
    return (struct json *)(void *)v;
}

struct json *json_parse_object(const char *text, size_t len, char *err, size_t err_size)
{
    json_error_t e;
    json_t *v;

    if (text == NULL || len == 0) {
        snprintf(err, err_size, "the body is empty; a JSON object was expected");
        return NULL;
    }
    v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (v == NULL) {
        snprintf(err, err_size, "the body is not JSON: %s (line %d, column %d)", e.text, e.line,
                 e.column);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        snprintf(err, err_size, "the body is JSON but not an object");
        return NULL;
    }
    return W(v);
}

void json_free(struct json *v)
{
    if (v != NULL)
        json_decref(J(v));
}

static json_t *member(const struct json *obj, const char *key)
{
    json_t *v = json_object_get(J(obj), key);

    return v == NULL || json_is_null(v) ? NULL : v;
}

int json_get_str(const struct json *obj, const char *key, const char **out)
{
    json_t *v = member(obj, key);

    if (v == NULL)
        return 0;
    if (!json_is_string(v))
        return -1;
    *out = json_string_value(v);
    return 1;
}

int json_get_int(const struct json *obj, const char *key, int64_t *out)
{
    json_t *v = member(obj, key);

    if (v == NULL)
        return 0;
    if (!json_is_integer(v))
        return -1;
    *out = (int64_t)json_integer_value(v);
    return 1;
}

const char *json_unknown_key(const struct json *obj, const char *const *known)
{
    const char *key;
    json_t *value;

    json_object_foreach(J(obj), key, value)
    {
        size_t i;

        (void)value;
        for (i = 0; known != NULL && known[i] != NULL; i++)
            if (strcmp(known[i], key) == 0)
                break;
        if (known == NULL || known[i] == NULL)
            return key;
    }
    return NULL;
}

struct json *json_new_object(void)
{
    return W(json_object());
}

struct json *json_new_array(void)
{
    return W(json_array());
}

void json_set_str(struct json *obj, const char *key, const char *value)
{
    if (obj != NULL)
        json_object_set_new(J(obj), key, json_string(value));
}

void json_set_int(struct json *obj, const char *key, int64_t value)
{
    if (obj != NULL)
        json_object_set_new(J(obj), key, json_integer((json_int_t)value));
}

void json_set_u64_str(struct json *obj, const char *key, uint64_t value)
{
    char buf[24];

    snprintf(buf, sizeof(buf), "%" PRIu64, value);
    json_set_str(obj, key, buf);
}

void json_set_bool(struct json *obj, const char *key, int value)
{
    if (obj != NULL)
        json_object_set_new(J(obj), key, json_boolean(value));
}

void json_set_null(struct json *obj, const char *key)
{
    if (obj != NULL)
        json_object_set_new(J(obj), key, json_null());
}

struct json *json_new_int(int64_t value)
{
    return W(json_integer((json_int_t)value));
}

struct json *json_new_str(const char *value)
{
    return W(json_string(value));
}

void json_set(struct json *obj, const char *key, struct json *child)
{
    if (obj != NULL && child != NULL)
        json_object_set_new(J(obj), key, J(child));
    else
        json_free(child);
}

void json_push(struct json *arr, struct json *child)
{
    if (arr != NULL && child != NULL)
        json_array_append_new(J(arr), J(child));
    else
        json_free(child);
}

char *json_dump(const struct json *v, size_t *len)
{
    char *text;

    if (v == NULL)
        return NULL;
    text = json_dumps(J(v), JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text != NULL)
        *len = strlen(text);
    return text;
}

char *json_error_body(const char *code, const char *message, size_t *len)
{
    json_t *err = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message);
    char *text;

    if (err == NULL)
        return NULL;
    text = json_dumps(err, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(err);
    if (text != NULL)
        *len = strlen(text);
    return text;
}
