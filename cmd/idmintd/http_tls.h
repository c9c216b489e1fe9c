/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's TLS credentials: one OpenSSL server context built from a
 * certificate chain and a key file, TLS 1.2 and 1.3 only, that SIGHUP can
 * replace while connections are served. http.c takes a reference per
 * connection, so a swap never touches a handshake in flight. Like http.c,
 * this file is part of the seam over h2o and OpenSSL: nothing else in the
 * daemon sees either.
 */
#ifndef IDMINTD_HTTP_TLS_H
#define IDMINTD_HTTP_TLS_H

#include <stddef.h>

struct http_tls;
struct ssl_ctx_st; /* OpenSSL's SSL_CTX */

/*
 * Load @p cert_path (PEM, the server certificate first, then any
 * intermediates) and @p key_path (PEM private key) and check that they
 * belong together. Returns 0 and *out, or -1 with @p err naming the file
 * and the problem (missing, unreadable, not PEM, key does not match, or a
 * key file that is not private: any permission for others, or write
 * permission for its group, as for a config holding [tokens]).
 * Both paths are copied: reloads read them again.
 */
int http_tls_open(struct http_tls **out, const char *cert_path, const char *key_path, char *err,
                  size_t err_size);
/*
 * Read both files again and, if they load and match, make the new context
 * the one new connections get. Returns 0, or -1 with @p err, and then the
 * old certificate stays in service. Safe while event loops run; not
 * concurrent with itself.
 */
int http_tls_reload(struct http_tls *t, char *err, size_t err_size);
/*
 * The serving certificate's subject, serial (hex) and notAfter as one
 * "subject=... serial=... not_after=..." text, for the log.
 */
void http_tls_describe(struct http_tls *t, char *buf, size_t size);
/*
 * The current context with a reference taken; give it back with
 * http_tls_release once the connection closes. Thread-safe.
 */
struct ssl_ctx_st *http_tls_acquire(struct http_tls *t);
/* Drop a reference from http_tls_acquire. NULL is a no-op. */
void http_tls_release(struct ssl_ctx_st *ctx);
/* Free @p t; connections still holding a context keep it. NULL is a no-op. */
void http_tls_close(struct http_tls *t);

#endif /* IDMINTD_HTTP_TLS_H */
