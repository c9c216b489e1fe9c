# SPDX-License-Identifier: Apache-2.0
# The benchmark's probe addon (probe.c): Node-API costs without libidmint.
{
  "targets": [
    {
      "target_name": "probe",
      "sources": ["probe.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags_c": ["-std=c11", "-Wall", "-Wextra", "-fvisibility=hidden"]
    }
  ]
}
