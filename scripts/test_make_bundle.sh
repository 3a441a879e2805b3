#!/usr/bin/env bash
# make_bundle.sh's mistakes (the ctest `make_bundle_sh`): an unknown option, an option without
# its value, a build folder without the tools and a --programs name the build lacks each give one
# line naming what was wrong and a non-zero exit, and leave no bundle behind. A bundle has the
# build's tools/<name>, <name>.bin and examples/<folder>/<name>.bin paths, leading to its bin/,
# and its run_tests.sh runs programs side by side ($RUN_TESTS_JOBS) with the lines in order.
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
# A stand-in build of real programs (copies of true; libc as libcaffe) with BVLC's paths to them.
mkdir -p "$OUT_DIR/real/bin" "$OUT_DIR/real/lib" "$OUT_DIR/real/tools" \
  "$OUT_DIR/real/examples/siamese"
cp "$(ldd "$(type -P true)" | awk '$1 ~ /^libc\.so/ {print $3}')" "$OUT_DIR/real/lib/libcaffe.so"
cp "$(type -P true)" "$OUT_DIR/real/bin/caffe"
cp "$(type -P true)" "$OUT_DIR/real/examples/siamese/convert_mnist_siamese_data.bin"
ln -s ../bin/caffe "$OUT_DIR/real/tools/caffe"
ln -s ../bin/caffe "$OUT_DIR/real/tools/caffe.bin"
ln -s ../bin/gone "$OUT_DIR/real/tools/gone"
check_paths() {  # check_paths <bundle folder> <paths that must run...>
  local bundle="$1" path
  shift
  for path in "$@"; do
    if [ -L "$bundle/$path" ] && "$bundle/$path"; then
      echo "ok: the bundle's $path leads to a program"
    else
      echo "FAIL: the bundle's $path is not a link to a program"; failures=$((failures + 1))
    fi
  done
}
if "$SCRIPT" --build "$OUT_DIR/real" --dir --out "$OUT_DIR/real_bundle" > /dev/null 2>&1; then
  check_paths "$OUT_DIR/real_bundle" tools/caffe tools/caffe.bin \
    examples/siamese/convert_mnist_siamese_data.bin
  [ -e "$OUT_DIR/real_bundle/tools/gone" ] &&
    { echo "FAIL: a link to a program the build lacks was bundled"; failures=$((failures + 1)); }
else
  echo "FAIL: make_bundle.sh --build $OUT_DIR/real --dir failed"; failures=$((failures + 1))
fi
if "$SCRIPT" --build "$OUT_DIR/real" --dir --programs caffe --out "$OUT_DIR/only_caffe" \
    > /dev/null 2>&1; then
  check_paths "$OUT_DIR/only_caffe" tools/caffe
  [ -e "$OUT_DIR/only_caffe/examples" ] &&
    { echo "FAIL: --programs caffe bundled the examples"; failures=$((failures + 1)); }
else
  echo "FAIL: make_bundle.sh --programs caffe --dir failed"; failures=$((failures + 1))
fi
# run_tests.sh with two programs at once: the lines in the programs' order, the failure counted.
cp "$(type -P false)" "$OUT_DIR/real/bin/test_a_fails"
cp "$(type -P true)" "$OUT_DIR/real/bin/test_b_passes"
cp "$(type -P true)" "$OUT_DIR/real/bin/test_c_passes"
if "$SCRIPT" --build "$OUT_DIR/real" --tests --dir --out "$OUT_DIR/with_tests" > /dev/null 2>&1
then
  summary="$(RUN_TESTS_JOBS=2 LOG_DIR="$OUT_DIR/logs" "$OUT_DIR/with_tests/run_tests.sh" 2>&1)"
  code=$?
  expected="FAIL test_a_fails: see $OUT_DIR/logs/test_a_fails.log
PASS test_b_passes (0 ok, 0 skipped)
PASS test_c_passes (0 ok, 0 skipped)
run_tests: 3 runs of 3 programs, 1 failed"
  if [ "$code" = 1 ] && [ "$summary" = "$expected" ]; then
    echo "ok: run_tests.sh with RUN_TESTS_JOBS=2 keeps the order and counts the failure"
  else
    echo "FAIL: run_tests.sh with RUN_TESTS_JOBS=2: exit $code, said: $summary"
    failures=$((failures + 1))
  fi
else
  echo "FAIL: make_bundle.sh --tests --dir failed"; failures=$((failures + 1))
fi
exit $failures
