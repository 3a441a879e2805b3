#!/usr/bin/env bash
# Configures and builds Caffe into build/ (or $CAFFE_BUILD_DIR). Arguments go to CMake, but for
# --target NAME (any number), which builds only those targets and what they need:
#   scripts/build.sh                      # the GPU variant on a machine with a GPU and nvcc
#                                         # (scripts/gpu_toolchain.sh), else CPU-only
#   scripts/build.sh -DCAFFE_CUDA=OFF     # CPU-only
#   scripts/build.sh -DCAFFE_CUDA=AUTO    # the GPU variant wherever nvcc is found
#   scripts/build.sh --target caffe.bin   # the library and the caffe tool only
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${CAFFE_BUILD_DIR:-build}"
JOBS="${CAFFE_JOBS:-$(nproc)}"
# ccache keys on paths relative to the checkout, so clones in other folders share its cache. Not
# on the working folder either: by default an object with debug information (the sanitizer builds'
# -g1) is keyed on it, so every clone, CI's included, compiled those builds anew. The price: such
# an object's debug information names the folder of the clone that first compiled it, which a
# sanitizer's report may then print before the file's path in the checkout.
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=1

cmake_args=()
targets=()
variant_given=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target)
      [ $# -ge 2 ] || { echo "build.sh: --target needs a name (e.g. caffe.bin)" >&2; exit 2; }
      targets+=(--target "$2")
      shift 2
      continue ;;
    -DCAFFE_CUDA=*|-DCAFFE_CUDA:*|-DCAFFE_CUDA_EMU=*|-DCAFFE_CUDA_EMU:*) variant_given=1 ;;
  esac
  cmake_args+=("$1")
  shift
done

# Without a -DCAFFE_CUDA, the machine decides, as BVLC's default build did: the GPU variant where
# a GPU and nvcc are there, built for that GPU's architecture; else CPU-only.
if [ "$variant_given" = 0 ]; then
  if NVCC="$(scripts/gpu_toolchain.sh)"; then
    cmake_args=(-DCAFFE_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" "${cmake_args[@]}")
    # The GPU's compute capability (9.0 -> 90), unless given; an older driver cannot say, and
    # then the default of CMakeLists.txt stays.
    arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -n 1 |
      tr -d ' .')"
    [[ "$arch" =~ ^[0-9]+$ ]] || arch=""
    if [ -n "$arch" ] && [[ " ${cmake_args[*]}" != *" -DCAFFE_CUDA_ARCHITECTURES="* ]]; then
      cmake_args=(-DCAFFE_CUDA_ARCHITECTURES="$arch" "${cmake_args[@]}")
    fi
    echo "build.sh: a GPU and $NVCC found: building the GPU variant${arch:+ (sm_$arch)}"
  else
    cmake_args=(-DCAFFE_CUDA=OFF "${cmake_args[@]}")
  fi
fi

mkdir -p "$BUILD_DIR"
if ! cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" \
    > "$BUILD_DIR/configure.log" 2>&1; then
  cat "$BUILD_DIR/configure.log"
  exit 1
fi
grep -A6 "Caffe configuration" "$BUILD_DIR/configure.log" || true
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
