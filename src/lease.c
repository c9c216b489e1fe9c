/* SPDX-License-Identifier: Apache-2.0 */
/* Placeholder until the module lands. */
#include "internal.h"
