/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bearer tokens and roles (docs/http-api.md). auth.c is the only file that
 * calls libcrypto: SHA-256 of the presented token, compared in constant time
 * against every configured hash.
 */
#ifndef IDMINTD_AUTH_H
#define IDMINTD_AUTH_H

#include <stddef.h>

/* Ordered: each role may do everything the roles below it may. */
enum auth_role {
    AUTH_NONE = 0,
    AUTH_MINT = 1,
    AUTH_GENERATOR = 2,
    AUTH_ADMIN = 3,
};

#define AUTH_HASH_BYTES 32

struct auth_token {
    char name[64]; /* the config key; names the caller in logs and audit */
    enum auth_role role;
    unsigned char hash[AUTH_HASH_BYTES]; /* SHA-256 of the token */
};

/* "mint", "generator", "admin" -> role; AUTH_NONE when unknown. */
enum auth_role auth_role_parse(const char *text, size_t len);
const char *auth_role_name(enum auth_role role);

/*
 * Parse "role:sha256:<64 hex>" into @p out (name left alone). 0, or -1 with
 * @p err set and @p out untouched.
 */
int auth_token_parse(const char *text, struct auth_token *out, char *err, size_t err_size);

/*
 * Match the Authorization header value @p header (may be NULL) against
 * @p tokens: "Bearer", one or more SP, the token. Leading and trailing SP
 * and HTAB of the value are not part of it (RFC 9110 §5.5); a token with
 * SP or HTAB inside never matches; otherwise the bytes are compared exactly
 * (as SHA-256). Returns the matching token, or NULL: *is_missing says
 * whether no bearer token was presented at all.
 */
const struct auth_token *auth_check(const struct auth_token *tokens, size_t n, const char *header,
                                    size_t header_len, int *is_missing);

/* SHA-256 of @p len bytes as 64 lowercase hex digits plus NUL. 0 or -1. */
int auth_sha256_hex(const void *data, size_t len, char out[65]);

#endif /* IDMINTD_AUTH_H */
