# shellcheck shell=bash
# Sourced by ci.sh and bench/bench_node.sh (bash, set -euo pipefail), with
# build_dir (an idmint CMake build tree), here (bindings/node) and scratch
# (a temp folder the caller removes) set: builds the addon against
# $build_dir/libidmint.so and the tree's include/idmint.h and exports what
# node then needs to load it.
: "${build_dir:?}" "${here:?}" "${scratch:?}"
for f in libidmint.so idmint; do
    if [ ! -e "$build_dir/$f" ]; then
        echo "$0: $build_dir/$f is missing: build idmint first" >&2
        exit 1
    fi
done

export IDMINT_INCLUDE_DIR="$here/../../include" IDMINT_LIB_DIR="$build_dir" IDMINT_WERROR=1
(cd "$here" && node tools/build.js) >"$scratch/build.log" 2>&1 || {
    cat "$scratch/build.log" >&2
    exit 1
}

# libidmint.so has initial-exec TLS (STATIC_TLS) larger than glibc's spare
# static TLS, so dlopen() of it fails in any program that did not link it
# at start. Until the library fixes that, give glibc more room (a tunable,
# read at process start) and say so.
if ! (cd "$here" && node -e "require('./build/Release/idmint.node')") 2>"$scratch/load.log"; then
    if grep -q 'static TLS' "$scratch/load.log"; then
        echo "$0: WARNING: libidmint.so cannot be dlopen()ed (static TLS block too large);" \
            "running with glibc.rtld.optional_static_tls=16384" >&2
        export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.rtld.optional_static_tls=16384"
    else
        cat "$scratch/load.log" >&2
        exit 1
    fi
fi
export IDMINT_BUILD_DIR="$build_dir" TMPDIR="$scratch"
