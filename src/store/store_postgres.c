/* SPDX-License-Identifier: Apache-2.0 */
/* Placeholder until the PostgreSQL backend lands. */
#include "store.h"
