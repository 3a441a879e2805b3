#!/usr/bin/env bash
# make_bundle.sh's mistakes (the ctest `make_bundle_sh`): an unknown option, an option without
# its value, a build folder without the tools and a --programs name the build lacks each give one
# line naming what was wrong and a non-zero exit, and leave no bundle behind.
set -uo pipefail
SCRIPT="$(cd "$(dirname "$0")" && pwd)/make_bundle.sh"
OUT_DIR="$(mktemp -d)"
trap 'rm -rf "$OUT_DIR"' EXIT
failures=0

expect() {  # expect <exit code> <text in stderr> <args...>
  local code="$1" text="$2"
  shift 2
  local stderr
  stderr="$("$SCRIPT" "$@" 2>&1 > /dev/null)"
  local got=$?
  if [ "$got" -ne "$code" ] || [[ "$stderr" != *"$text"* ]]; then
    echo "FAIL: make_bundle.sh $*: exit $got (expected $code), said: $stderr"
    failures=$((failures + 1))
  else
    echo "ok: make_bundle.sh $*: $stderr"
  fi
}

expect 2 "unknown option '--bogus'" --bogus
expect 1 "$OUT_DIR/no_build/bin/caffe not found: build first" --build "$OUT_DIR/no_build" \
  --out "$OUT_DIR/b.tar.xz"
expect 2 "--programs needs a value" --programs
# A stand-in build with only a caffe.
mkdir -p "$OUT_DIR/fake/bin"
printf '#!/bin/sh\n' > "$OUT_DIR/fake/bin/caffe"
chmod +x "$OUT_DIR/fake/bin/caffe"
expect 1 "--programs: $OUT_DIR/fake/bin/no_such_tool not found" --build "$OUT_DIR/fake" \
  --programs "caffe no_such_tool" --out "$OUT_DIR/b.tar.xz"
[ -e "$OUT_DIR/b.tar.xz" ] && { echo "FAIL: a bundle was written"; failures=$((failures + 1)); }
if "$SCRIPT" --help | grep -q -- '--programs'; then
  echo "ok: make_bundle.sh --help names --programs"
else
  echo "FAIL: make_bundle.sh --help does not name --programs"; failures=$((failures + 1))
fi
exit $failures
