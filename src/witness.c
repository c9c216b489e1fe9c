/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host's witness of the authorities it used: per store id, the highest
 * point of the store's history (id, seq, tip) any process of this host saw,
 * in a file a restore of the store does not rewind (never beside the store's
 * own file). A store put back to before that point is refused before it
 * grants anything (authority_restore.c). This file only finds, reads and
 * writes the files; history.c judges them.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define WITNESS_ROOT_DIR "/var/lib/idmint/witness"
#define WITNESS_MAGIC    "idmint-witness 1"
#define WITNESS_DIR_MODE 0700 /* a user's own evidence; a shared one is made by an admin */
#define WITNESS_MODE     0660 /* group-writable in a shared folder the admin made */

static void errno_text(int err, char *buf, size_t size)
{
    if (strerror_r(err, buf, size) != 0)
        snprintf(buf, size, "errno %d", err);
}

/* mkdir -p @p path, the missing folders with @p mode. 0 or the errno. */
static int make_dirs(char *path, mode_t mode)
{
    size_t len = strlen(path);

    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, mode) != 0 && errno != EEXIST) {
            int err = errno;
            struct stat sb;

            path[i] = i == len ? '\0' : '/';
            if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
                continue;
            return err;
        }
        path[i] = i == len ? '\0' : '/';
    }
    return 0;
}

int idmint__witness_dir(char *buf, size_t size)
{
    const char *env = getenv("IDMINT_WITNESS_DIR"), *base;
    char text[128];
    int n, err;

    if (env != NULL && strcmp(env, "off") == 0)
        return 1;
    if (env != NULL && env[0] != '\0') {
        if (env[0] != '/')
            return idmint__fail(IDMINT_EINVAL,
                                "IDMINT_WITNESS_DIR '%s' is not an absolute path (or 'off')", env);
        n = snprintf(buf, size, "%s", env);
    } else if (geteuid() == 0) {
        n = snprintf(buf, size, "%s", WITNESS_ROOT_DIR);
    } else if ((base = getenv("XDG_STATE_HOME")) != NULL && base[0] == '/') {
        n = snprintf(buf, size, "%s/idmint/witness", base);
    } else if ((base = getenv("HOME")) != NULL && base[0] == '/') {
        n = snprintf(buf, size, "%s/.local/state/idmint/witness", base);
    } else {
        return idmint__fail(IDMINT_EINVAL,
                            "no folder for this host's witness of the authority (no HOME or "
                            "XDG_STATE_HOME): set IDMINT_WITNESS_DIR to a folder that a restore "
                            "of the authority does not rewind, or to 'off' to run without one "
                            "(docs/operations.md, \"Witness\")");
    }
    if (n < 0 || (size_t)n >= size)
        return idmint__fail(IDMINT_EINVAL, "the witness folder path is too long");
    if ((err = make_dirs(buf, WITNESS_DIR_MODE)) != 0 ||
        (access(buf, W_OK | X_OK) != 0 && (err = errno) != 0)) {
        errno_text(err, text, sizeof(text));
        return idmint__fail(IDMINT_EINVAL,
                            "cannot use %s for this host's witness of the authority: %s. It keeps "
                            "the evidence that stops a store put back in time from granting "
                            "again: make it writable, set IDMINT_WITNESS_DIR to another folder, "
                            "or to 'off' to run without one (docs/operations.md, \"Witness\")",
                            buf, text);
    }
    return 0;
}

/* The witness file of @p store_id in @p dir, with @p suffix. */
static int witness_path(const char *dir, const char *store_id, const char *suffix, char *buf,
                        size_t size)
{
    int n = snprintf(buf, size, "%s/%s%s", dir, store_id, suffix);

    if (!idmint__history_id_valid(store_id))
        return idmint__fail(IDMINT_ESTORE, "the store's id '%.40s' is not 32 hex digits", store_id);
    return n < 0 || (size_t)n >= size ? idmint__fail(IDMINT_EINVAL, "witness path too long") : 0;
}

int idmint__witness_lock(const char *dir, const char *store_id)
{
    char path[4200], text[128];
    int fd, rc = witness_path(dir, store_id, ".lock", path, sizeof(path));

    if (rc != 0)
        return rc;
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, WITNESS_MODE);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        errno_text(errno, text, sizeof(text));
        if (fd >= 0)
            close(fd);
        return idmint__fail(IDMINT_EINVAL, "cannot lock the witness %s: %s", path, text);
    }
    return fd;
}

void idmint__witness_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing drops the flock */
}

int idmint__witness_read(const char *dir, const char *store_id, struct idmint__history *out,
                         char *path, size_t path_size)
{
    char line[256], id[64], sid[64], text[128];
    unsigned long long seq = 0, tip = 0;
    FILE *f;
    int rc = witness_path(dir, store_id, "", path, path_size);

    if (rc != 0)
        return rc;
    if ((f = fopen(path, "re")) == NULL) {
        if (errno == ENOENT)
            return 1;
        errno_text(errno, text, sizeof(text));
        return idmint__fail(IDMINT_EINVAL, "cannot read the witness %s: %s", path, text);
    }
    rc = fgets(line, sizeof(line), f) != NULL &&
                 sscanf(line, WITNESS_MAGIC " %63s %63s %llu %llu", sid, id, &seq, &tip) == 4 &&
                 strcmp(sid, store_id) == 0 && idmint__history_id_valid(id) && seq > 0
             ? 0
             : -1;
    fclose(f);
    /* A damaged witness is evidence lost, never a pass: say so. */
    if (rc != 0)
        return idmint__fail(IDMINT_ESTORE,
                            "the witness %s is damaged; move it away only if you know the "
                            "authority was not put back in time since this host last used it",
                            path);
    memset(out, 0, sizeof(*out));
    memcpy(out->id, id, 33);
    out->seq = seq;
    out->tip = tip;
    return 0;
}

int idmint__witness_write(const char *dir, const char *store_id, const struct idmint__history *h)
{
    char path[4200], tmp[4300], line[256], text[128];
    int fd, n, err, rc = witness_path(dir, store_id, "", path, sizeof(path));

    if (rc != 0)
        return rc;
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    n = snprintf(line, sizeof(line), WITNESS_MAGIC " %s %s %llu %llu\n", store_id, h->id,
                 (unsigned long long)h->seq, (unsigned long long)h->tip);
    /* Aside, then rename: a reader sees the old line or the new, never half. */
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, WITNESS_MODE)) < 0) {
        errno_text(errno, text, sizeof(text));
        return idmint__fail(IDMINT_EINVAL, "cannot write the witness %s: %s", tmp, text);
    }
    err = write(fd, line, (size_t)n) == n ? 0 : errno != 0 ? errno : EIO;
    if (close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err != 0) {
        (void)unlink(tmp);
        errno_text(err, text, sizeof(text));
        return idmint__fail(IDMINT_EINVAL, "cannot write the witness %s: %s", path, text);
    }
    return 0;
}
