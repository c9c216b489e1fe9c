/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests for cmd/idmintd/status_page.c: the page is one whole document
 * whose inline style and script are exactly the compiled-in assets, and the
 * Content-Security-Policy names those two by their SHA-256 (computed here
 * with OpenSSL, not with the daemon's code), so a browser runs them and
 * nothing else; every namespace is shown; text that came from outside
 * (audit actors, details, store errors) is escaped; the audit needs admin.
 */
#include <setjmp.h> /* cmocka 1.1 wants these four before <cmocka.h> */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon_fixture.h"
#include "status.h"
#include "status_assets.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "'sha256-<base64>'" of @p len bytes at @p data. */
static void csp_source(const unsigned char *data, size_t len, char *out, size_t size)
{
    unsigned char digest[EVP_MAX_MD_SIZE], b64[64];
    unsigned n = 0;

    assert_int_equal(EVP_Digest(data, len, digest, &n, EVP_sha256(), NULL), 1);
    assert_int_equal(n, 32);
    assert_int_equal(EVP_EncodeBlock(b64, digest, (int)n), 44);
    snprintf(out, size, "'sha256-%s'", (const char *)b64);
}

/* The text between the first @p open and the @p close after it, or NULL. */
static char *between(const char *text, const char *open, const char *close, size_t *len)
{
    const char *s = strstr(text, open), *e;

    if (s == NULL)
        return NULL;
    s += strlen(open);
    if ((e = strstr(s, close)) == NULL)
        return NULL;
    *len = (size_t)(e - s);
    return (char *)(uintptr_t)s;
}

static void test_status_page__inline_code_is_the_assets_and_the_policy_names_them(void **state)
{
    struct td_daemon *t = *state;
    struct status_view v;
    char *page, *inner, want[128];
    const char *csp = status_page_csp();
    size_t len = 0, n = 0;

    assert_int_equal(status_view_take(&t->d, 0, &v), 0);
    assert_non_null(page = status_page(&t->d, &v, &len));
    assert_int_equal(strlen(page), len);
    assert_int_equal(strncmp(page, "<!DOCTYPE html>\n", 16), 0);
    assert_string_equal(page + len - 8, "</html>\n");

    assert_non_null(inner = between(page, "<style>", "</style>", &n));
    assert_int_equal(n, asset_status_css_len);
    assert_memory_equal(inner, asset_status_css, n);
    assert_non_null(inner = between(page, "<script>", "</script>", &n));
    assert_int_equal(n, asset_status_js_len);
    assert_memory_equal(inner, asset_status_js, n);
    /* One of each: anything else inline would be blocked, or worse, allowed. */
    assert_null(strstr(strstr(page, "</style>"), "<style"));
    assert_null(strstr(strstr(page, "</script>"), "<script"));

    csp_source(asset_status_css, asset_status_css_len, want, sizeof(want));
    assert_non_null(strstr(csp, "style-src "));
    assert_non_null(strstr(strstr(csp, "style-src "), want));
    csp_source(asset_status_js, asset_status_js_len, want, sizeof(want));
    assert_non_null(strstr(strstr(csp, "script-src "), want));
    assert_non_null(strstr(csp, "default-src 'none'"));
    assert_null(strstr(csp, "unsafe-inline"));

    assert_non_null(strstr(page, "snow"));
    assert_non_null(strstr(page, "rng"));
    assert_non_null(strstr(page, "The audit log needs the admin role."));
    free(page);
    status_view_free(&v);
}

static void test_status_page__outside_text_is_escaped(void **state)
{
    struct td_daemon *t = *state;
    struct sampler_cache *fake = calloc(1, sizeof(*fake));
    const struct sampler_cache *real;
    struct status_view v;
    char(*detail)[STATUS_DETAIL_MAX] = calloc(1, sizeof(*detail));
    char *page;
    size_t len = 0;

    assert_non_null(fake);
    assert_non_null(detail);
    assert_int_equal(status_view_take(&t->d, 1, &v), 0);
    /* A pass as a hostile caller could fill it: an actor, a detail and a
     * store error are all text that came from outside the daemon. */
    fake->is_full = 1;
    fake->read_ms = v.live.now_ms;
    fake->audit_rc = IDMINT_ESTORE;
    snprintf(fake->audit_error, sizeof(fake->audit_error), "<b>store</b> & \"more\"");
    fake->n_audit = 1;
    fake->audit[0].seq = 7;
    fake->audit[0].at_ms = v.live.now_ms;
    snprintf(fake->audit[0].actor, sizeof(fake->audit[0].actor), "<img src=x onerror=alert(1)>");
    snprintf(fake->audit[0].action, sizeof(fake->audit[0].action), "collision");
    snprintf(fake->audit[0].ns, sizeof(fake->audit[0].ns), "snow");
    snprintf(detail[0], sizeof(detail[0]), "first=[</td><script>alert('x')</script>]");
    real = v.cache;
    v.cache = fake;
    free(v.audit_detail);
    v.audit_detail = detail;
    assert_non_null(page = status_page(&t->d, &v, &len));
    assert_null(strstr(page, "<img"));
    assert_null(strstr(page, "<b>store"));
    assert_null(strstr(page, "<script>alert"));
    assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt;"));
    assert_non_null(strstr(page, "&lt;b&gt;store&lt;/b&gt; &amp; &quot;more&quot;"));
    assert_non_null(strstr(page, "&lt;/td&gt;&lt;script&gt;alert("));
    free(page);
    v.cache = real;
    free(fake);
    status_view_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_status_page__inline_code_is_the_assets_and_the_policy_names_them, td_setup,
            td_teardown),
        cmocka_unit_test_setup_teardown(test_status_page__outside_text_is_escaped, td_setup,
                                        td_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
