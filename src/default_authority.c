/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authority used when none is named (docs/design.md "The authority", docs/man/idmint.1): one
 * fixed file for every user of a machine, never relative to the working directory or to the user.
 * Two runs from two folders, or a root daemon and a user's CLI, share one authority instead of
 * minting the same IDs from two; a user who cannot open it is told so by the store
 * (store_sqlite.c), never given a private one. This file only names the file and makes its folder;
 * the store opens it.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SQLITE_PREFIX    "sqlite:"
#define DEFAULT_DIR_MODE 0750 /* the owner writes; a group it is shared with may be let in */

int idmint__default_authority(char *buf, size_t size)
{
    size_t len = strlen(IDMINT_DEFAULT_AUTHORITY);

    if (buf == NULL || size <= len)
        return idmint__fail(IDMINT_EINVAL, "default authority: the output buffer is too small");
    memcpy(buf, IDMINT_DEFAULT_AUTHORITY, len + 1);
    return 0;
}

int idmint__default_authority_mkdir(const char *url)
{
    char path[IDMINT_DEFAULT_AUTHORITY_MAX];
    size_t prefix = strlen(SQLITE_PREFIX), len, i;

    if (url == NULL || strncmp(url, SQLITE_PREFIX, prefix) != 0 || url[prefix] != '/')
        return idmint__fail(IDMINT_EINVAL, "default authority '%s' is not an absolute sqlite path",
                            url != NULL ? url : "(null)");
    len = strlen(url + prefix);
    if (len >= sizeof(path))
        return idmint__fail(IDMINT_EINVAL, "default authority path is too long");
    memcpy(path, url + prefix, len + 1);
    /* Each folder from the top, then the file's own: the last '/' ends the loop. */
    for (i = 1; i < len; i++) {
        if (path[i] != '/')
            continue;
        path[i] = '\0';
        if (mkdir(path, DEFAULT_DIR_MODE) != 0) {
            int err = errno;
            struct stat sb;
            char text[128] = "";

            /* EEXIST, or EROFS/EACCES on a folder that is already there. */
            if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
                path[i] = '/';
                continue;
            }
            if (strerror_r(err, text, sizeof(text)) != 0)
                snprintf(text, sizeof(text), "errno %d", err);
            /* A folder no one may make is a set-up to fix, not an outage to wait out. */
            return idmint__fail(err == EACCES || err == EPERM ? IDMINT_EINVAL : IDMINT_EUNAVAILABLE,
                                "cannot create the folder %s of the default authority %s: %s. "
                                "It is one file for every user of this machine: an administrator "
                                "creates it once (sudo install -d -m 2770 -g GROUP %s, and "
                                "adduser USER GROUP for each user who mints), or pass "
                                "--authority / set IDMINT_AUTHORITY",
                                path, url + prefix, text, path);
        }
        path[i] = '/';
    }
    return 0;
}
