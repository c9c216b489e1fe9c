/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS credentials for the listener (http_tls.h): build an OpenSSL server
 * context from the certificate and key files, and swap it on reload. The
 * handshake itself and the bytes after it are h2o's (http.c); this file only
 * decides what a new connection is offered. It does not do client
 * certificates, OCSP stapling or session-ticket key sharing across daemons.
 */
#define H2O_USE_LIBUV 0 /* the evloop flavour of the library */

#include "http_tls.h"
#include "secret_file.h"

#include <h2o.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TLS_PATH_MAX 1024

struct http_tls {
    pthread_mutex_t mu; /* guards ctx: loops acquire while SIGHUP swaps */
    SSL_CTX *ctx;       /* the one new connections get; never NULL */
    char cert_path[TLS_PATH_MAX];
    char key_path[TLS_PATH_MAX];
};

/* The daemon speaks HTTP/1.1 only (http.c hands TLS sockets to h2o's
 * HTTP/1 side), so that is the one protocol it may agree to. */
static char tls_alpn_http11[] = "http/1.1"; /* h2o_iovec_t holds a char * */
static const h2o_iovec_t tls_alpn[] = {{tls_alpn_http11, sizeof(tls_alpn_http11) - 1}, {NULL, 0}};

/* OpenSSL's first queued error as text, or @p fallback; clears the queue. */
static const char *tls_last_error(char *buf, size_t size, const char *fallback)
{
    unsigned long e = ERR_peek_error(); /* the first is the cause; the rest say where */

    if (e == 0)
        snprintf(buf, size, "%s", fallback);
    else
        ERR_error_string_n(e, buf, size);
    ERR_clear_error();
    return buf;
}

/* An encrypted key must not make the daemon prompt on a terminal. */
static int tls_no_password(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/*
 * A readable file, said in the operator's terms before OpenSSL's own
 * error queue (whose text for a missing file is "system library").
 */
static int tls_check_readable(const char *what, const char *path, char *err, size_t err_size)
{
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        snprintf(err, err_size, "cannot read the TLS %s file '%s': %s", what, path,
                 strerror(errno));
        return -1;
    }
    fclose(f);
    return 0;
}

/*
 * The private key in @p path, or NULL with @p err set. The key must be
 * private, by the rule a config holding [tokens] is held to (config.c):
 * no permission at all for others, no write permission for the group (the
 * group may read: 0640, as Debian's ssl-cert group does). Whoever can read
 * the key can pose as this server to every client, and whoever can write
 * it decides which key the next reload serves. The mode is that of the
 * file read, not of whatever the path names after.
 */
static EVP_PKEY *tls_read_key(const char *path, char *err, size_t err_size)
{
    FILE *f = fopen(path, "r");
    EVP_PKEY *key;
    struct stat st;
    char why[256];

    if (f == NULL) {
        snprintf(err, err_size, "cannot read the TLS key file '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0) {
        snprintf(err, err_size, "cannot check the mode of the TLS key file '%s': %s", path,
                 strerror(errno));
        fclose(f);
        return NULL;
    }
    ERR_clear_error();
    key = PEM_read_PrivateKey(f, NULL, tls_no_password, NULL);
    fclose(f);
    if (key == NULL) {
        snprintf(err, err_size,
                 "the TLS key file '%s' holds no usable PEM private key (an encrypted key is "
                 "not supported): %s",
                 path, tls_last_error(why, sizeof(why), "unknown error"));
        return NULL;
    }
    if (secret_file_check("the TLS key file", path, &st, err, err_size) != 0) {
        EVP_PKEY_free(key);
        return NULL;
    }
    return key;
}

/* A new context from both files, or NULL with @p err set. */
static SSL_CTX *tls_ctx_new(const char *cert_path, const char *key_path, char *err, size_t err_size)
{
    SSL_CTX *ctx;
    EVP_PKEY *key;
    char why[256];

    if (tls_check_readable("certificate", cert_path, err, err_size) != 0 ||
        tls_check_readable("key", key_path, err, err_size) != 0)
        return NULL;
    ERR_clear_error();
    if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
        snprintf(err, err_size, "cannot create a TLS context: %s",
                 tls_last_error(why, sizeof(why), "out of memory"));
        return NULL;
    }
    /* TLS 1.0 and 1.1 are deprecated (RFC 8996). */
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_default_passwd_cb(ctx, tls_no_password);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_path) != 1) {
        snprintf(err, err_size, "the TLS certificate file '%s' holds no usable PEM certificate: %s",
                 cert_path, tls_last_error(why, sizeof(why), "unknown error"));
        SSL_CTX_free(ctx);
        return NULL;
    }
    if ((key = tls_read_key(key_path, err, err_size)) == NULL) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        snprintf(err, err_size, "the TLS key in '%s' does not match the certificate in '%s': %s",
                 key_path, cert_path, tls_last_error(why, sizeof(why), "key values mismatch"));
        EVP_PKEY_free(key);
        SSL_CTX_free(ctx);
        return NULL;
    }
    EVP_PKEY_free(key); /* the context holds its own reference */
    h2o_ssl_register_alpn_protocols(ctx, tls_alpn);
    return ctx;
}

int http_tls_open(struct http_tls **out, const char *cert_path, const char *key_path, char *err,
                  size_t err_size)
{
    struct http_tls *t;

    if (strlen(cert_path) >= TLS_PATH_MAX || strlen(key_path) >= TLS_PATH_MAX) {
        snprintf(err, err_size, "a TLS file path is longer than %d bytes", TLS_PATH_MAX - 1);
        return -1;
    }
    if ((t = calloc(1, sizeof(*t))) == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    memcpy(t->cert_path, cert_path, strlen(cert_path) + 1);
    memcpy(t->key_path, key_path, strlen(key_path) + 1);
    if ((t->ctx = tls_ctx_new(cert_path, key_path, err, err_size)) == NULL) {
        free(t);
        return -1;
    }
    pthread_mutex_init(&t->mu, NULL);
    *out = t;
    return 0;
}

int http_tls_reload(struct http_tls *t, char *err, size_t err_size)
{
    SSL_CTX *fresh = tls_ctx_new(t->cert_path, t->key_path, err, err_size), *old;

    if (fresh == NULL)
        return -1;
    pthread_mutex_lock(&t->mu);
    old = t->ctx;
    t->ctx = fresh;
    pthread_mutex_unlock(&t->mu);
    /* Connections that took the old one hold their own references. */
    SSL_CTX_free(old);
    return 0;
}

struct ssl_ctx_st *http_tls_acquire(struct http_tls *t)
{
    SSL_CTX *ctx;

    pthread_mutex_lock(&t->mu);
    ctx = t->ctx;
    SSL_CTX_up_ref(ctx);
    pthread_mutex_unlock(&t->mu);
    return ctx;
}

void http_tls_release(struct ssl_ctx_st *ctx)
{
    SSL_CTX_free(ctx); /* NULL-safe */
}

void http_tls_describe(struct http_tls *t, char *buf, size_t size)
{
    SSL_CTX *ctx = http_tls_acquire(t);
    X509 *x = SSL_CTX_get0_certificate(ctx);
    char subject[256] = "?", not_after[64] = "?";
    char *serial = NULL;

    if (x != NULL) {
        BIGNUM *bn;
        BIO *mem;

        X509_NAME_oneline(X509_get_subject_name(x), subject, sizeof(subject));
        if ((bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL)) != NULL) {
            serial = BN_bn2hex(bn);
            BN_free(bn);
        }
        if ((mem = BIO_new(BIO_s_mem())) != NULL) {
            if (ASN1_TIME_print(mem, X509_get0_notAfter(x)) == 1) {
                int n = BIO_read(mem, not_after, (int)sizeof(not_after) - 1);

                not_after[n > 0 ? n : 0] = '\0';
            }
            BIO_free(mem);
        }
    }
    snprintf(buf, size, "subject=\"%s\" serial=%s not_after=\"%s\"", subject,
             serial != NULL ? serial : "?", not_after);
    OPENSSL_free(serial);
    http_tls_release(ctx);
}

void http_tls_close(struct http_tls *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
