#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CLI states its authority (issue 27): a command that creates a new
# authority says so in one line on stderr, naming the path and how to share
# it, and only then; read-only commands create nothing and say nothing;
# mint --verbose names the resolved authority, namespace, kind and what it
# took; ns show has an authority: line; a password never reaches stderr.
# -n's long form --count works for mint and uuid7.
set -euo pipefail

IDMINT=${1:?usage: test_authority_notice.sh /path/to/idmint}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
unset IDMINT_AUTHORITY IDMINT_TOKEN

die() {
    echo "FAIL: $*" >&2
    exit 1
}
notice() { # PATH: the one line a creating command prints
    echo "idmint: creating a new, empty authority at $1 (every process that mints these namespaces must use this same authority: --authority sqlite:$1)"
}
A=(--authority "sqlite:$T/a.db")

# mint on a path where nothing is: the line, once, then the ID.
"$IDMINT" "${A[@]}" mint >out 2>err || die "first mint failed: $(cat err)"
[ "$(cat err)" = "$(notice "$T/a.db")" ] || die "first mint's stderr: $(cat err)"
grep -qxE '[1-9][0-9]*' out || die "first mint printed: $(cat out)"
"$IDMINT" "${A[@]}" mint -n 2 >out 2>err || die "second mint failed: $(cat err)"
[ ! -s err ] || die "a mint on an existing authority said: $(cat err)"
echo "ok: mint says it creates a new authority, once"

# ns create, through $IDMINT_AUTHORITY: the same line; on the same file, none.
IDMINT_AUTHORITY="sqlite:$T/b.db" "$IDMINT" ns create rng --kind range --block 7 >out 2>err ||
    die "ns create failed: $(cat err)"
[ "$(cat err)" = "$(notice "$T/b.db")" ] || die "ns create's stderr: $(cat err)"
IDMINT_AUTHORITY="sqlite:$T/b.db" "$IDMINT" ns create snow --kind snowflake >out 2>err ||
    die "second ns create failed: $(cat err)"
[ ! -s err ] || die "ns create on an existing authority said: $(cat err)"
echo "ok: ns create says it creates a new authority, once"

# Commands that only read create nothing and announce nothing; a failed
# open (a folder that is not there) announces nothing either.
for cmd in "ns list" "ns show x" "workers x" "decode 4504699138998278"; do
    # shellcheck disable=SC2086 # the command's words
    if "$IDMINT" --authority "sqlite:$T/c.db" $cmd >out 2>err; then die "$cmd on nothing succeeded"; fi
    if grep -q "creating" err; then die "$cmd announced a new authority: $(cat err)"; fi
done
[ ! -e "$T/c.db" ] || die "a read-only command created c.db"
if "$IDMINT" --authority "sqlite:$T/nodir/d.db" mint >out 2>err; then die "mint into a missing folder succeeded"; fi
if grep -q "creating" err; then die "a failed mint announced a new authority: $(cat err)"; fi
echo "ok: read-only commands and failed opens create and announce nothing"

# mint --verbose: authority, namespace, kind and the lease or range.
"$IDMINT" "${A[@]}" mint --verbose --count 3 >out 2>err || die "mint --verbose failed: $(cat err)"
[ "$(grep -cxE '[1-9][0-9]*' out)" -eq 3 ] || die "mint --count 3 printed: $(cat out)"
grep -qxE "mint: authority=sqlite:$T/a\.db namespace=default kind=snowflake pid=[0-9]+ incarnation=[0-9a-f]{8} worker=[0-9]+/[0-9]+ generation=[0-9]+ lease_end=20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z" err ||
    die "mint --verbose (snowflake) said: $(cat err)"
IDMINT_AUTHORITY="sqlite:$T/b.db" "$IDMINT" mint --ns rng --verbose -n 2 >out 2>err || die "range mint --verbose failed: $(cat err)"
grep -qxE "mint: authority=sqlite:$T/b\.db namespace=rng kind=range pid=[0-9]+ incarnation=[0-9a-f]{8} block=7" err ||
    die "mint --verbose (range) said: $(cat err)"
[ "$("$IDMINT" uuid7 --count 2 | wc -l)" -eq 2 ] || die "uuid7 --count 2"
echo "ok: mint --verbose names the authority, namespace, kind and lease or range; --count works"

# ns show: the authority it read.
IDMINT_AUTHORITY="sqlite:$T/b.db" "$IDMINT" ns show rng >out 2>err || die "ns show failed: $(cat err)"
grep -qxF "authority: sqlite:$T/b.db" out || die "ns show has no authority: line: $(cat out)"
echo "ok: ns show has an authority: line"

# A password in the URL never reaches stderr (port 1: refused at once).
pg="postgres://idm:s3cretpw@127.0.0.1:1/db"
for cmd in "mint --verbose" "ns create x --kind range" "ns show x"; do
    # shellcheck disable=SC2086
    if "$IDMINT" --authority "$pg" $cmd >out 2>err; then die "$cmd on a closed port succeeded"; fi
    if grep -q s3cretpw err out; then die "$cmd printed the password: $(cat err)"; fi
    grep -q "127.0.0.1:1" err || die "$cmd does not name the authority: $(cat err)"
done
echo "ok: the password of a postgres authority is masked"
