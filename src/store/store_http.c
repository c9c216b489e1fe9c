/* SPDX-License-Identifier: Apache-2.0 */
/* Placeholder until the http:// backend lands. */
#include "store.h"
