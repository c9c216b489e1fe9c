# SPDX-License-Identifier: Apache-2.0
# The addon: C11 against node_api.h (NAPI_VERSION 8, every Node >= 16) and
# libidmint, found by tools/flags.js (IDMINT_INCLUDE_DIR / IDMINT_LIB_DIR,
# else pkg-config idmint).
{
  "targets": [
    {
      "target_name": "idmint",
      "sources": [
        "src/addon.c",
        "src/args.c",
        "src/codec.c",
        "src/convert.c",
        "src/env.c",
        "src/errors.c",
        "src/minter.c",
        "src/open.c",
        "src/slots.c"
      ],
      "include_dirs": ["<!@(node tools/flags.js include)"],
      "defines": ["NAPI_VERSION=8", "_POSIX_C_SOURCE=200809L"],
      "cflags_c": [
        "-std=c11",
        "-Wall", "-Wextra", "-Wshadow", "-Wstrict-prototypes", "-Wmissing-prototypes",
        "-Wformat=2", "-Wwrite-strings", "-Wvla", "-Wconversion", "-Wsign-conversion",
        "-Wimplicit-fallthrough", "-fvisibility=hidden",
        "<!@(node tools/flags.js werror)"
      ],
      "libraries": ["<!@(node tools/flags.js libs)"],
      "ldflags": ["<!@(node tools/flags.js rpath)"]
    }
  ]
}
