/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The libFuzzer entry point every fuzz_<name>.c defines; fuzz/replay.c calls
 * it under gcc, libFuzzer under clang (fuzz/README.md).
 */
#ifndef IDMINT_FUZZ_H
#define IDMINT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated malloc'd copy of @p data: the APIs under test take C strings. */
static inline char *fuzz_strdup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (s == NULL)
        abort();
    if (size > 0)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif /* IDMINT_FUZZ_H */
