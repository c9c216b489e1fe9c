/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON seam: json.c is the only file that calls jansson. Request bodies are
 * parsed into a tree read with typed getters; the less hot responses are
 * built as a tree and dumped. GET /v1/ids writes its body by hand instead.
 */
#ifndef IDMINTD_JSON_H
#define IDMINTD_JSON_H

#include <stddef.h>
#include <stdint.h>

struct json; /* one value: object, array, string, number, true/false, null */

/* Parse @p len bytes as one JSON object. NULL on a syntax error or another
 * type, with @p err set. Free with json_free. */
struct json *json_parse_object(const char *text, size_t len, char *err, size_t err_size);
void json_free(struct json *v); /* NULL-safe; frees the whole tree */

/* Getters: 1 when present with the right type, 0 when absent (or null),
 * -1 when present with another type. Outputs written only on 1. */
int json_get_str(const struct json *obj, const char *key, const char **out);
int json_get_int(const struct json *obj, const char *key, int64_t *out);
/* Keys of @p obj not in the NULL-terminated @p known list (NULL: none): the first, or NULL. */
const char *json_unknown_key(const struct json *obj, const char *const *known);

/* Builders. Each returns NULL only when out of memory; setters ignore a NULL
 * object so that a chain of calls needs one check at the end. */
struct json *json_new_object(void);
struct json *json_new_array(void);
void json_set_str(struct json *obj, const char *key, const char *value);
void json_set_int(struct json *obj, const char *key, int64_t value);
void json_set_u64_str(struct json *obj, const char *key, uint64_t value); /* decimal string */
void json_set_bool(struct json *obj, const char *key, int value);
void json_set_null(struct json *obj, const char *key);
struct json *json_new_int(int64_t value);                             /* an array element */
struct json *json_new_str(const char *value);                         /* an array element */
void json_set(struct json *obj, const char *key, struct json *child); /* takes child */
void json_push(struct json *arr, struct json *child);                 /* takes child */
/* Compact text, malloc'd (free with free()); NULL when out of memory. */
char *json_dump(const struct json *v, size_t *len);

/* {"error":{"code":…,"message":…}} as malloc'd text; NULL when out of memory. */
char *json_error_body(const char *code, const char *message, size_t *len);

#endif /* IDMINTD_JSON_H */
