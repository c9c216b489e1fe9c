/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one rule for files that hold secrets (a config with [tokens], a TLS
 * private key): private to their owner, or readable by their group.
 */
#ifndef IDMINTD_SECRET_FILE_H
#define IDMINTD_SECRET_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * Judge the mode of the file @p path whose fstat() is @p st: refused when
 * others have any permission or its group may write it (anyone who can
 * write it can put in a secret of their own; anyone who can read it has
 * the secret). 0 when private; -1 with @p err set to a sentence naming
 * @p what (for example "the TLS key file"), the path, the mode and the
 * chmod that fixes it. Thread-safety: safe.
 */
int secret_file_check(const char *what, const char *path, const struct stat *st, char *err,
                      size_t err_size);

#endif
