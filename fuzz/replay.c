/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replays a corpus through one fuzz target without libFuzzer, so every seed
 * and regression input is a CTest test under gcc (SQLite's fuzzcheck idea).
 * Arguments are folders (every regular file in them) or single files. Exits
 * 1 when a folder is missing or nothing was run; a crash aborts the process.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Run the target on the file at @p path. 0, or -1 when it cannot be read. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t size = 0, cap = 0, got;

    if (f == NULL) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    do {
        if (size == cap) {
            uint8_t *bigger;

            cap = cap == 0 ? 4096 : cap * 2;
            if ((bigger = realloc(data, cap)) == NULL) {
                free(data);
                fclose(f);
                fprintf(stderr, "replay: %s: out of memory\n", path);
                return -1;
            }
            data = bigger;
        }
        got = fread(data + size, 1, cap - size, f);
        size += got;
    } while (got > 0);
    if (ferror(f)) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(data);
        fclose(f);
        return -1;
    }
    fclose(f);
    /* An exact-size copy, so ASan sees a read one past the input. */
    {
        uint8_t *exact = malloc(size > 0 ? size : 1);

        if (exact == NULL) {
            free(data);
            return -1;
        }
        if (size > 0)
            memcpy(exact, data, size);
        free(data);
        LLVMFuzzerTestOneInput(exact, size);
        free(exact);
    }
    return 0;
}

/* Run every regular file in @p dir. The count run, or -1. */
static long run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    long n = 0;

    if (d == NULL) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;

        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
            stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (run_file(path) != 0) {
            closedir(d);
            return -1;
        }
        n++;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    long total = 0;
    int i;

    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
        return 2;
    }
    for (i = 1; i < argc; i++) {
        struct stat st;
        long n;

        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
        if (S_ISDIR(st.st_mode))
            n = run_dir(argv[i]);
        else
            n = run_file(argv[i]) == 0 ? 1 : -1;
        if (n < 0)
            return 1;
        total += n;
    }
    printf("replay: %ld inputs ran\n", total);
    if (total == 0) {
        fprintf(stderr, "replay: no inputs (an empty corpus tests nothing)\n");
        return 1;
    }
    return 0;
}
