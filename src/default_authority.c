/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authority used when none is named (DESIGN.md §8): one fixed file per
 * user, never relative to the working directory, so that two runs from two
 * folders share one authority instead of minting the same IDs from two.
 * It only names the file and makes its folder; the store opens it.
 */
#include "internal.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT_AUTHORITY   "sqlite:/var/lib/idmint/idmint.db"
#define STATE_SUFFIX     "/idmint/idmint.db"
#define HOME_SUFFIX      "/.local/state/idmint/idmint.db"
#define SQLITE_PREFIX    "sqlite:"
#define DEFAULT_DIR_MODE 0700 /* an authority's folder is its owner's alone */

static int is_absolute(const char *path)
{
    return path != NULL && path[0] == '/';
}

static int put_url(char *buf, size_t size, const char *dir, const char *suffix)
{
    char url[IDMINT_DEFAULT_AUTHORITY_MAX];
    int len = snprintf(url, sizeof(url), "%s%s%s", SQLITE_PREFIX, dir, suffix);

    if (len < 0 || (size_t)len >= sizeof(url) || (size_t)len >= size)
        return idmint__fail(IDMINT_EINVAL,
                            "the default authority under '%.200s' is a path too long; pass "
                            "--authority or set IDMINT_AUTHORITY",
                            dir);
    memcpy(buf, url, (size_t)len + 1);
    return 0;
}

int idmint__default_authority_for(unsigned long euid, const char *xdg_state_home, const char *home,
                                  char *buf, size_t size)
{
    if (buf == NULL || size == 0)
        return idmint__fail(IDMINT_EINVAL, "default authority: no output buffer");
    if (euid == 0)
        return put_url(buf, size, "", &ROOT_AUTHORITY[strlen(SQLITE_PREFIX)]);
    /* The XDG base directory spec: a relative value is invalid and ignored. */
    if (is_absolute(xdg_state_home))
        return put_url(buf, size, xdg_state_home, STATE_SUFFIX);
    if (is_absolute(home))
        return put_url(buf, size, home, HOME_SUFFIX);
    return idmint__fail(IDMINT_EINVAL,
                        "no default authority for uid %lu: HOME is not an absolute path and the "
                        "password database has no home folder; pass --authority or set "
                        "IDMINT_AUTHORITY",
                        euid);
}

int idmint__default_authority(char *buf, size_t size)
{
    struct passwd pw, *found = NULL;
    char pwbuf[4096];
    uid_t euid = geteuid();
    const char *home = getenv("HOME");

    if (euid != 0 && !is_absolute(home) &&
        getpwuid_r(euid, &pw, pwbuf, sizeof(pwbuf), &found) == 0 && found != NULL)
        home = found->pw_dir;
    return idmint__default_authority_for((unsigned long)euid, getenv("XDG_STATE_HOME"), home, buf,
                                         size);
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
            return idmint__fail(IDMINT_EUNAVAILABLE,
                                "cannot create the folder %s of the default authority: %s", path,
                                text);
        }
        path[i] = '/';
    }
    return 0;
}
