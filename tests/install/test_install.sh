#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs BUILD_DIR into a temporary prefix and checks every file there,
# builds examples/c/hello.c against it four ways (pkg-config and
# find_package, shared and static) and runs them, and examples/java/Hello.java
# against its jar; then builds the five Debian packages twice (revision R
# and R+1, $IDMINT_DEB_REVISION), inspects them, runs lintian on all ten
# (any error or warning fails),
# installs the first build with apt-get, uses it, upgrades to the second,
# uses it again, then removes and purges each package.
# It runs as root on the CI machine itself (register it RUN_SERIAL): the
# package part only runs where it can leave the machine as it found it, and
# prints "SKIP: reason" otherwise.
# Usage: test_install.sh SRC_DIR BUILD_DIR
set -euo pipefail

usage="usage: test_install.sh SRC_DIR BUILD_DIR"
SRC=$(cd "${1:?$usage}" && pwd)
BUILD=$(cd "${2:?$usage}" && pwd)
T=$(mktemp -d)
chmod 755 "$T" # the idmint user runs programs from here
export LC_ALL=C DEBIAN_FRONTEND=noninteractive
unset IDMINT_AUTHORITY IDMINT_CONFIG IDMINT_TOKEN
APT=(apt-get -y -q -o DPkg::Lock::Timeout=120)
# With pipefail, "cmd | grep -q" fails when grep stops reading early: every
# grep -q below reads a here-string instead.

pkg_touched=0 # 1 from the moment apt-get may have changed the machine
daemon_pid=""
die() {
    echo "FAIL: $*" >&2
    exit 1
}
ok() { echo "ok: $*"; }
skip() {
    echo "**********************************************************************"
    echo "SKIP: $*"
    echo "**********************************************************************"
    exit 0
}
skip_package() { skip "the packages' install, upgrade, remove and purge: $*"; }
# "" or "un " when dpkg does not know PKG (it forgets a purged package).
pkg_state() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true; }
pkg_gone() { case "$(pkg_state "$1")" in "" | "un ") return 0 ;; *) return 1 ;; esac; }
PKGS=() # the four package names, once known (section 3)

# Undoes what the package part did, whatever point it failed at. Only runs
# when every path and name it deletes was absent before (checked below).
restore_machine() {
    if [ -n "$daemon_pid" ]; then
        kill "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    [ "$pkg_touched" -eq 1 ] || return 0
    local p left=()
    for p in "${PKGS[@]}"; do pkg_gone "$p" || left+=("$p"); done
    if [ "${#left[@]}" -gt 0 ]; then
        "${APT[@]}" purge "${left[@]}" >/dev/null 2>&1 || dpkg --purge "${left[@]}" >/dev/null 2>&1 || true
    fi
    if getent passwd idmint >/dev/null; then userdel idmint 2>/dev/null || true; fi
    if getent group idmint >/dev/null; then groupdel idmint 2>/dev/null || true; fi
    rm -rf /var/lib/idmint /var/log/idmint /etc/idmint
    local added
    added=$(comm -13 "$T/packages.before" <(installed_packages) | grep -vxF -f <(printf '%s\n' "${PKGS[@]}") || true)
    if [ -n "$added" ]; then
        # shellcheck disable=SC2086 # one word per package
        "${APT[@]}" purge $added >/dev/null 2>&1 || true
    fi
}
trap 'restore_machine; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP # bash runs no EXIT trap on a fatal signal

installed_packages() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 ~ /^.i/ {print $2}' | sort; }

cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
if [ -n "$(cache IDMINT_SANITIZE)" ]; then
    skip "$BUILD is a sanitizer build (IDMINT_SANITIZE=$(cache IDMINT_SANITIZE)): a program outside it cannot load its libidmint.so"
fi
LIBDIR=$(cache CMAKE_INSTALL_LIBDIR)
MANDIR=$(cache CMAKE_INSTALL_MANDIR)
MANDIR=${MANDIR:-share/man} # GNUInstallDirs leaves the cache entry empty for its default
UNITDIR=$(cache IDMINT_INSTALL_UNITDIR)
for d in "$LIBDIR" "$MANDIR" "$UNITDIR"; do
    case "$d" in "" | /*) die "expected install folders relative to the prefix in $BUILD/CMakeCache.txt, got '$d'" ;; esac
done
# The version the header promises is the one every file must carry.
hver() { sed -n "s/^#define IDMINT_VERSION_$1 \\([0-9][0-9]*\\)\$/\\1/p" "$SRC/include/idmint.h"; }
MAJOR=$(hver MAJOR) MINOR=$(hver MINOR) PATCH=$(hver PATCH)
[ -n "$MAJOR" ] && [ -n "$MINOR" ] && [ -n "$PATCH" ] || die "no IDMINT_VERSION_* in idmint.h"
VERSION=$MAJOR.$MINOR.$PATCH

# ---- 1. cmake --install into a temporary prefix ----
P=$T/prefix
cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1 || die "cmake --install: $(cat "$T/install.log")"
L=$P/$LIBDIR

[ "$(readlink "$L/libidmint.so")" = "libidmint.so.$MAJOR" ] || die "libidmint.so -> '$(readlink "$L/libidmint.so")'"
[ "$(readlink "$L/libidmint.so.$MAJOR")" = "libidmint.so.$VERSION" ] ||
    die "libidmint.so.$MAJOR -> '$(readlink "$L/libidmint.so.$MAJOR")'"
REAL=$L/libidmint.so.$VERSION
[ -f "$REAL" ] && [ ! -L "$REAL" ] || die "$REAL is not a file"
soname=$(readelf -d "$REAL" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libidmint.so.$MAJOR" ] || die "SONAME '$soname', not libidmint.so.$MAJOR"
ok "libidmint.so -> libidmint.so.$MAJOR -> libidmint.so.$VERSION, SONAME $soname"

exports=$(nm -D --defined-only "$REAL" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
[ -n "$exports" ] || die "the installed libidmint.so exports nothing"
if grep -v '^idmint_' <<<"$exports"; then die "exports without the idmint_ prefix (above)"; fi
diff -u "$SRC/tests/abi/exports.txt" <(echo "$exports") || die "installed exports differ from tests/abi/exports.txt"
ok "the installed libidmint.so exports the $(wc -l <<<"$exports") idmint_* symbols of tests/abi/exports.txt only"

[ "$(nm --defined-only "$L/libidmint.a" 2>/dev/null | awk '$2 == "T" && $3 == "idmint_open"')" ] ||
    die "$L/libidmint.a does not define idmint_open"
cmp -s "$SRC/include/idmint.h" "$P/include/idmint.h" || die "include/idmint.h not installed as is"
for page in man1/idmint.1 man8/idmintd.8; do
    cmp -s "$SRC/docs/man/${page#*/}" <(gzip -dc "$P/$MANDIR/$page.gz") || die "$page.gz in $MANDIR is not docs/man/${page#*/}"
done
[ "$("$P/bin/idmint" --version)" = "idmint $VERSION" ] || die "bin/idmint --version: $("$P/bin/idmint" --version)"
grep -qx "idmintd $VERSION (libidmint $VERSION)" <<<"$("$P/bin/idmintd" --version)" ||
    die "bin/idmintd --version: $("$P/bin/idmintd" --version)"
cmp -s "$SRC/dist/idmintd.conf" "$P/etc/idmint/idmintd.conf" || die "etc/idmint/idmintd.conf is not dist/idmintd.conf"
[ "$(stat -c %a "$P/etc/idmint/idmintd.conf")" = 640 ] || die "idmintd.conf has mode $(stat -c %a "$P/etc/idmint/idmintd.conf")"
UNIT=$P/$UNITDIR/idmintd.service
grep -qx "ExecStart=$P/bin/idmintd --config $P/etc/idmint/idmintd.conf" "$UNIT" ||
    die "the unit does not start this prefix's daemon with its config: $(grep ExecStart "$UNIT")"
grep -qx "User=idmint" "$UNIT" || die "the unit does not run as idmint"
for f in idmintConfig.cmake idmintConfigVersion.cmake idmintTargets.cmake; do
    [ -f "$L/cmake/idmint/$f" ] || die "no $LIBDIR/cmake/idmint/$f"
done
# Nothing installed may point back at the tree it was built from.
if grep -rIlF -e "$SRC" -e "$BUILD" "$P"; then die "installed files name $SRC or $BUILD (above)"; fi
ok "header, static library, idmint, idmintd, man pages, unit, config and CMake package in place"

export PKG_CONFIG_PATH=$L/pkgconfig
[ "$(pkg-config --modversion idmint)" = "$VERSION" ] || die "idmint.pc version $(pkg-config --modversion idmint)"
[ "$(pkg-config --variable=libdir idmint)" = "$L" ] || die "idmint.pc libdir $(pkg-config --variable=libdir idmint)"
pkg-config --validate idmint || die "pkg-config --validate idmint"
ok "idmint.pc: version $VERSION, libdir $L"

# ---- 2. hello.c against the prefix: pkg-config and find_package, shared and static ----
HELLO=$SRC/examples/c/hello.c
CFLAGS=(-std=c11 -Wall -Wextra -Wpedantic -Werror)
# shellcheck disable=SC2046 # pkg-config prints flags to split
cc "${CFLAGS[@]}" $(pkg-config --cflags idmint) "$HELLO" -o "$T/hello_pc" $(pkg-config --libs idmint) \
    -Wl,-rpath,"$(pkg-config --variable=libdir idmint)" || die "hello.c with pkg-config --cflags --libs idmint"
# Static: libidmint.a and Libs.private alone, which must carry what it calls.
private=$(pkg-config --static --libs-only-l idmint)
private=${private/-lidmint/}
# shellcheck disable=SC2046,SC2086
cc "${CFLAGS[@]}" $(pkg-config --cflags idmint) "$HELLO" -o "$T/hello_pc_static" "$L/libidmint.a" $private ||
    die "hello.c with libidmint.a and Libs.private ($private)"
for variant in shared static; do
    on=OFF
    [ "$variant" = shared ] || on=ON
    cmake -S "$SRC/examples/c" -B "$T/cmake_$variant" -DCMAKE_PREFIX_PATH="$P" -DHELLO_STATIC=$on \
        -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$T/cmake_$variant.log" 2>&1 &&
        cmake --build "$T/cmake_$variant" >>"$T/cmake_$variant.log" 2>&1 ||
        die "examples/c with find_package(idmint), $variant: $(cat "$T/cmake_$variant.log")"
    cp "$T/cmake_$variant/hello" "$T/hello_cmake_$variant"
done
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
for h in hello_pc hello_cmake_shared; do
    grep -qx "libidmint.so.$MAJOR" <<<"$(needed "$T/$h")" || die "$h does not load libidmint.so.$MAJOR"
    grep -q "=> $L/libidmint.so.$MAJOR " <<<"$(ldd "$T/$h")" || die "$h loads another libidmint: $(ldd "$T/$h")"
done
for h in hello_pc_static hello_cmake_static; do
    if needed "$T/$h" | grep libidmint; then die "$h is meant to hold libidmint.a, yet loads the above"; fi
done

# Four programs, one authority: 5 increasing IDs each, 20 distinct in all.
: >"$T/all_ids"
for h in hello_pc hello_pc_static hello_cmake_shared hello_cmake_static; do
    "$T/$h" "sqlite:$T/hello.db" >"$T/$h.out" 2>"$T/$h.err" || die "$h failed: $(cat "$T/$h.err")"
    [ "$(grep -cxE '[1-9][0-9]*' "$T/$h.out")" -eq 5 ] && [ "$(wc -l <"$T/$h.out")" -eq 5 ] ||
        die "$h printed, instead of 5 IDs: $(cat "$T/$h.out")"
    sort -n -c "$T/$h.out" 2>/dev/null || die "$h printed IDs out of order: $(cat "$T/$h.out")"
    cat "$T/$h.out" >>"$T/all_ids"
done
[ "$(sort -u "$T/all_ids" | wc -l)" -eq 20 ] || die "the four programs repeated an ID: $(sort "$T/all_ids" | uniq -d)"
if "$T/hello_pc" "sqlite:$T/no-such-dir/x.db" >"$T/bad.out" 2>"$T/bad.err"; then
    die "hello succeeded on an authority in a missing folder"
fi
grep -q "^hello: sqlite:$T/no-such-dir/x.db: " "$T/bad.err" || die "hello's error names no authority: $(cat "$T/bad.err")"
[ ! -s "$T/bad.out" ] || die "hello printed IDs on failure: $(cat "$T/bad.out")"
ok "hello built 4 ways (pkg-config/find_package x shared/static) minted 20 distinct IDs; a bad authority fails"

# The Java binding: the jar and its JNI library, and Hello.java run against them.
[ -f "$BUILD/java/idmint.jar" ] || die "$BUILD has no Java binding (java/idmint.jar): install default-jdk-headless and configure again"
JAR=$P/share/java/idmint-$VERSION.jar
[ -f "$JAR" ] && [ "$(readlink "$P/share/java/idmint.jar")" = "idmint-$VERSION.jar" ] ||
    die "share/java: $(ls -l "$P/share/java" 2>&1)"
[ -f "$L/jni/libidmint_jni.so" ] || die "no $LIBDIR/jni/libidmint_jni.so"
grep -qx "libidmint.so.$MAJOR" <<<"$(needed "$L/jni/libidmint_jni.so")" || die "libidmint_jni.so does not load libidmint.so.$MAJOR"
LD_LIBRARY_PATH=$L java -Didmint.jni="$L/jni/libidmint_jni.so" -cp "$JAR" "$SRC/examples/java/Hello.java" \
    "sqlite:$T/hello.db" >"$T/hello_java.out" 2>"$T/hello_java.err" || die "Hello.java failed: $(cat "$T/hello_java.err")"
[ "$(grep -cxE '[1-9][0-9]*' "$T/hello_java.out")" -eq 5 ] || die "Hello.java printed: $(cat "$T/hello_java.out")"
[ "$(cat "$T/all_ids" "$T/hello_java.out" | sort -u | wc -l)" -eq 25 ] || die "Hello.java repeated an ID of the C programs"
ok "idmint-$VERSION.jar and jni/libidmint_jni.so installed; Hello.java minted 5 more distinct IDs from the same authority"


# ---- 3. the Debian packages: build twice, inspect, lintian ----
REV=$(cache IDMINT_DEB_REVISION)
REV=${REV:-1}
NEXT=$((REV + 1))
ARCH=$(dpkg --print-architecture)
LIBPKG=libidmint$MAJOR # named for the soname
PKGS=("$LIBPKG" libidmint-dev idmint idmintd libidmint-java)
# The same tree packed twice, the second with the next revision: the
# upgrade below installs one over the other.
for rev in "$REV" "$NEXT"; do
    IDMINT_DEB_REVISION=$rev cpack --config "$BUILD/CPackConfig.cmake" -B "$T/deb$rev" >"$T/cpack$rev.log" 2>&1 ||
        die "cpack (revision $rev): $(cat "$T/cpack$rev.log")"
    for p in "${PKGS[@]}"; do
        [ -f "$T/deb$rev/${p}_$VERSION-${rev}_$ARCH.deb" ] || die "no ${p}_$VERSION-${rev}_$ARCH.deb: $(ls "$T/deb$rev")"
    done
    [ "$(ls "$T/deb$rev"/*.deb | wc -l)" -eq 5 ] || die "cpack made more than the five packages: $(ls "$T/deb$rev")"
done
deb() { echo "$T/deb$2/${1}_$VERSION-${2}_$ARCH.deb"; } # PKG REV
field() { dpkg-deb -f "$(deb "$1" "$NEXT")" "$2"; }
has_dep() { grep -qE "(^|, )$2( |,|$)" <<<"$1"; } # LIST PKG

for p in "${PKGS[@]}"; do
    [ "$(field "$p" Package)" = "$p" ] && [ "$(field "$p" Version)" = "$VERSION-$NEXT" ] ||
        die "$p: Package/Version $(field "$p" Package) $(field "$p" Version)"
    [ "$(field "$p" Source)" = idmint ] || die "$p: Source '$(field "$p" Source)'"
done
# A program that only links libidmint gets SQLite, Jansson and OpenSSL's
# libcrypto (libssl3: UUIDv7's random stream), never the daemon's libraries.
lib_depends=$(field "$LIBPKG" Depends)
for dep in libc6 libsqlite3-0 libjansson4 libssl3; do
    has_dep "$lib_depends" $dep || die "$LIBPKG Depends lacks $dep: $lib_depends"
done
if grep -qE 'h2o|inih|libpq|libcurl|adduser' <<<"$lib_depends"; then die "$LIBPKG depends on more than it links: $lib_depends"; fi
cli_depends=$(field idmint Depends)
if grep -qE 'h2o|inih|adduser' <<<"$cli_depends"; then die "idmint depends on the daemon's libraries: $cli_depends"; fi
d_depends=$(field idmintd Depends)
for dep in adduser libc6 libsqlite3-0 libjansson4 'libh2o-evloop[0-9.]*' 'libinih[0-9]*'; do
    has_dep "$d_depends" "$dep" || die "idmintd Depends lacks $dep: $d_depends"
done
[ "$(field libidmint-dev Depends)" = "$LIBPKG (= $VERSION-$NEXT)" ] || die "libidmint-dev Depends: $(field libidmint-dev Depends)"
java_depends=$(field libidmint-java Depends)
has_dep "$java_depends" "$LIBPKG \(= $VERSION-$NEXT\)" || die "libidmint-java Depends lacks $LIBPKG (= $VERSION-$NEXT): $java_depends"
if grep -qE 'jre|jdk|java[0-9]*-runtime|h2o|inih' <<<"$java_depends"; then die "libidmint-java depends on more than it links: $java_depends"; fi
for p in "$LIBPKG" idmint idmintd; do
    if grep -qE 'libpq|libcurl' <<<"$(field "$p" Depends)"; then die "$p Depends names a dlopen()ed library: $(field "$p" Depends)"; fi
    for dep in libpq5 libcurl4; do
        has_dep "$(field "$p" Recommends)" $dep || die "$p Recommends lacks $dep: $(field "$p" Recommends)"
    done
done
ok "Depends: $LIBPKG ($lib_depends), idmint ($cli_depends), idmintd (+ h2o, inih), libidmint-dev on $LIBPKG (= $VERSION-$NEXT)"

D=/usr/$LIBDIR
declare -A FILES=(
    [$LIBPKG]="$D/libidmint.so.$VERSION $D/libidmint.so.$MAJOR"
    [libidmint-dev]="/usr/include/idmint.h $D/libidmint.so $D/libidmint.a $D/pkgconfig/idmint.pc $D/cmake/idmint/idmintConfig.cmake $D/cmake/idmint/idmintConfigVersion.cmake $D/cmake/idmint/idmintTargets.cmake"
    [idmint]="/usr/bin/idmint /usr/$MANDIR/man1/idmint.1.gz"
    [idmintd]="/usr/bin/idmintd /usr/$MANDIR/man8/idmintd.8.gz /usr/$UNITDIR/idmintd.service /etc/idmint/idmintd.conf"
    [libidmint-java]="/usr/share/java/idmint-$VERSION.jar /usr/share/java/idmint.jar $D/jni/libidmint_jni.so"
)
: >"$T/all.paths"
for p in "${PKGS[@]}"; do
    dpkg-deb -c "$(deb "$p" "$NEXT")" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort >"$T/$p.paths"
    # shellcheck disable=SC2086 # one word per path
    for f in ${FILES[$p]} /usr/share/doc/$p/copyright /usr/share/doc/$p/changelog.Debian.gz; do
        grep -qxF "$f" "$T/$p.paths" || die "$p lacks $f"
    done
    if grep -vE '^/(usr|etc)(/|$)' "$T/$p.paths"; then die "$p installs outside /usr and /etc (above)"; fi
    if grep -E '/(man[1-9]/[^/]*[1-9]|changelog(\.Debian)?)$' "$T/$p.paths"; then die "$p has an uncompressed man page or changelog (above)"; fi
    dpkg-deb -x "$(deb "$p" "$NEXT")" "$T/root-$p"
    cmp -s "$SRC/dist/debian/copyright" "$T/root-$p/usr/share/doc/$p/copyright" || die "$p's copyright is not dist/debian/copyright"
    head -n 1 <(gzip -dc "$T/root-$p/usr/share/doc/$p/changelog.Debian.gz") | grep -qxF "idmint ($VERSION-$NEXT) unstable; urgency=medium" ||
        die "$p's changelog does not start with $VERSION-$NEXT: $(gzip -dc "$T/root-$p/usr/share/doc/$p/changelog.Debian.gz" | head -n 1)"
    dpkg-deb -e "$(deb "$p" "$NEXT")" "$T/control-$p"
    while read -r f; do [ -d "$T/root-$p$f" ] || echo "$f"; done <"$T/$p.paths" >>"$T/all.paths"
done
# Every file (not folder) in one package only: all.paths, what the purge must remove.
dup=$(sort "$T/all.paths" | uniq -d)
[ -z "$dup" ] || die "files in two packages: $dup"
grep -qx "ExecStart=/usr/bin/idmintd --config /etc/idmint/idmintd.conf" "$T/root-idmintd/usr/$UNITDIR/idmintd.service" ||
    die "the package's unit: $(grep ExecStart "$T/root-idmintd/usr/$UNITDIR/idmintd.service")"
grep -qx "prefix=/usr" "$T/root-libidmint-dev$D/pkgconfig/idmint.pc" || die "the package's idmint.pc: $(head -1 "$T/root-libidmint-dev$D/pkgconfig/idmint.pc")"
[ "$(readlink "$T/root-libidmint-dev$D/libidmint.so")" = "libidmint.so.$MAJOR" ] || die "libidmint-dev's libidmint.so -> $(readlink "$T/root-libidmint-dev$D/libidmint.so")"

for s in postinst prerm postrm; do
    cmp -s "$SRC/dist/debian/idmintd.$s" "$T/control-idmintd/$s" || die "idmintd's $s is not dist/debian/idmintd.$s"
    [ -x "$T/control-idmintd/$s" ] && sh -n "$T/control-idmintd/$s" || die "idmintd's $s is not an executable sh script"
done
grep -qx /etc/idmint/idmintd.conf "$T/control-idmintd/conffiles" || die "idmintd.conf is not a conffile"
grep -qx "activate-noawait ldconfig" "$T/control-$LIBPKG/triggers" || die "$LIBPKG has no ldconfig trigger"
grep -qx "libidmint $MAJOR $LIBPKG (>= $MAJOR.$MINOR.0), $LIBPKG (<< $MAJOR.$((MINOR + 1))~)" "$T/control-$LIBPKG/shlibs" ||
    die "shlibs: $(cat "$T/control-$LIBPKG/shlibs")"
for p in "$LIBPKG" libidmint-dev idmint libidmint-java; do
    for s in preinst postinst prerm postrm; do
        [ ! -e "$T/control-$p/$s" ] || die "$p has a $s, which it has no use for"
    done
done
ok "five packages: files, copyright, changelog.Debian.gz ($VERSION-$NEXT), gzipped man pages, shlibs, trigger, conffile, maintainer scripts"

command -v lintian >/dev/null || die "no lintian (apt-get install lintian; scripts/deps.sh test installs it)"
# Default profile; lintian warns when run as root, which is not about the packages.
lintian "$T/deb$REV"/*.deb "$T/deb$NEXT"/*.deb >"$T/lintian.log" 2>&1 || true
if grep -E '^[EW]: ' "$T/lintian.log"; then die "lintian found the errors and warnings above"; fi
if grep -vE '^([IPNXO]: |running with root privileges is not recommended!$)' "$T/lintian.log"; then
    die "lintian did not run cleanly (above)"
fi
ok "lintian: no error and no warning in the 10 packages ($(grep -c '^I: ' "$T/lintian.log") info tags)"

# ---- 4. the packages: install, use, upgrade, use again, remove, purge ----
[ "$(id -u)" -eq 0 ] || skip_package "not root"
command -v apt-get >/dev/null || skip_package "no apt-get"
for p in "${PKGS[@]}"; do
    pkg_gone "$p" || skip_package "dpkg already knows a package $p (state '$(pkg_state "$p")')"
done
getent passwd idmint >/dev/null && skip_package "a user idmint exists: the package would adopt it"
getent group idmint >/dev/null && skip_package "a group idmint exists: the package would adopt it"
[ ! -e /var/lib/idmint ] || skip_package "/var/lib/idmint exists (root's default authority, which tests never use): the package would take it over and the purge delete it"
for d in /var/log/idmint /etc/idmint; do
    [ ! -e "$d" ] || skip_package "$d exists: the purge would delete it"
done
while read -r f; do
    if [ -e "$f" ] || [ -L "$f" ]; then skip_package "$f exists: a package would replace it, then remove it"; fi
done <"$T/all.paths"
installed_packages >"$T/packages.before"

debs() { for p in "${PKGS[@]}"; do deb "$p" "$1"; done; } # REV
versions() { for p in "${PKGS[@]}"; do printf '%s %s\n' "$p" "$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$p")"; done; }
want_versions() { for p in "${PKGS[@]}"; do printf '%s ii %s\n' "$p" "$VERSION-$1"; done; }
# As the packaged service runs: no IDMINT_WITNESS_DIR (ctest points it into
# the build tree, which the idmint user may not write), so the witness goes
# where a service user's goes by default, under its home.
as_idmint() { setpriv --reuid=idmint --regid=idmint --init-groups env -u IDMINT_WITNESS_DIR HOME=/var/lib/idmint "$@"; }

# The state the daemon package owns, after an install and after an upgrade.
check_daemon_state() { # WHEN
    local uid gid home shell links
    IFS=: read -r _ _ uid gid _ home shell <<<"$(getent passwd idmint)" || die "$1: no user idmint"
    [ "$uid" -ge 100 ] && [ "$uid" -lt 1000 ] || die "$1: idmint has uid $uid, not a system uid"
    [ "$(getent group idmint | cut -d: -f3)" = "$gid" ] || die "$1: idmint's primary group is not idmint"
    [ "$home" = /var/lib/idmint ] && [ "$shell" = /usr/sbin/nologin ] || die "$1: idmint: home $home, shell $shell"
    # Not world-readable: the authority holds every lease and range granted.
    [ "$(stat -c '%a %U %G' /var/lib/idmint)" = "750 idmint idmint" ] ||
        die "$1: /var/lib/idmint: $(stat -c '%a %U %G' /var/lib/idmint)"
    [ "$(stat -c '%a %U %G' /etc/idmint/idmintd.conf)" = "640 root idmint" ] ||
        die "$1: /etc/idmint/idmintd.conf: $(stat -c '%a %U %G' /etc/idmint/idmintd.conf)"
    [ -f "/usr/$UNITDIR/idmintd.service" ] || die "$1: no /usr/$UNITDIR/idmintd.service"
    links=$(find /etc/systemd/system -name 'idmintd.service' 2>/dev/null || true)
    [ -z "$links" ] || die "$1: the package enabled idmintd: $links"
    if [ -d /run/systemd/system ]; then
        [ "$(systemctl is-enabled idmintd.service 2>/dev/null || true)" = disabled ] ||
            die "$1: systemctl is-enabled idmintd: $(systemctl is-enabled idmintd.service 2>&1)"
        ! systemctl is-active -q idmintd.service || die "$1: the package started idmintd"
    fi
    ! pgrep -u idmint >/dev/null || die "$1: something runs as idmint: $(pgrep -a -u idmint)"
    [ "$(/usr/bin/idmint --version)" = "idmint $VERSION" ] || die "$1: /usr/bin/idmint --version: $(/usr/bin/idmint --version)"
    grep -q "libidmint.so.$MAJOR " <<<"$(ldconfig -p)" || die "$1: the ldconfig trigger did not run: libidmint.so.$MAJOR is not in the cache"
}

# The CLI and the daemon, as the idmint user, on the packaged config and
# the state folder: 5 IDs each, appended to $T/pkg.ids.
mint_both() { # WHEN
    local url
    as_idmint /usr/bin/idmint --authority sqlite:/var/lib/idmint/idmint.db mint -n 5 >"$T/cli.ids" ||
        die "$1: idmint could not mint into /var/lib/idmint as the idmint user"
    [ "$(sort -u "$T/cli.ids" | grep -cxE '[1-9][0-9]*')" -eq 5 ] || die "$1: idmint mint -n 5 printed: $(cat "$T/cli.ids")"
    rm -f "$T/run/port"
    # Not through as_idmint: $! must be idmintd itself (setpriv and env exec it).
    setpriv --reuid=idmint --regid=idmint --init-groups env -u IDMINT_WITNESS_DIR HOME=/var/lib/idmint \
        /usr/bin/idmintd --config /etc/idmint/idmintd.conf --listen 127.0.0.1:0 \
        --port-file "$T/run/port" 2>"$T/idmintd.err" &
    daemon_pid=$!
    for _ in $(seq 100); do
        [ -s "$T/run/port" ] || ! kill -0 "$daemon_pid" 2>/dev/null && break
        sleep 0.1
    done
    [ -s "$T/run/port" ] || die "$1: idmintd as idmint with /etc/idmint/idmintd.conf did not start: $(cat "$T/idmintd.err")"
    url="http://127.0.0.1:$(cat "$T/run/port")"
    curl -sf -H 'Accept: text/plain' "$url/v1/ids?count=5" >"$T/daemon.ids" || die "$1: GET /v1/ids failed: $(cat "$T/idmintd.err")"
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" || die "$1: idmintd exited $? on SIGTERM: $(cat "$T/idmintd.err")"
    daemon_pid=""
    cat "$T/cli.ids" "$T/daemon.ids" >>"$T/pkg.ids"
    [ "$(grep -cxE '[1-9][0-9]*' "$T/pkg.ids")" -eq "$(sort -u "$T/pkg.ids" | wc -l)" ] ||
        die "$1: an ID repeated on one authority: $(sort "$T/pkg.ids" | uniq -d)"
}

pkg_touched=1
# shellcheck disable=SC2046 # one path per package
"${APT[@]}" install $(debs "$REV") >"$T/apt-install.log" 2>&1 || die "apt-get install: $(cat "$T/apt-install.log")"
[ "$(versions)" = "$(want_versions "$REV")" ] || die "after apt-get install: $(versions)"
check_daemon_state "install"
if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify "/usr/$UNITDIR/idmintd.service" >"$T/verify.log" 2>&1 ||
        die "systemd-analyze verify idmintd.service: $(cat "$T/verify.log")"
fi
ok "installed $VERSION-$REV: system user idmint, /var/lib/idmint 750 idmint:idmint, idmintd.conf 640 root:idmint, idmintd.service not enabled, nothing running as idmint"

# shellcheck disable=SC2046
env -u PKG_CONFIG_PATH cc "${CFLAGS[@]}" $(env -u PKG_CONFIG_PATH pkg-config --cflags idmint) "$HELLO" \
    -o "$T/hello_system" $(env -u PKG_CONFIG_PATH pkg-config --libs idmint) || die "hello.c against /usr"
[ "$(needed "$T/hello_system" | grep -c libidmint)" -eq 1 ] || die "hello against /usr does not load libidmint.so.$MAJOR"
[ "$("$T/hello_system" "sqlite:$T/system.db" | wc -l)" -eq 5 ] || die "hello against /usr did not mint 5 IDs"
mkdir "$T/run" && chown idmint:idmint "$T/run"
: >"$T/pkg.ids"
mint_both "$VERSION-$REV"
ok "$VERSION-$REV: hello.c built against /usr; idmint and idmintd (as idmint, packaged config) mint 10 distinct IDs from /var/lib/idmint/idmint.db"
# Debian's JVM finds the JNI library in $D/jni by itself: no flag, no LD_LIBRARY_PATH.
java -cp /usr/share/java/idmint.jar "$SRC/examples/java/Hello.java" "sqlite:$T/system.db" >"$T/hello_java_system.out" 2>&1 ||
    die "Hello.java against /usr/share/java/idmint.jar: $(cat "$T/hello_java_system.out")"
[ "$(grep -cxE '[1-9][0-9]*' "$T/hello_java_system.out")" -eq 5 ] || die "Hello.java against /usr printed: $(cat "$T/hello_java_system.out")"
ok "$VERSION-$REV: Hello.java against /usr/share/java/idmint.jar minted 5 IDs, its JNI library found on the JVM's own path"

# The upgrade keeps an operator's edit, the owners and modes, the authority
# (IDs minted after it are new ones) and a stopped daemon stopped.
echo "; edited by test_install.sh" >>/etc/idmint/idmintd.conf
# shellcheck disable=SC2046
"${APT[@]}" install $(debs "$NEXT") >"$T/apt-upgrade.log" 2>&1 || die "apt-get install (upgrade): $(cat "$T/apt-upgrade.log")"
[ "$(versions)" = "$(want_versions "$NEXT")" ] || die "after the upgrade: $(versions)"
[ "$(tail -n 1 /etc/idmint/idmintd.conf)" = "; edited by test_install.sh" ] || die "the upgrade replaced the edited config"
check_daemon_state "upgrade"
mint_both "$VERSION-$NEXT"
ok "upgraded to $VERSION-$NEXT: the edited config, owners and modes kept, not enabled or started; 20 distinct IDs across the upgrade"

# Remove the daemon first, then the CLI, then the library with its -dev.
"${APT[@]}" remove idmintd >"$T/apt-remove.log" 2>&1 || die "apt-get remove idmintd: $(cat "$T/apt-remove.log")"
[ "$(pkg_state idmintd)" = "rc " ] || die "idmintd is not in state config-files after remove: '$(pkg_state idmintd)'"
[ ! -e /usr/bin/idmintd ] || die "remove left /usr/bin/idmintd"
[ -f /etc/idmint/idmintd.conf ] && [ -s /var/lib/idmint/idmint.db ] || die "remove deleted the config or the authority"
[ -x /usr/bin/idmint ] && [ "$(pkg_state "$LIBPKG")" = "ii " ] || die "removing idmintd removed the CLI or the library"
"${APT[@]}" remove idmint libidmint-dev libidmint-java "$LIBPKG" >>"$T/apt-remove.log" 2>&1 || die "apt-get remove: $(cat "$T/apt-remove.log")"
for p in idmint libidmint-dev libidmint-java "$LIBPKG"; do
    case "$(pkg_state "$p")" in "" | "un " | "rc ") ;; *) die "$p: state '$(pkg_state "$p")' after remove" ;; esac
done
[ ! -e /usr/bin/idmint ] && [ ! -e "$D/libidmint.so.$VERSION" ] && [ ! -e /usr/include/idmint.h ] &&
    [ ! -e /usr/share/java/idmint.jar ] || die "remove left the programs, the library or the jar"
if ldconfig -p | grep "libidmint.so"; then die "the linker cache still lists libidmint after remove (above)"; fi
ok "apt-get remove, package by package: files gone, config and authority kept"

# dpkg forgets a removed package that left no conffile behind: purge the rest.
left=()
for p in "${PKGS[@]}"; do pkg_gone "$p" || left+=("$p"); done
[ "${#left[@]}" -gt 0 ] || die "no package is left in state config-files, not even idmintd"
"${APT[@]}" purge "${left[@]}" >"$T/apt-purge.log" 2>&1 || die "apt-get purge ${left[*]}: $(cat "$T/apt-purge.log")"
for p in "${PKGS[@]}"; do
    pkg_gone "$p" || die "dpkg still knows $p after purge: '$(pkg_state "$p")'"
done
while read -r f; do
    if [ -e "$f" ] || [ -L "$f" ]; then die "$f survived the purge"; fi
done <"$T/all.paths"
for d in /var/lib/idmint /var/log/idmint /etc/idmint; do
    [ ! -e "$d" ] || die "$d survived the purge: $(ls -la "$d")"
done
[ ! -e /var/lib/systemd/deb-systemd-helper-enabled/idmintd.service.dsh-also ] || die "deb-systemd-helper state survived"
ok "apt-get purge: files, config, /var/lib/idmint and /var/log/idmint gone"

# The user stays after a purge (dist/debian/idmintd.postrm says why); this test made it, so it goes.
getent passwd idmint >/dev/null || die "the purge removed the user idmint, which postrm says it keeps"
restore_machine
pkg_touched=0
getent passwd idmint >/dev/null && die "could not delete the user idmint"
comm -13 "$T/packages.before" <(installed_packages) | grep . && die "packages the test installed are left (above)"
ok "the machine is as it was: no idmint user, group, package or new dependency"
