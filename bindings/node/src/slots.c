/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minter ids. JS holds a small integer per Minter instead of a wrapped
 * pointer: reading a Number argument costs a few ns, where napi_unwrap() and
 * a type-tag check cost some 60 ns each, most of a next() call (measured
 * with bench/probe.c). An id is its slot's index plus one in the low 20
 * bits and the slot's generation above them, so it stays a small integer
 * (below 2^30) and an id kept after close() never reaches a later minter.
 * Any other number finds nothing, so a forged id cannot crash the process.
 */
#include "env.h"

#include <stdlib.h>

#define INDEX_BITS 20u
#define INDEX_MASK ((1u << INDEX_BITS) - 1u)
#define GEN_MASK   0x3ffu /* 10 bits: ids stay below 2^30 */

int slots_add(struct addon *ad, struct minter *m, uint32_t *id)
{
    uint32_t i;

    /* Minters are few and opening one is store I/O: a linear scan is fine. */
    for (i = 0; i < ad->n_slots; i++)
        if (ad->slots[i].m == NULL)
            break;
    if (i == ad->n_slots) {
        if (i == INDEX_MASK)
            return IDMINT_ENOMEM;
        if (i == ad->cap_slots) {
            uint32_t cap = ad->cap_slots == 0 ? 8 : ad->cap_slots * 2;
            struct slot *v = realloc(ad->slots, cap * sizeof(*v));

            if (v == NULL)
                return IDMINT_ENOMEM;
            ad->slots = v;
            ad->cap_slots = cap;
        }
        ad->slots[i].gen = 0;
        ad->n_slots++;
    }
    ad->slots[i].m = m;
    *id = (ad->slots[i].gen << INDEX_BITS) | (i + 1);
    return 0;
}

struct minter *slots_get(const struct addon *ad, uint32_t id)
{
    uint32_t i = (id & INDEX_MASK) - 1;

    /* id & INDEX_MASK == 0 wraps i to UINT32_MAX, which fails the bound. */
    if (i >= ad->n_slots || ad->slots[i].gen != id >> INDEX_BITS)
        return NULL;
    return ad->slots[i].m;
}

struct minter *slots_take(struct addon *ad, uint32_t id)
{
    struct minter *m = slots_get(ad, id);

    if (m != NULL) {
        uint32_t i = (id & INDEX_MASK) - 1;

        ad->slots[i].m = NULL;
        ad->slots[i].gen = (ad->slots[i].gen + 1) & GEN_MASK;
    }
    return m;
}

void slots_close_all(struct addon *ad)
{
    for (uint32_t i = 0; i < ad->n_slots; i++) {
        if (ad->slots[i].m != NULL) {
            idmint_close(ad->slots[i].m->h);
            free(ad->slots[i].m);
        }
    }
    free(ad->slots);
    ad->slots = NULL;
    ad->n_slots = ad->cap_slots = 0;
}

int slots_register(napi_env env, struct addon *ad, idmint *h, napi_value *out)
{
    idmint_handle_info info;
    struct minter *m;
    uint32_t id;
    int rc;

    idmint_handle_info_init(&info);
    if ((rc = idmint_info(h, &info)) != 0) {
        errors_throw(env, rc, idmint_errmsg());
        idmint_close(h);
        return -1;
    }
    if ((m = calloc(1, sizeof(*m))) == NULL || slots_add(ad, m, &id) != 0) {
        free(m);
        idmint_close(h);
        errors_throw(env, IDMINT_ENOMEM, "no room for another Minter");
        return -1;
    }
    m->h = h;
    m->is_range = info.is_range;
    m->layout = info.layout;
    NAPI_CALL_INT(env, napi_create_uint32(env, id, out));
    return 0;
}
