#!/usr/bin/env bash
# include/idmint.h compiles alone, as strict C11 and as C++.
# Usage: check_header.sh /path/to/include
set -euo pipefail
inc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "idmint.h"\nint main(void) { return idmint_strerror(IDMINT_EINVAL)[0] == 0; }\n' >"$tmp/c.c"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$inc" -c "$tmp/c.c" -o "$tmp/c.o"
cp "$tmp/c.c" "$tmp/cpp.cpp"
c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -I"$inc" -c "$tmp/cpp.cpp" -o "$tmp/cpp.o"
echo "abi: idmint.h compiles alone as C11 and C++11"
