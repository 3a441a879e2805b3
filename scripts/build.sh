#!/usr/bin/env bash
# Configures and builds Caffe into build/ (or $CAFFE_BUILD_DIR). Extra arguments go to CMake:
#   scripts/build.sh                      # CPU-only (the default)
#   scripts/build.sh -DCAFFE_CUDA=AUTO    # the GPU variant where nvcc is found
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${CAFFE_BUILD_DIR:-build}"
JOBS="${CAFFE_JOBS:-$(nproc)}"
# ccache keys on paths relative to the checkout, so clones in other folders share its cache.
export CCACHE_BASEDIR="$PWD"
mkdir -p "$BUILD_DIR"
if ! cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCAFFE_CUDA=OFF "$@" \
    > "$BUILD_DIR/configure.log" 2>&1; then
  cat "$BUILD_DIR/configure.log"
  exit 1
fi
grep -A6 "Caffe configuration" "$BUILD_DIR/configure.log" || true
cmake --build "$BUILD_DIR" -j "$JOBS"
