/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/http_tls.c with certificates made here by
 * OpenSSL: a matching pair opens and is described by its subject, serial
 * and end; a missing file, a file that is not PEM, a key of another
 * certificate and a key others may read are each refused naming the file
 * and the problem; a reload puts a new pair in service for new connections
 * while a connection's context stays valid; a reload that fails keeps the
 * old pair.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "http_tls.h"
#include "testsupport.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct files {
    char *dir;
    char cert[4096], key[4096];
};

/* A self-signed certificate for @p cn with serial @p serial, and its key, in PEM files. */
static void make_pair(const char *cert_path, const char *key_path, const char *cn, long serial)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_NAME *name;
    FILE *f;

    assert_non_null(k);
    assert_non_null(x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, k);
    name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, name);
    assert_true(X509_sign(x, k, EVP_sha256()) > 0);
    assert_non_null(f = fopen(cert_path, "w"));
    assert_int_equal(PEM_write_X509(f, x), 1);
    fclose(f);
    assert_non_null(f = fopen(key_path, "w"));
    assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    assert_int_equal(chmod(key_path, 0600), 0);
    X509_free(x);
    EVP_PKEY_free(k);
}

static int setup(void **state)
{
    struct files *f = calloc(1, sizeof(*f));

    if (f == NULL || (f->dir = ts_tempdir()) == NULL) {
        free(f);
        return -1;
    }
    snprintf(f->cert, sizeof(f->cert), "%s/cert.pem", f->dir);
    snprintf(f->key, sizeof(f->key), "%s/key.pem", f->dir);
    make_pair(f->cert, f->key, "first.test", 11);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct files *f = *state;

    ts_rmtree(f->dir);
    free(f);
    return 0;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The CN of @p ctx's certificate. */
static void cn_of(struct ssl_ctx_st *ctx, char *out, size_t size)
{
    X509 *x = SSL_CTX_get0_certificate(ctx);

    assert_non_null(x);
    assert_true(
        X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, out, (int)size) > 0);
}

static void test_http_tls__a_matching_pair_opens_and_is_described(void **state)
{
    struct files *f = *state;
    struct http_tls *t = NULL;
    char err[512], desc[600];

    assert_int_equal(http_tls_open(&t, f->cert, f->key, err, sizeof(err)), 0);
    http_tls_describe(t, desc, sizeof(desc));
    assert_non_null(strstr(desc, "first.test"));
    assert_non_null(strstr(desc, "serial=0B"));
    assert_non_null(strstr(desc, "not_after="));
    http_tls_close(t);
}

static void test_http_tls__bad_files_are_refused_by_name(void **state)
{
    struct files *f = *state;
    struct http_tls *t = NULL;
    char err[512], other_cert[4200], other_key[4200], junk[4200];

    snprintf(other_cert, sizeof(other_cert), "%s/other.pem", f->dir);
    snprintf(other_key, sizeof(other_key), "%s/other.key", f->dir);
    snprintf(junk, sizeof(junk), "%s/junk.pem", f->dir);
    make_pair(other_cert, other_key, "other.test", 12);
    write_text(junk, "this is not a certificate\n");

    assert_int_equal(http_tls_open(&t, "/nonexistent/cert.pem", f->key, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/cert.pem"));
    assert_int_equal(http_tls_open(&t, junk, f->key, err, sizeof(err)), -1);
    assert_non_null(strstr(err, junk));
    /* The key of another certificate. */
    assert_int_equal(http_tls_open(&t, f->cert, other_key, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "match"));
    /* A key others may read. */
    assert_int_equal(chmod(f->key, 0644), 0);
    assert_int_equal(http_tls_open(&t, f->cert, f->key, err, sizeof(err)), -1);
    assert_non_null(strstr(err, f->key));
    assert_int_equal(chmod(f->key, 0600), 0);
    assert_int_equal(http_tls_open(&t, f->cert, f->key, err, sizeof(err)), 0);
    http_tls_close(t);
}

static void test_http_tls__a_reload_serves_new_connections_only(void **state)
{
    struct files *f = *state;
    struct http_tls *t = NULL;
    struct ssl_ctx_st *held, *now;
    char err[512], cn[128];

    assert_int_equal(http_tls_open(&t, f->cert, f->key, err, sizeof(err)), 0);
    assert_non_null(held = http_tls_acquire(t)); /* a connection open before the reload */
    make_pair(f->cert, f->key, "second.test", 13);
    assert_int_equal(http_tls_reload(t, err, sizeof(err)), 0);
    assert_non_null(now = http_tls_acquire(t));
    cn_of(now, cn, sizeof(cn));
    assert_string_equal(cn, "second.test");
    cn_of(held, cn, sizeof(cn));
    assert_string_equal(cn, "first.test");
    http_tls_release(now);

    /* A reload that fails keeps what serves. */
    write_text(f->cert, "-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n");
    assert_int_equal(http_tls_reload(t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, f->cert));
    assert_non_null(now = http_tls_acquire(t));
    cn_of(now, cn, sizeof(cn));
    assert_string_equal(cn, "second.test");
    http_tls_release(now);
    http_tls_close(t);
    /* The connection's context outlives the server's. */
    cn_of(held, cn, sizeof(cn));
    assert_string_equal(cn, "first.test");
    http_tls_release(held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_http_tls__a_matching_pair_opens_and_is_described,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_tls__bad_files_are_refused_by_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_http_tls__a_reload_serves_new_connections_only, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
