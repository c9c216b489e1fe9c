/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The status page's style sheet and script, compiled in from
 * cmd/idmintd/assets/ by cmake/embed.cmake: the page is served whole by the
 * daemon, with nothing fetched from anywhere else. And the API's description.
 */
#ifndef IDMINTD_STATUS_ASSETS_H
#define IDMINTD_STATUS_ASSETS_H

#include <stddef.h>

extern const unsigned char asset_status_css[]; /* NUL-terminated */
extern const size_t asset_status_css_len;      /* without the NUL */
extern const unsigned char asset_status_js[];
extern const size_t asset_status_js_len;
/* docs/openapi.json, served at GET /v1/openapi.json (routes_ops.c). */
extern const unsigned char asset_openapi_json[];
extern const size_t asset_openapi_json_len;

#endif /* IDMINTD_STATUS_ASSETS_H */
