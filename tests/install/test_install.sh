#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs BUILD_DIR into a temporary prefix and checks every file there,
# builds examples/c/hello.c against it four ways (pkg-config and
# find_package, shared and static) and runs them; then builds the .deb,
# inspects it, installs it with apt-get, uses it, removes and purges it.
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
skip_package() { skip "the .deb's install, remove and purge: $*"; }
# "" or "un " when dpkg does not know idmint (it forgets a purged package).
pkg_state() { dpkg-query -W -f='${db:Status-Abbrev}' idmint 2>/dev/null || true; }

# Undoes what the package part did, whatever point it failed at. Only runs
# when every path and name it deletes was absent before (checked below).
restore_machine() {
    if [ -n "$daemon_pid" ]; then
        kill "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    [ "$pkg_touched" -eq 1 ] || return 0
    case "$(pkg_state)" in
    "" | "un ") ;;
    *) "${APT[@]}" purge idmint >/dev/null 2>&1 || dpkg --purge idmint >/dev/null 2>&1 || true ;;
    esac
    if getent passwd idmint >/dev/null; then userdel idmint 2>/dev/null || true; fi
    if getent group idmint >/dev/null; then groupdel idmint 2>/dev/null || true; fi
    rm -rf /var/lib/idmint /var/log/idmint /etc/idmint
    local added
    added=$(comm -13 "$T/packages.before" <(installed_packages) | grep -vx idmint || true)
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
cmp -s "$SRC/docs/man/idmint.1" "$P/$MANDIR/man1/idmint.1" || die "idmint.1 not in $MANDIR/man1"
cmp -s "$SRC/docs/man/idmintd.8" "$P/$MANDIR/man8/idmintd.8" || die "idmintd.8 not in $MANDIR/man8"
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

# ---- 3. the .deb: build and inspect ----
cpack --config "$BUILD/CPackConfig.cmake" -B "$T/deb" >"$T/cpack.log" 2>&1 || die "cpack: $(cat "$T/cpack.log")"
ARCH=$(dpkg --print-architecture)
DEB=$T/deb/idmint_$VERSION-1_$ARCH.deb
[ -f "$DEB" ] || die "no $DEB: $(ls "$T/deb")"
field() { dpkg-deb -f "$DEB" "$1"; }
[ "$(field Package)" = idmint ] && [ "$(field Version)" = "$VERSION-1" ] || die "Package/Version: $(field Package) $(field Version)"
depends=$(field Depends)
for dep in adduser libc6 libsqlite3-0 libjansson4; do
    grep -qE "(^|, )$dep( |,|$)" <<<"$depends" || die "Depends lacks $dep: $depends"
done
if grep -qE 'libpq|libcurl' <<<"$depends"; then die "Depends names a dlopen()ed library: $depends"; fi
for dep in libpq5 libcurl4; do
    grep -qE "(^|, )$dep( |,|$)" <<<"$(field Recommends)" || die "Recommends lacks $dep: $(field Recommends)"
done

dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort >"$T/deb.paths"
D=/usr/$LIBDIR
for f in /usr/bin/idmint /usr/bin/idmintd /usr/include/idmint.h "$D/libidmint.so.$VERSION" \
    "$D/libidmint.so.$MAJOR" "$D/libidmint.so" "$D/libidmint.a" "$D/pkgconfig/idmint.pc" \
    "$D/cmake/idmint/idmintConfig.cmake" "$D/cmake/idmint/idmintTargets.cmake" \
    "/usr/$MANDIR/man1/idmint.1" "/usr/$MANDIR/man8/idmintd.8" "/usr/$UNITDIR/idmintd.service" \
    /etc/idmint/idmintd.conf; do
    grep -qxF "$f" "$T/deb.paths" || die "the .deb lacks $f"
done
if grep -vE '^/(usr|etc)(/|$)' "$T/deb.paths"; then die "the .deb installs outside /usr and /etc (above)"; fi
dpkg-deb -x "$DEB" "$T/debroot"
grep -qx "ExecStart=/usr/bin/idmintd --config /etc/idmint/idmintd.conf" "$T/debroot/usr/$UNITDIR/idmintd.service" ||
    die "the .deb's unit: $(grep ExecStart "$T/debroot/usr/$UNITDIR/idmintd.service")"
grep -qx "prefix=/usr" "$T/debroot$D/pkgconfig/idmint.pc" || die "the .deb's idmint.pc: $(head -1 "$T/debroot$D/pkgconfig/idmint.pc")"

dpkg-deb -e "$DEB" "$T/control"
for s in postinst prerm postrm; do
    cmp -s "$SRC/dist/debian/$s" "$T/control/$s" || die "the .deb's $s is not dist/debian/$s"
    [ -x "$T/control/$s" ] && sh -n "$T/control/$s" || die "$s is not an executable sh script"
done
grep -qx /etc/idmint/idmintd.conf "$T/control/conffiles" || die "idmintd.conf is not a conffile"
grep -qx "activate-noawait ldconfig" "$T/control/triggers" || die "no ldconfig trigger"
grep -qx "libidmint $MAJOR idmint (= $VERSION-1)" "$T/control/shlibs" || die "shlibs: $(cat "$T/control/shlibs")"
ok "$(basename "$DEB"): files, Depends ($depends), Recommends, conffile, maintainer scripts"

# ---- 4. the .deb: install, use, remove, purge ----
[ "$(id -u)" -eq 0 ] || skip_package "not root"
command -v apt-get >/dev/null || skip_package "no apt-get"
case "$(pkg_state)" in
"" | "un ") ;;
*) skip_package "dpkg already knows a package idmint (state '$(pkg_state)')" ;;
esac
getent passwd idmint >/dev/null && skip_package "a user idmint exists: the package would adopt it"
getent group idmint >/dev/null && skip_package "a group idmint exists: the package would adopt it"
[ ! -e /var/lib/idmint ] || skip_package "/var/lib/idmint exists (root's default authority, which tests never use): the package would take it over and the purge delete it"
for d in /var/log/idmint /etc/idmint; do
    [ ! -e "$d" ] || skip_package "$d exists: the purge would delete it"
done
while read -r f; do
    [ ! -d "$T/debroot$f" ] || continue
    if [ -e "$f" ] || [ -L "$f" ]; then skip_package "$f exists: the package would replace it, then remove it"; fi
done <"$T/deb.paths"
installed_packages >"$T/packages.before"

pkg_touched=1
"${APT[@]}" install "$DEB" >"$T/apt-install.log" 2>&1 || die "apt-get install: $(cat "$T/apt-install.log")"
[ "$(pkg_state)" = "ii " ] || die "idmint is not installed after apt-get install"

IFS=: read -r _ _ uid gid _ home shell <<<"$(getent passwd idmint)" || die "no user idmint"
[ "$uid" -ge 100 ] && [ "$uid" -lt 1000 ] || die "idmint has uid $uid, not a system uid"
[ "$(getent group idmint | cut -d: -f3)" = "$gid" ] || die "idmint's primary group is not idmint"
[ "$home" = /var/lib/idmint ] && [ "$shell" = /usr/sbin/nologin ] || die "idmint: home $home, shell $shell"
[ "$(stat -c '%a %U %G' /var/lib/idmint)" = "750 idmint idmint" ] ||
    die "/var/lib/idmint: $(stat -c '%a %U %G' /var/lib/idmint)"
[ "$(stat -c '%a %U %G' /etc/idmint/idmintd.conf)" = "640 root idmint" ] ||
    die "/etc/idmint/idmintd.conf: $(stat -c '%a %U %G' /etc/idmint/idmintd.conf)"
ok "system user idmint (uid $uid), /var/lib/idmint 750 idmint:idmint, idmintd.conf 640 root:idmint"

[ -f "/usr/$UNITDIR/idmintd.service" ] || die "no /usr/$UNITDIR/idmintd.service"
links=$(find /etc/systemd/system -name 'idmintd.service' 2>/dev/null || true)
[ -z "$links" ] || die "the package enabled idmintd: $links"
if [ -d /run/systemd/system ]; then
    [ "$(systemctl is-enabled idmintd.service 2>/dev/null || true)" = disabled ] ||
        die "systemctl is-enabled idmintd: $(systemctl is-enabled idmintd.service 2>&1)"
    ! systemctl is-active -q idmintd.service || die "the package started idmintd"
fi
! pgrep -u idmint >/dev/null || die "something runs as idmint after the install: $(pgrep -a -u idmint)"
if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify "/usr/$UNITDIR/idmintd.service" >"$T/verify.log" 2>&1 ||
        die "systemd-analyze verify idmintd.service: $(cat "$T/verify.log")"
fi
ok "idmintd.service installed, not enabled, nothing running as idmint"

# Configure again over an operator's edit (a reinstall runs postinst as an
# upgrade does): the edit stays, and so do the owners and modes.
echo "; edited by test_install.sh" >>/etc/idmint/idmintd.conf
"${APT[@]}" install --reinstall "$DEB" >"$T/apt-reinstall.log" 2>&1 || die "apt-get install --reinstall: $(cat "$T/apt-reinstall.log")"
[ "$(tail -n 1 /etc/idmint/idmintd.conf)" = "; edited by test_install.sh" ] || die "the reinstall replaced the edited config"
[ "$(stat -c '%a %U %G' /etc/idmint/idmintd.conf /var/lib/idmint | tr '\n' ' ')" = "640 root idmint 750 idmint idmint " ] ||
    die "after the reinstall: $(stat -c '%n %a %U %G' /etc/idmint/idmintd.conf /var/lib/idmint)"
ok "a reinstall keeps the edited config, its owner and modes"

[ "$(/usr/bin/idmint --version)" = "idmint $VERSION" ] || die "/usr/bin/idmint --version: $(/usr/bin/idmint --version)"
grep -q "libidmint.so.$MAJOR " <<<"$(ldconfig -p)" || die "the ldconfig trigger did not run: libidmint.so.$MAJOR is not in the cache"
# shellcheck disable=SC2046
env -u PKG_CONFIG_PATH cc "${CFLAGS[@]}" $(env -u PKG_CONFIG_PATH pkg-config --cflags idmint) "$HELLO" \
    -o "$T/hello_system" $(env -u PKG_CONFIG_PATH pkg-config --libs idmint) || die "hello.c against /usr"
[ "$("$T/hello_system" "sqlite:$T/system.db" | wc -l)" -eq 5 ] || die "hello against /usr did not mint 5 IDs"

# As the daemon will: the idmint user, the packaged config, the state folder.
as_idmint() { setpriv --reuid=idmint --regid=idmint --init-groups env HOME=/var/lib/idmint "$@"; }
as_idmint /usr/bin/idmint --authority sqlite:/var/lib/idmint/idmint.db mint -n 5 >"$T/cli.ids" ||
    die "idmint could not mint into /var/lib/idmint as the idmint user"
[ "$(sort -u "$T/cli.ids" | grep -cxE '[1-9][0-9]*')" -eq 5 ] || die "idmint mint -n 5 printed: $(cat "$T/cli.ids")"
mkdir "$T/run" && chown idmint:idmint "$T/run"
# Not through as_idmint: $! must be idmintd itself (setpriv and env exec it).
setpriv --reuid=idmint --regid=idmint --init-groups env HOME=/var/lib/idmint \
    /usr/bin/idmintd --config /etc/idmint/idmintd.conf --listen 127.0.0.1:0 \
    --port-file "$T/run/port" 2>"$T/idmintd.err" &
daemon_pid=$!
for _ in $(seq 100); do
    [ -s "$T/run/port" ] || ! kill -0 "$daemon_pid" 2>/dev/null && break
    sleep 0.1
done
[ -s "$T/run/port" ] || die "idmintd as idmint with /etc/idmint/idmintd.conf did not start: $(cat "$T/idmintd.err")"
url="http://127.0.0.1:$(cat "$T/run/port")"
curl -sf -H 'Accept: text/plain' "$url/v1/ids?count=5" >"$T/daemon.ids" || die "GET /v1/ids failed: $(cat "$T/idmintd.err")"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || die "idmintd exited $? on SIGTERM: $(cat "$T/idmintd.err")"
daemon_pid=""
[ "$(cat "$T/cli.ids" "$T/daemon.ids" | sort -u | grep -cxE '[1-9][0-9]*')" -eq 10 ] ||
    die "CLI and daemon on one authority: $(cat "$T/cli.ids" "$T/daemon.ids")"
ok "/usr/bin/idmint and idmintd (as idmint, packaged config) mint 10 distinct IDs from /var/lib/idmint/idmint.db"

"${APT[@]}" remove idmint >"$T/apt-remove.log" 2>&1 || die "apt-get remove: $(cat "$T/apt-remove.log")"
[ "$(pkg_state)" = "rc " ] || die "idmint is not in state config-files after remove"
[ ! -e /usr/bin/idmint ] && [ ! -e "$D/libidmint.so.$VERSION" ] || die "remove left the programs"
[ -f /etc/idmint/idmintd.conf ] && [ -s /var/lib/idmint/idmint.db ] || die "remove deleted the config or the authority"
ok "apt-get remove: programs gone, config and authority kept"

"${APT[@]}" purge idmint >"$T/apt-purge.log" 2>&1 || die "apt-get purge: $(cat "$T/apt-purge.log")"
case "$(pkg_state)" in
"" | "un ") ;;
*) die "dpkg still knows idmint after purge: '$(pkg_state)'" ;;
esac
while read -r f; do
    [ ! -d "$T/debroot$f" ] || continue
    if [ -e "$f" ] || [ -L "$f" ]; then die "$f survived the purge"; fi
done <"$T/deb.paths"
for d in /var/lib/idmint /var/log/idmint /etc/idmint; do
    [ ! -e "$d" ] || die "$d survived the purge: $(ls -la "$d")"
done
[ ! -e /var/lib/systemd/deb-systemd-helper-enabled/idmintd.service.dsh-also ] || die "deb-systemd-helper state survived"
if ldconfig -p | grep "libidmint.so"; then die "the linker cache still lists libidmint (above)"; fi
ok "apt-get purge: files, config, /var/lib/idmint and /var/log/idmint gone"

# The user stays after a purge (dist/debian/postrm says why); this test made it, so it goes.
getent passwd idmint >/dev/null || die "the purge removed the user idmint, which postrm says it keeps"
restore_machine
pkg_touched=0
getent passwd idmint >/dev/null && die "could not delete the user idmint"
comm -13 "$T/packages.before" <(installed_packages) | grep . && die "packages the test installed are left (above)"
ok "the machine is as it was: no idmint user, group, package or new dependency"
