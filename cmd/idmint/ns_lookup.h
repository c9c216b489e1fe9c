/* SPDX-License-Identifier: Apache-2.0 */
#ifndef IDMINT_CLI_NS_LOOKUP_H
#define IDMINT_CLI_NS_LOOKUP_H

#include "idmint.h"

/*
 * Read namespace @p name from @p a without creating anything: "default",
 * when it does not exist yet, reads as the namespace it will be created as
 * (the default layout). 0, IDMINT_ENOTFOUND (with a message), or what
 * idmint_ns_list returns.
 */
int ns_lookup(idmint_authority *a, const char *name, idmint_ns_info *out);

#endif /* IDMINT_CLI_NS_LOOKUP_H */
