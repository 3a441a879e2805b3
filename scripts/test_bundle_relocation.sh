#!/usr/bin/env bash
# The bundle's Open MPI runs where Open MPI is not installed (the GPU machines have none of the
# Debian packages): bundles caffe, allreduce_perf and test_mpi_util of a build with MPI
# (make_bundle.sh --programs), moves the bundle to another folder, and in a private mount
# namespace hides this machine's Open MPI, PMIx, hwloc, libevent and munge (folders, tools and
# libraries) and the build's lib/, then runs from the bundle `mpirun -n 2 allreduce_perf`, a
# singleton allreduce_perf (which starts the bundle's orted), a run that shows PMIx's plugins
# load, a missing program (mpirun's help text) and `run_tests.sh test_mpi_util`.
# Exit 0 when all pass; 1 with a FAIL line; 0 with a SKIP line when the build has no MPI (or
# lacks those programs), patchelf is missing or mount namespaces are not allowed. Each MPI run
# may take a minute at most (a hang fails).
#
#   scripts/test_bundle_relocation.sh [BUILD_DIR]       # default: build
set -uo pipefail
SCRIPT="$(readlink -f "$0")"
REPO="$(dirname "$SCRIPT")/.."
fail() { echo "FAIL: $*"; exit 1; }
show() { echo "--- $1:"; tail -30 "$1"; }

# In the namespace (--inside BUNDLE BUILD_DIR LOGS): hide, then run.
if [ "${1:-}" = --inside ]; then
  BUNDLE="$2" BUILD_DIR="$3" LOGS="$4"
  EMPTY="$LOGS/empty"
  : > "$EMPTY"
  multiarch=/usr/lib/x86_64-linux-gnu
  for dir in "$multiarch/openmpi" "$multiarch/pmix2" "$multiarch/hwloc" /usr/share/openmpi \
      /usr/share/pmix /etc/openmpi /etc/pmix "$BUILD_DIR/lib"; do
    if [ -d "$dir" ]; then mount -t tmpfs -o ro none "$dir" || fail "cannot hide $dir"; fi
  done
  # Tools become /bin/false (a fallback to them fails), libraries empty (ld.so: file too short).
  for file in /usr/bin/mpirun /usr/bin/mpiexec /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info \
      "$multiarch"/libmpi*.so* "$multiarch"/libopen-pal.so* "$multiarch"/libopen-rte.so* \
      "$multiarch"/libmca_common_*.so* "$multiarch"/libpmix.so* "$multiarch"/libhwloc.so* \
      "$multiarch"/libevent*.so* "$multiarch"/libmunge.so*; do
    target="$(readlink -f "$file")" && [ -f "$target" ] || continue
    if [[ "$file" == /usr/bin/* ]]; then stand_in=/bin/false; else stand_in="$EMPTY"; fi
    mount --bind "$stand_in" "$target" || fail "cannot hide $target"
  done
  [ ! -s "$multiarch/libmpi.so.40" ] && [ ! -s "$multiarch/libopen-pal.so.40" ] ||
    fail "the system's libmpi is still visible"

  # shellcheck disable=SC1091
  source "$BUNDLE/env.sh"
  [ "$(command -v mpirun)" = "$BUNDLE/bin/mpirun" ] ||
    fail "mpirun is $(command -v mpirun), not the bundle's"
  log="$LOGS/allreduce_np2.log"
  timeout 60 mpirun --oversubscribe -n 2 "$BUNDLE/bin/allreduce_perf" -b 4K -e 64K -f 4 -n 2 -w 1 \
      > "$log" 2>&1 || { show "$log"; fail "mpirun -n 2 allreduce_perf failed"; }
  grep -q '^ *65536 ' "$log" || { show "$log"; fail "allreduce_perf printed no 64K row"; }
  echo "ok: mpirun --oversubscribe -n 2 allreduce_perf (4K..64K)"
  log="$LOGS/allreduce_singleton.log"
  timeout 60 "$BUNDLE/bin/allreduce_perf" -b 4K -e 4K -n 1 -w 0 > "$log" 2>&1 ||
    { show "$log"; fail "allreduce_perf without mpirun (a singleton, which starts orted) failed"; }
  echo "ok: allreduce_perf as a singleton"
  # PMIx's plugins (Debian's PMIx has a zlib one) and Open MPI's help texts come from the bundle.
  if [ -f "$BUNDLE/lib/pmix/pmix_mca_pcompress_zlib.so" ]; then
    log="$LOGS/pmix_plugins.log"
    PMIX_MCA_pcompress_base_verbose=10 timeout 60 mpirun -n 1 "$BUNDLE/bin/allreduce_perf" \
        -b 4K -e 4K -n 1 -w 0 > "$log" 2>&1 ||
      { show "$log"; fail "mpirun -n 1 allreduce_perf failed"; }
    grep -q 'Selected component \[zlib\]' "$log" ||
      { show "$log"; fail "PMIx did not load the bundle's pmix_mca_pcompress_zlib.so"; }
    echo "ok: PMIx loads its plugins from the bundle"
  fi
  log="$LOGS/help_text.log"
  timeout 60 mpirun -n 1 "$BUNDLE/bin/no_such_program" > "$log" 2>&1 &&
    fail "mpirun ran a missing program"
  grep -q 'mpirun was unable to launch the specified application' "$log" ||
    { show "$log"; fail "mpirun did not find its help texts"; }
  echo "ok: mpirun's help texts (for a missing program)"
  log="$LOGS/run_tests.log"
  if ! LOG_DIR="$LOGS/tests" timeout 60 "$BUNDLE/run_tests.sh" test_mpi_util > "$log" 2>&1; then
    show "$log"
    show "$LOGS/tests/test_mpi_util.np2.log"
    fail "run_tests.sh test_mpi_util failed"
  fi
  grep -q '^PASS test_mpi_util (np 2) ([1-9]' "$log" ||
    { show "$log"; fail "run_tests.sh did not run test_mpi_util under mpirun -n 2"; }
  echo "ok: $(head -1 "$log")"
  exit 0
fi

BUILD_DIR="$(readlink -f "${1:-$REPO/build}")"
[ -x "$BUILD_DIR/bin/caffe" ] || fail "$BUILD_DIR/bin/caffe not found: build first"
ldd "$BUILD_DIR/lib/libcaffe.so" 2>/dev/null | grep 'libmpi\.so' > /dev/null ||
  { echo "SKIP: $BUILD_DIR has no MPI (libcaffe does not link libmpi)"; exit 0; }
for program in allreduce_perf test_mpi_util; do
  [ -x "$BUILD_DIR/bin/$program" ] ||
    { echo "SKIP: $BUILD_DIR/bin/$program not built (needs the benchmarks and the tests)"; exit 0; }
done
command -v patchelf > /dev/null ||
  { echo "SKIP: patchelf not found (make_bundle.sh needs it)"; exit 0; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/probe"
unshare -m mount -t tmpfs none "$TMP/probe" 2> /dev/null ||
  { echo "SKIP: no private mount namespace here (unshare -m and mount need root)"; exit 0; }

"$REPO/scripts/make_bundle.sh" --build "$BUILD_DIR" --dir --out "$TMP/made/caffe-bundle" \
    --programs "caffe allreduce_perf test_mpi_util" > "$TMP/make_bundle.log" 2>&1 ||
  { show "$TMP/make_bundle.log"; fail "make_bundle.sh failed"; }
# Unpacked somewhere else than where it was made.
mkdir -p "$TMP/elsewhere/xyz"
mv "$TMP/made/caffe-bundle" "$TMP/elsewhere/xyz/"
mkdir "$TMP/logs"
unshare -m "$SCRIPT" --inside "$TMP/elsewhere/xyz/caffe-bundle" "$BUILD_DIR" "$TMP/logs" || exit 1
echo "PASS: the bundle's Open MPI runs with the system's hidden"
