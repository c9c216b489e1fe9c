#!/usr/bin/env bash
# Every code block of bindings/{node,python,go,java}/README.md runs as written.
# Usage: tests/docs/test_binding_readmes.sh SOURCE_DIR BUILD_DIR
# (BUILD_DIR: a build tree with the idmint CLI, used only to make the
# namespaces the examples open.)
#
# In a copy of the tracked sources (so nothing is built in the checkout), for
# each README in turn, one bash session runs, in order of the README:
#   - ```sh blocks: from the top of the copy; a block whose first line is
#     "# in your project's folder" or "# in your module's folder" from an
#     empty project folder instead (for Go, one `go mod init` made, as a
#     user's module would be);
#   - ```js, ```python, ```go, ```java blocks: each saved as a program in
#     that project folder and run (node, ~/venv-idmint/bin/python, go run .,
#     java NAME.java with the CLASSPATH the README's sh blocks export);
#     it must exit 0 and print something;
#   - ```sh blocks that only name bindings/*/ci.sh or bench/bench_*.sh: not
#     run here (ci.sh is ctest's bindings.* test, a benchmark is no test);
#     the scripts must exist and tests/CMakeLists.txt must register the ci.sh.
# Any other kind of block fails the test, to be taught here.
# The one rewrite: the machine's authority sqlite:/var/lib/idmint/idmint.db
# becomes a fresh sqlite:TMP/a.db holding the namespace `orders`. The
# environment the READMEs name is set: HOME (a temp folder, for
# ~/venv-idmint), IDMINT_SRC (the copy); GOPROXY=off GOFLAGS=-mod=mod keep Go
# offline.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# The tracked files as they are in the working tree (deleted ones skipped).
mkdir -p "$work/idmint" "$work/home"
git -C "$src" ls-files -z |
    (cd "$src" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
    tar -C "$work/idmint" -xf -
[ -f "$work/idmint/CMakeLists.txt" ] || fail "copying the tracked sources"

authority="sqlite:$work/a.db"
"$build/idmint" --authority "$authority" ns create orders --kind snowflake >/dev/null
gocache=$(go env GOCACHE 2>/dev/null || true)

# Split README $1 into $2/NN.LANG, one file per fenced block, in order.
split_blocks() {
    awk -v out="$2" '
        /^```/ && !inb { inb = 1; n++; lang = substr($0, 4); sub(/[ ,].*/, "", lang);
                         if (lang == "") lang = "none";
                         f = sprintf("%s/%02d.%s", out, n, lang); printf "" > f; next }
        /^```/ && inb  { inb = 0; close(f); next }
        inb            { print > f }
        END            { if (inb) { print "unterminated block" > "/dev/stderr"; exit 1 } }
    ' "$1"
}

# A sh block that only runs a binding's test suite or a benchmark.
is_suite_block() {
    ! grep -vE '^[[:space:]]*(#.*)?$' "$1" |
        grep -vqE '^(bindings/[a-z]+/ci\.sh|bench/bench_[a-z]+\.sh)[[:space:]]'
}

ran_total=0
for lang in node python go java; do
    readme="$src/bindings/$lang/README.md"
    blocks="$work/blocks-$lang"
    app="$work/app-$lang"
    mkdir -p "$blocks" "$app"
    split_blocks "$readme" "$blocks"
    session="$work/session-$lang.sh"
    # shellcheck disable=SC2016 # GOCACHE's value is quoted for the session
    {
        echo 'set -euo pipefail'
        echo "export HOME='$work/home' IDMINT_SRC='$work/idmint'"
        echo "export GOPROXY=off GOFLAGS=-mod=mod${gocache:+ GOCACHE='$gocache'}"
    } >"$session"
    examples=0
    for b in "$blocks"/*; do
        [ -e "$b" ] || fail "$readme: no code blocks found"
        name="bindings/$lang/README.md block $(basename "$b")"
        # The one rewrite: the machine's authority to this test's own.
        sed -i "s|sqlite:/var/lib/idmint/idmint.db|$authority|g" "$b"
        if grep -q '/var/lib/idmint' "$b"; then
            fail "$name names /var/lib/idmint other than as sqlite:/var/lib/idmint/idmint.db"
        fi
        case "$b" in
        *.sh)
            if is_suite_block "$b"; then
                while read -r script _; do
                    [ -x "$src/$script" ] || [ -f "$src/$script" ] || fail "$name: $script is missing"
                    case "$script" in
                    bindings/*/ci.sh)
                        # shellcheck disable=SC2016 # the CMake text, literally
                        grep -q 'bindings/${lang}/ci.sh' "$src/tests/CMakeLists.txt" ||
                            fail "$name: tests/CMakeLists.txt does not run the bindings' ci.sh"
                        ;;
                    esac
                done < <(grep -vE '^[[:space:]]*(#.*)?$' "$b")
                echo "checked (suite/benchmark commands, not run here): $name"
                continue
            fi
            if head -n 1 "$b" | grep -qE "^# in your (project|module)'s folder"; then
                echo "cd '$app'" >>"$session"
                if [ "$lang" = go ] && [ ! -e "$app/go.mod" ]; then
                    (cd "$app" && go mod init example.com/app >/dev/null 2>&1)
                fi
            else
                echo "cd '$work/idmint'" >>"$session"
            fi
            { echo "echo '>>> $name'"; cat "$b"; } >>"$session"
            ;;
        *.js | *.python | *.go | *.java)
            examples=$((examples + 1))
            case "$b" in
            *.js)
                prog="$app/example-$examples.js"
                run="node '$prog'"
                ;;
            *.python)
                prog="$app/example-$examples.py"
                # shellcheck disable=SC2088 # ~ expands in the session, as the README has it
                run="~/venv-idmint/bin/python '$prog'"
                ;;
            *.go)
                [ "$examples" -eq 1 ] || fail "$name: a second Go program: teach the test"
                prog="$app/main.go"
                run="go run ."
                ;;
            *.java)
                # The source launcher wants the file named for its public class.
                class=$(sed -n 's/^public class \([A-Za-z0-9_]*\).*/\1/p' "$b" | head -n 1)
                [ -n "$class" ] || fail "$name: no public class"
                prog="$app/$class.java"
                run="java '$prog'"
                ;;
            esac
            cp "$b" "$prog"
            cat >>"$session" <<EOF
echo '>>> $name'
cd '$app'
out=\$($run)
printf '%s\n' "\$out"
[ -n "\$out" ] || { echo "FAIL: $name printed nothing" >&2; exit 1; }
EOF
            ;;
        *)
            fail "$name: a block of kind .${b##*.}: teach the test what to do with it"
            ;;
        esac
    done
    [ "$examples" -gt 0 ] || fail "bindings/$lang/README.md: no example program found"
    echo "=== bindings/$lang/README.md: $examples example(s)"
    bash "$session" || fail "bindings/$lang/README.md: its code did not run as written (above)"
    ran_total=$((ran_total + examples))
done

# The examples minted from the test's authority, none from the machine's.
"$build/idmint" --authority "$authority" ns show orders >/dev/null
echo "PASS: $ran_total README examples ran as written (node, python, go, java)"
