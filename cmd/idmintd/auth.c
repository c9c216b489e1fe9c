/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Token hashing and matching; the only file that calls libcrypto. Every
 * configured hash is compared, whatever matched before, so the time taken
 * says nothing about which token (if any) was close.
 */
#include "auth.h"

#include "idmint_service.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define BEARER_PREFIX "bearer "

enum auth_role auth_role_parse(const char *text, size_t len)
{
    if (len == 4 && memcmp(text, "mint", 4) == 0)
        return AUTH_MINT;
    if (len == 9 && memcmp(text, "generator", 9) == 0)
        return AUTH_GENERATOR;
    if (len == 5 && memcmp(text, "admin", 5) == 0)
        return AUTH_ADMIN;
    return AUTH_NONE;
}

const char *auth_role_name(enum auth_role role)
{
    switch (role) {
    case AUTH_MINT:
        return "mint";
    case AUTH_GENERATOR:
        return "generator";
    case AUTH_ADMIN:
        return "admin";
    default:
        return "none";
    }
}

int auth_token_parse(const char *text, struct auth_token *out, char *err, size_t err_size)
{
    const char *colon = strchr(text, ':');
    unsigned char hash[AUTH_HASH_BYTES];
    enum auth_role role;
    size_t i;

    if (colon == NULL) {
        snprintf(err, err_size, "token must be ROLE:sha256:HEX (see idmintd --hash-token)");
        return -1;
    }
    role = auth_role_parse(text, (size_t)(colon - text));
    if (role == AUTH_NONE) {
        snprintf(err, err_size, "unknown role '%.*s' (mint, generator or admin)",
                 (int)(colon - text), text);
        return -1;
    }
    if (strncmp(colon + 1, "sha256:", 7) != 0) {
        snprintf(err, err_size, "token hash must start with sha256:");
        return -1;
    }
    text = colon + 8;
    if (strlen(text) != 2 * AUTH_HASH_BYTES) {
        snprintf(err, err_size, "sha256 hash must be 64 hex digits, got %zu characters",
                 strlen(text));
        return -1;
    }
    for (i = 0; i < AUTH_HASH_BYTES; i++) {
        int hi = idmint__hex_value(text[2 * i]), lo = idmint__hex_value(text[2 * i + 1]);

        if (hi < 0 || lo < 0) {
            snprintf(err, err_size, "sha256 hash has a non-hex character");
            return -1;
        }
        hash[i] = (unsigned char)(hi * 16 + lo);
    }
    memcpy(out->hash, hash, sizeof(hash));
    out->role = role;
    return 0;
}

static int sha256(const void *data, size_t len, unsigned char out[AUTH_HASH_BYTES])
{
    unsigned int out_len = 0;

    if (EVP_Digest(data, len, out, &out_len, EVP_sha256(), NULL) != 1 || out_len != AUTH_HASH_BYTES)
        return -1;
    return 0;
}

int auth_sha256_hex(const void *data, size_t len, char out[65])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char h[AUTH_HASH_BYTES];
    size_t i;

    if (sha256(data, len, h) != 0)
        return -1;
    for (i = 0; i < AUTH_HASH_BYTES; i++) {
        out[2 * i] = digits[h[i] >> 4];
        out[2 * i + 1] = digits[h[i] & 15];
    }
    out[64] = '\0';
    return 0;
}

const struct auth_token *auth_check(const struct auth_token *tokens, size_t n, const char *header,
                                    size_t header_len, int *is_missing)
{
    const size_t prefix_len = sizeof(BEARER_PREFIX) - 1;
    const struct auth_token *found = NULL;
    unsigned char h[AUTH_HASH_BYTES];
    size_t i;

    *is_missing = 1;
    if (header == NULL)
        return NULL;
    /* RFC 9110 §5.5: whitespace (OWS: SP, HTAB) around a field value is
     * not part of it. The parser may or may not have removed it already. */
    while (header_len > 0 && (header[0] == ' ' || header[0] == '\t')) {
        header++;
        header_len--;
    }
    while (header_len > 0 && (header[header_len - 1] == ' ' || header[header_len - 1] == '\t'))
        header_len--;
    if (header_len <= prefix_len || strncasecmp(header, BEARER_PREFIX, prefix_len) != 0)
        return NULL;
    /* RFC 9110 §11.4: credentials = auth-scheme [ 1*SP token68 ]. */
    header += prefix_len;
    header_len -= prefix_len;
    while (header_len > 0 && header[0] == ' ') {
        header++;
        header_len--;
    }
    if (header_len == 0)
        return NULL;
    *is_missing = 0;
    /* Whitespace inside is never part of a token: not hashed, refused. */
    if (memchr(header, ' ', header_len) != NULL || memchr(header, '\t', header_len) != NULL)
        return NULL;
    if (sha256(header, header_len, h) != 0)
        return NULL;
    for (i = 0; i < n; i++) {
        /* No early exit: every hash is compared. */
        if (CRYPTO_memcmp(h, tokens[i].hash, AUTH_HASH_BYTES) == 0 && found == NULL)
            found = &tokens[i];
    }
    return found;
}
