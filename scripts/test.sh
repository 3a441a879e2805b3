#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test.
# Golden tests read ../shared (or $CAFFE_SHARED_DIR) and skip, saying so, where it is absent.
# Where nvcc exists, the GPU variant is also built and its suite run (GPU cases skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${CAFFE_JOBS:-$(nproc)}"

scripts/install_deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure -j "$JOBS")

NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
if [ -n "$NVCC" ] && [ "${CAFFE_SKIP_CUDA_BUILD:-0}" != 1 ]; then
  echo "test: nvcc found ($NVCC): building and testing the GPU variant in build-cuda/"
  CAFFE_BUILD_DIR=build-cuda scripts/build.sh -DCAFFE_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC"
  (cd build-cuda && ctest --output-on-failure -j "$JOBS")
fi
echo "test: all tests passed"
