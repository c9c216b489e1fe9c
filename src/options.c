/* SPDX-License-Identifier: Apache-2.0 */
/*
 * idmint_options: their defaults, the copy of a caller's struct of any
 * header version, and the checks idmint_open makes of them. Below the
 * handle, the lease keeper and the range supply, which all read them.
 */
#include "internal.h"

#include <stddef.h>
#include <string.h>

#define DEFAULT_LEASE_MS         600000u
#define DEFAULT_RENEW_MS         60000u
#define DEFAULT_CLOCK_WAIT_MS    5000u
#define DEFAULT_REFILL_PCT       50u
#define DEFAULT_DEADLINE_MS      2000u
#define DEFAULT_RANGE_TARGET_MS  1000u /* a busy handle reserves about once a second */
#define DEFAULT_HISTORY_CHECK_MS 1000u /* a restore stops a running process within this */
#define HISTORY_CHECK_MIN_MS     10u   /* below this the checks would be the store's load */

static void options_init_size(idmint_options *opts, size_t size)
{
    memset(opts, 0, size);
    opts->size = size;
    opts->lease_ms = DEFAULT_LEASE_MS;
    opts->renew_ms = DEFAULT_RENEW_MS;
    opts->clock_wait_ms = DEFAULT_CLOCK_WAIT_MS;
    opts->refill_percent = DEFAULT_REFILL_PCT;
    opts->deadline_ms = DEFAULT_DEADLINE_MS;
    if (size > IDMINT__OPTIONS_SIZE_V1)
        opts->range_target_ms = DEFAULT_RANGE_TARGET_MS;
}

/* The old symbol: the first guarded version, for programs built against the 0.1 header. */
void(idmint_options_init)(idmint_options *opts)
{
    options_init_size(opts, IDMINT__OPTIONS_SIZE_V1);
}

void idmint_options_init_v2(idmint_options *opts)
{
    options_init_size(opts, sizeof(*opts));
}

uint32_t idmint__history_check_ms(const idmint_options *o)
{
    if (o->size <= offsetof(idmint_options, history_check_ms) || o->history_check_ms == 0)
        return DEFAULT_HISTORY_CHECK_MS;
    return o->history_check_ms < HISTORY_CHECK_MIN_MS ? HISTORY_CHECK_MIN_MS : o->history_check_ms;
}

static int options_check(const idmint_options *o)
{
    if (o->lease_ms < 100)
        return idmint__fail(IDMINT_EINVAL, "lease_ms %u is below the minimum of 100", o->lease_ms);
    if (idmint__lease_ms_check(o->lease_ms) != 0)
        return IDMINT_EINVAL;
    if (o->renew_ms == 0 || o->renew_ms >= o->lease_ms)
        return idmint__fail(IDMINT_EINVAL, "renew_ms %u must be above 0 and below lease_ms %u",
                            o->renew_ms, o->lease_ms);
    if ((o->wall_clock_ms == NULL) != (o->mono_clock_ns == NULL))
        return idmint__fail(IDMINT_EINVAL, "inject both clocks or neither");
    if (o->refill_percent > 100)
        return idmint__fail(IDMINT_EINVAL, "refill_percent %u is above 100", o->refill_percent);
    return 0;
}

int idmint__options_copy_in(const idmint_options *opts, idmint_options *out)
{
    int rc;

    /* Defaults first, then as many bytes as the caller's struct has: a
     * program built against an older header passes a smaller one, and gets
     * the defaults of what it did not know. */
    idmint_options_init_v2(out);
    if (opts != NULL) {
        rc = idmint__struct_size_check(opts->size, IDMINT__OPTIONS_SIZE_V1, sizeof(*out),
                                       "idmint_options", "idmint_options_init");
        if (rc != 0)
            return rc;
        memcpy(out, opts, opts->size);
    }
    return options_check(out);
}
