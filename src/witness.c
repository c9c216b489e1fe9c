/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A host's witness of the authorities it used: per store id, the highest
 * point of the store's history (id, seq, tip) any process of this host saw,
 * in a file a restore of the store does not rewind (never beside the store's
 * own file). A store put back to before that point is refused before it
 * grants anything (authority_restore.c). Beside them, per store location
 * (idmint__store_location), the store id this host last used there: a
 * store deleted and made anew at the same place has another id, and the
 * witness of the old one then stops it. This file only finds, reads and
 * writes the files; history.c and authority_restore.c judge them.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define WITNESS_ROOT_DIR       "/var/lib/idmint/witness"
#define WITNESS_MAGIC          "idmint-witness 1"
/* A location binding (see below): its own file kind and version, so that an
 * older idmint, which only opens files named by a store id, never reads one. */
#define WITNESS_LOCATION_MAGIC "idmint-witness-location 1"
#define WITNESS_DIR_MODE       0700 /* a user's own evidence; a shared one is made by an admin */
#define WITNESS_MODE           0660 /* group-writable in a shared folder the admin made */

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

/* Open and flock the lock file @p path (made if missing): an fd, or an error. */
static int lock_file(const char *path)
{
    char text[128];
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, WITNESS_MODE);

    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        errno_text(errno, text, sizeof(text));
        if (fd >= 0)
            close(fd);
        return idmint__fail(IDMINT_EINVAL, "cannot lock the witness %s: %s", path, text);
    }
    return fd;
}

int idmint__witness_lock(const char *dir, const char *store_id)
{
    char path[4200];
    int rc = witness_path(dir, store_id, ".lock", path, sizeof(path));

    return rc != 0 ? rc : lock_file(path);
}

void idmint__witness_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing drops the flock */
}

/*
 * The start of witness file @p path, up to @p size - 1 bytes, NUL-terminated
 * into @p buf: 0, 1 when there is none, or an error. One open and read, no
 * stdio: every grant reads two of these files, and a FILE's buffer costs a
 * malloc, a free and an fstat each time.
 */
static int read_start(const char *path, char *buf, size_t size)
{
    char text[128];
    size_t n = 0;
    ssize_t got = 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

    if (fd < 0 && errno == ENOENT)
        return 1;
    while (fd >= 0 && n < size - 1 && got > 0) {
        got = read(fd, buf + n, size - 1 - n);
        if (got > 0)
            n += (size_t)got;
        else if (got < 0 && errno == EINTR)
            got = 1;
    }
    if (fd < 0 || got < 0) {
        err = errno;
        errno_text(err, text, sizeof(text));
    }
    if (fd >= 0)
        close(fd);
    buf[n] = '\0';
    return err != 0 ? idmint__fail(IDMINT_EINVAL, "cannot read the witness %s: %s", path, text) : 0;
}

int idmint__witness_read(const char *dir, const char *store_id, struct idmint__history *out,
                         char *path, size_t path_size)
{
    char line[256], id[64], sid[64];
    unsigned long long seq = 0, tip = 0;
    int rc = witness_path(dir, store_id, "", path, path_size);

    if (rc != 0 || (rc = read_start(path, line, sizeof(line))) != 0)
        return rc;
    line[strcspn(line, "\n")] = '\0'; /* the first line only */
    rc = sscanf(line, WITNESS_MAGIC " %63s %63s %llu %llu", sid, id, &seq, &tip) == 4 &&
                 strcmp(sid, store_id) == 0 && idmint__history_id_valid(id) && seq > 0
             ? 0
             : -1;
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

/*
 * Rewrite an existing witness @p path in place: the line is always the same
 * length (the counters zero-padded), so the new one covers the old whole, in
 * one write of less than a sector, which a crash or a kill lands entire or
 * not at all; readers hold the lock. A rename over the file would cost more
 * than the grant it records: ext4 flushes a file renamed over another, and
 * the unlinked one may be discarded. 0, 1 when there is no file yet, or the
 * errno.
 */
static int rewrite_in_place(const char *path, const char *line, size_t n)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC), err;

    if (fd < 0)
        return errno == ENOENT ? 1 : errno;
    err = pwrite(fd, line, n, 0) == (ssize_t)n ? 0 : errno != 0 ? errno : EIO;
    if (close(fd) != 0 && err == 0)
        err = errno;
    return err;
}

int idmint__witness_write(const char *dir, const char *store_id, const struct idmint__history *h)
{
    char path[4200], tmp[4300], line[256], text[128];
    int fd, n, err, rc = witness_path(dir, store_id, "", path, sizeof(path));

    if (rc != 0)
        return rc;
    n = snprintf(line, sizeof(line), WITNESS_MAGIC " %s %s %020llu %020llu\n", store_id, h->id,
                 (unsigned long long)h->seq, (unsigned long long)h->tip);
    if ((err = rewrite_in_place(path, line, (size_t)n)) != 1)
        goto out;
    /* The first: aside, then rename, so that no reader ever finds it empty. */
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, WITNESS_MODE)) < 0) {
        errno_text(errno, text, sizeof(text));
        return idmint__fail(IDMINT_EINVAL, "cannot write the witness %s: %s", tmp, text);
    }
    err = write(fd, line, (size_t)n) == n ? 0 : errno != 0 ? errno : EIO;
    if (close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err != 0)
        (void)unlink(tmp);
out:
    if (err != 0) {
        errno_text(err, text, sizeof(text));
        return idmint__fail(IDMINT_EINVAL, "cannot write the witness %s: %s", path, text);
    }
    return 0;
}

/* ==== location bindings: which store this host last used at each place ==== */

/*
 * 128 bits of @p text, as 32 hex digits: two FNV-1a passes with other
 * offsets. Not a defence against anyone (the key is not secret, and the
 * file repeats it, which the reader compares); only a fixed-length file
 * name for a key of any length and any bytes.
 */
static void location_hash(const char *text, char out[33])
{
    uint64_t h1 = UINT64_C(0xcbf29ce484222325), h2 = UINT64_C(0x84222325cbf29ce4);

    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        h1 = (h1 ^ *p) * UINT64_C(0x100000001b3);
        h2 = (h2 ^ *p) * UINT64_C(0x100000001b3);
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

/*
 * @p key with every byte outside '!'..'~' and '%' as %XX (one line, one
 * token), malloc'd into *out. 0 or IDMINT_ENOMEM.
 */
static int location_escape(const char *key, char **out)
{
    size_t n = 0, size = strlen(key) * 3 + 1;
    char *buf = malloc(size);

    if (buf == NULL)
        return idmint__fail(IDMINT_ENOMEM, "out of memory reading the witness");
    for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
        if (*p < '!' || *p > '~' || *p == '%')
            n += (size_t)snprintf(buf + n, size - n, "%%%02X", (unsigned)*p);
        else
            buf[n++] = (char)*p;
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* The binding file of location @p key in @p dir, with @p suffix. */
static int location_path(const char *dir, const char *key, const char *suffix, char *buf,
                         size_t size)
{
    char hash[33];
    int n;

    if (key == NULL || key[0] == '\0')
        return idmint__fail(IDMINT_EINVAL, "no store location to bind");
    location_hash(key, hash);
    n = snprintf(buf, size, "%s/location-%s%s", dir, hash, suffix);
    return n < 0 || (size_t)n >= size ? idmint__fail(IDMINT_EINVAL, "witness path too long") : 0;
}

int idmint__witness_location_lock(const char *dir, const char *location)
{
    char path[4200];
    int rc = location_path(dir, location, ".lock", path, sizeof(path));

    return rc != 0 ? rc : lock_file(path);
}

int idmint__witness_location_read(const char *dir, const char *location, char store_id[33],
                                  char *path, size_t path_size)
{
    char sid[64], *want = NULL, *text, *key;
    size_t size;
    int rc = location_path(dir, location, "", path, path_size);

    if (rc != 0 || (rc = location_escape(location, &want)) != 0)
        return rc;
    /* The first line (magic and store id) and the place's key: a longer key
     * is cut, and then is another place's, as it would be whole. */
    size = strlen(want) + 128;
    if ((text = malloc(size)) == NULL) {
        free(want);
        return idmint__fail(IDMINT_ENOMEM, "out of memory reading the witness");
    }
    if ((rc = read_start(path, text, size)) != 0) {
        free(text);
        free(want);
        return rc;
    }
    if ((key = strchr(text, '\n')) != NULL)
        *key++ = '\0';
    rc = key != NULL && key[0] != '\0' && sscanf(text, WITNESS_LOCATION_MAGIC " %63s", sid) == 1 &&
                 idmint__history_id_valid(sid)
             ? 0
             : -1;
    if (rc == 0) {
        key[strcspn(key, "\n")] = '\0';
        rc = strcmp(key, want) == 0 ? 0 : -1;
    }
    free(text);
    free(want);
    /* Damaged, or (two keys of one hash) another place's: evidence lost, never a pass. */
    if (rc != 0)
        return idmint__fail(IDMINT_ESTORE,
                            "the witness %s is damaged or names another place than %s; move it "
                            "away only if you know the store there is the one this host used "
                            "before, or was fenced since (docs/operations.md, \"Restores\")",
                            path, location);
    memcpy(store_id, sid, 33);
    return 0;
}

int idmint__witness_location_write(const char *dir, const char *location, const char *store_id,
                                   const char *note)
{
    char path[4200], tmp[4300], text[128], *key = NULL, *body;
    size_t size;
    int fd, n, err, rc = location_path(dir, location, "", path, sizeof(path));

    if (rc != 0)
        return rc;
    if (!idmint__history_id_valid(store_id))
        return idmint__fail(IDMINT_ESTORE, "the store's id '%.40s' is not 32 hex digits", store_id);
    if ((rc = location_escape(location, &key)) != 0)
        return rc;
    size = strlen(key) + (note != NULL ? strlen(note) : 0) + 128;
    if ((body = malloc(size)) == NULL) {
        free(key);
        return idmint__fail(IDMINT_ENOMEM, "out of memory writing the witness");
    }
    /* The note is for people reading the folder (who bound it, and why); never parsed. */
    n = snprintf(body, size, WITNESS_LOCATION_MAGIC " %s\n%s\n%s%s%s", store_id, key,
                 note != NULL ? "# " : "", note != NULL ? note : "", note != NULL ? "\n" : "");
    free(key);
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, WITNESS_MODE)) < 0) {
        errno_text(errno, text, sizeof(text));
        free(body);
        return idmint__fail(IDMINT_EINVAL, "cannot write the witness %s: %s", tmp, text);
    }
    err = n > 0 && write(fd, body, (size_t)n) == n ? 0 : errno != 0 ? errno : EIO;
    free(body);
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
