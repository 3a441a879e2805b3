#!/usr/bin/env bash
# Makes a relocatable bundle of a build: bin/ (the caffe tools; with --tests also the test
# programs), lib/ (libcaffe and every shared library they need that a plain machine may lack),
# env.sh (sets LD_LIBRARY_PATH for the CUDA libraries found on the target) and run_tests.sh.
# Executables and libraries look in $ORIGIN/../lib (patchelf), so the folder runs from anywhere,
# e.g. on cluster nodes or GPU machines that have a CUDA driver but none of the Debian packages.
# The CUDA libraries (cudart, cuBLAS, cuRAND, cuDNN, NCCL) and the C library are NOT bundled:
# they are found on the target (its CUDA toolkit or the nvidia-* Python packages).
#
#   scripts/make_bundle.sh                              # build-cuda/ -> bundle/caffe-bundle.tar.xz
#   scripts/make_bundle.sh --build build --tests --out bundle/cpu.tar.xz
#   scripts/make_bundle.sh --dir                        # a folder instead of a tarball
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=build-cuda
OUT=bundle/caffe-bundle.tar.xz
WITH_TESTS=0
AS_DIR=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD_DIR="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --tests) WITH_TESTS=1; shift ;;
    --dir) AS_DIR=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "make_bundle: unknown option '$1' (expected --build DIR, --out PATH, --tests, --dir)" >&2
       exit 2 ;;
  esac
done
[ -x "$BUILD_DIR/bin/caffe" ] || {
  echo "make_bundle: $BUILD_DIR/bin/caffe not found: build first (scripts/build.sh)" >&2; exit 1; }
command -v patchelf > /dev/null || {
  echo "make_bundle: patchelf not found: run scripts/install_deps.sh" >&2; exit 1; }

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
ROOT="$STAGE/caffe-bundle"
mkdir -p "$ROOT/bin" "$ROOT/lib"

# Programs: every tool (not the test programs unless asked).
for program in "$BUILD_DIR"/bin/*; do
  [ -f "$program" ] && [ -x "$program" ] || continue
  name="$(basename "$program")"
  if [[ "$name" == test_* ]] && [ "$WITH_TESTS" != 1 ]; then continue; fi
  cp "$program" "$ROOT/bin/"
done
# libcaffe and the modules it loads on demand (libcaffe_image_opencv.so).
cp "$BUILD_DIR"/lib/libcaffe*.so* "$ROOT/lib/"

# Libraries found on the target rather than bundled: the C runtime, the GPU driver and the
# CUDA libraries (whose versions must match the target's driver).
is_target_library() {
  case "$1" in
    linux-vdso*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libutil.so*) return 0 ;;
    libresolv.so*|libcuda.so*|libcudart.so*|libcublas*|libcurand.so*|libcudnn*|libnccl.so*) return 0 ;;
    libnvidia*|libnvrtc*|libnvJitLink*) return 0 ;;
  esac
  return 1
}

# Every library the programs and libcaffe load, from ldd on this machine.
for file in "$ROOT"/bin/* "$ROOT"/lib/libcaffe*.so*; do
  ldd "$file" 2>/dev/null | awk '/=> \// {print $1, $3}'
done | sort -u | while read -r soname path; do
  is_target_library "$soname" && continue
  [ -e "$ROOT/lib/$soname" ] || cp -L "$path" "$ROOT/lib/$soname"
done

# Smaller and relocatable: strip symbols, and look for libraries beside the bundle.
for file in "$ROOT"/bin/* "$ROOT"/lib/*; do
  strip --strip-unneeded "$file" 2> /dev/null || true
  patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN' "$file"
done

cat > "$ROOT/env.sh" <<'EOF'
# Source this: puts the bundle's tools on PATH and the target's CUDA libraries (its toolkit, or
# the nvidia-* Python packages that PyTorch installs) on LD_LIBRARY_PATH.
BUNDLE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PATH="$BUNDLE_DIR/bin:$PATH"
cuda_dirs=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && cuda_dirs="$cuda_dirs:$dir"
done
for python in python3 /opt/torch/.venv/bin/python3; do
  site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)" || continue
  [ -d "$site/nvidia" ] || continue
  for dir in $(find "$site/nvidia" -name 'lib*.so*' -printf '%h\n' 2>/dev/null | sort -u); do
    cuda_dirs="$cuda_dirs:$dir"
  done
  break
done
export LD_LIBRARY_PATH="${cuda_dirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset cuda_dirs dir site python
EOF

cat > "$ROOT/run_tests.sh" <<'EOF'
#!/usr/bin/env bash
# Runs every test program of the bundle (or those named: run_tests.sh test_gpu_math_functions)
# and prints one line per program and a summary; extra gtest flags come from $GTEST_ARGS.
# Exit status: the number of programs that failed (0 when all passed).
set -uo pipefail
BUNDLE_DIR="$(cd "$(dirname "$0")" && pwd)"
source "$BUNDLE_DIR/env.sh"
programs=("$@")
[ ${#programs[@]} -eq 0 ] && programs=($(cd "$BUNDLE_DIR/bin" && ls test_* 2>/dev/null))
LOG_DIR="${LOG_DIR:-$BUNDLE_DIR/test_logs}"
mkdir -p "$LOG_DIR"
failed=0
for program in "${programs[@]}"; do
  log="$LOG_DIR/$program.log"
  if "$BUNDLE_DIR/bin/$program" ${GTEST_ARGS:-} > "$log" 2>&1; then
    echo "PASS $program ($(grep -c '^\[       OK \]' "$log") ok, $(grep -c '^\[  SKIPPED \]' "$log") skipped)"
  else
    echo "FAIL $program: see $log"; grep '^\[  FAILED  \]' "$log" | sort -u | head -20
    failed=$((failed + 1))
  fi
done
echo "run_tests: ${#programs[@]} programs, $failed failed"
exit $failed
EOF
chmod +x "$ROOT/run_tests.sh"

mkdir -p "$(dirname "$OUT")"
if [ "$AS_DIR" = 1 ]; then
  rm -rf "$OUT"
  mv "$ROOT" "$OUT"
  echo "make_bundle: $OUT ($(du -sh "$OUT" | cut -f1))"
else
  tar -C "$STAGE" -cJf "$OUT" caffe-bundle
  echo "make_bundle: $OUT ($(du -h "$OUT" | cut -f1); unpack with tar -xJf, then source caffe-bundle/env.sh)"
fi
