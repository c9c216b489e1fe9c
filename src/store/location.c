/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a store is, as one key per place: this host's witness binds each
 * key to the store id it last used there (witness.c, authority_restore.c),
 * so that a store deleted and made anew at the same place, which has a
 * new store id and no history this host saw, is caught. A backend that can
 * say where it really is (the SQLite file's real path, the PostgreSQL
 * server and database the connection reached) answers through its
 * location member; for the others the key is read from the URL here, so
 * that the backends need not change.
 */
#include "store.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ETCD_MEMBERS_MAX 16 /* as the etcd backend */
#define ETCD_PREFIX_DEF  "/idmint"

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The key of etcd URL location @p loc ("//h1:p,h2:p/prefix"): the same
 * cluster and prefix named with members in another order, upper-case host
 * names, a default port written out or a trailing '/' give the same key.
 * Aliases (a name and its address) do not: the key is text, never resolved.
 */
static int etcd_key(const char *loc, char *buf, size_t size)
{
    char members[ETCD_MEMBERS_MAX][300], *sorted[ETCD_MEMBERS_MAX];
    const char *p, *hosts_end, *prefix;
    size_t n = 0, i, plen, len = 0;
    int w;

    if (strncmp(loc, "//", 2) != 0)
        return idmint__fail(IDMINT_EINVAL, "etcd:%s: no '//' after 'etcd:'", loc);
    p = loc + 2;
    hosts_end = p + strcspn(p, "/?#");
    while (p < hosts_end) {
        const char *comma = memchr(p, ',', (size_t)(hosts_end - p));
        const char *end = comma != NULL ? comma : hosts_end;
        size_t mlen = (size_t)(end - p), k;
        /* The port follows the last ':' after any "[v6]". */
        const char *close = memchr(p, ']', mlen);
        const char *colon = NULL;

        for (k = close != NULL ? (size_t)(close - p) : 0; k < mlen; k++)
            if (p[k] == ':')
                colon = p + k;
        if (mlen == 0 || n == ETCD_MEMBERS_MAX || mlen >= sizeof(members[0]) - 8)
            return idmint__fail(IDMINT_EINVAL, "etcd:%s: a member list idmint cannot read", loc);
        for (k = 0; k < mlen; k++) {
            char c = p[k];

            members[n][k] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
        }
        members[n][mlen] = '\0';
        if (colon == NULL)
            strcat(members[n], ":2379"); /* etcd's client port, as the backend assumes */
        for (k = 0; k < n && strcmp(members[k], members[n]) != 0; k++)
            ;
        if (k == n) {
            sorted[n] = members[n];
            n++;
        }
        p = comma != NULL ? comma + 1 : hosts_end;
    }
    if (n == 0)
        return idmint__fail(IDMINT_EINVAL, "etcd:%s: no member", loc);
    qsort(sorted, n, sizeof(sorted[0]), cmp_text);
    prefix = hosts_end;
    plen = strcspn(prefix, "?#");
    while (plen > 0 && prefix[plen - 1] == '/')
        plen--;
    if (plen == 0) {
        prefix = ETCD_PREFIX_DEF;
        plen = strlen(prefix);
    }
    w = snprintf(buf, size, "etcd://");
    for (i = 0; i < n && w >= 0 && (size_t)w < size; i++) {
        len = (size_t)w;
        w = snprintf(buf + len, size - len, "%s%s", i > 0 ? "," : "", sorted[i]);
        w = w < 0 ? w : (int)len + w;
    }
    if (w >= 0 && (size_t)w < size) {
        len = (size_t)w;
        w = snprintf(buf + len, size - len, "%.*s", (int)plen, prefix);
        w = w < 0 ? w : (int)len + w;
    }
    if (w < 0 || (size_t)w >= size)
        return idmint__fail(IDMINT_EINVAL, "etcd:%s: the location is too long for its key", loc);
    return 0;
}

int idmint__store_location(const struct store *st, const char *url, char *buf, size_t size)
{
    const char *colon;

    if (st == NULL || url == NULL || buf == NULL || size == 0)
        return idmint__fail(IDMINT_EINVAL, "store location: no store, URL or buffer");
    if (st->ops->version >= STORE_OPS_V7 && st->ops->location != NULL)
        return st->ops->location(st, buf, size);
    colon = strchr(url, ':');
    if (colon != NULL && (size_t)(colon - url) == 4 && strncmp(url, "etcd", 4) == 0)
        return etcd_key(colon + 1, buf, size);
    return 1;
}
