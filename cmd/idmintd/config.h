/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmintd's settings: defaults, then the INI file, then IDMINT_* variables,
 * then flags (main.c), each overriding the one before.
 */
#ifndef IDMINTD_CONFIG_H
#define IDMINTD_CONFIG_H

#include "daemon.h"

#include <stddef.h>

void config_defaults(struct config *cfg);
/*
 * Read @p path. 0, or -1 with "<file>:<line>: <problem>" in @p err and
 * @p cfg as it was; also -1 when the file holds [tokens] and others have any
 * permission on it or its group may write it (mode & 027). Not thread-safe
 * against other users of @p cfg.
 */
int config_load_file(struct config *cfg, const char *path, char *err, size_t err_size);
/*
 * Apply IDMINT_LISTEN, _AUTHORITY, _REGION, _LOG_LEVEL, _MAX_COUNT,
 * _MAX_CONNECTIONS_PER_CLIENT, _MAX_CONNECTIONS_PER_PREFIX, _TLS_CERT,
 * _TLS_KEY, _STORE_* and _LIMITS_<CLASS>_RATE / _BURST ([limits]; CLASS also
 * BATCH and COLLISION). 0 or -1 with @p err.
 */
int config_apply_env(struct config *cfg, char *err, size_t err_size);
/*
 * Set one [section] key from text, as the file and the flags do. 0, or -1
 * with the problem in @p err.
 */
int config_set(struct config *cfg, const char *section, const char *key, const char *value,
               char *err, size_t err_size);
/*
 * Cross-field checks after every source is applied (lease times; TLS needs
 * both a certificate and a key). 0 or -1 with @p err.
 */
int config_finish(struct config *cfg, char *err, size_t err_size);

#endif /* IDMINTD_CONFIG_H */
