/* SPDX-License-Identifier: Apache-2.0 */
/* A region claim as one line of text (region_record.c). */
#ifndef IDMINT_REGION_RECORD_H
#define IDMINT_REGION_RECORD_H

#include "idmint.h"

#include <stddef.h>

/*
 * @p c as a record's text into @p out (NUL-terminated): 0, or IDMINT_EINVAL
 * (with a message) when it does not fit @p size.
 */
int idmint__region_record_format(const idmint_region_record *c, char *out, size_t size);

/*
 * The text @p text back into *out (written only on success): 0, or
 * IDMINT_ESTORE (with a message) for a garbled record. Fields it does not
 * know are skipped, so a later version may add some.
 */
int idmint__region_record_parse(const char *text, idmint_region_record *out);

#endif
