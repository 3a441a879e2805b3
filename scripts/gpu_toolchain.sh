#!/usr/bin/env bash
# Prints the path of nvcc when this machine can build and run the GPU variant: `nvidia-smi -L`
# lists a GPU and nvcc is on PATH or at /usr/local/cuda/bin/nvcc. Exits 1, printing nothing,
# otherwise. scripts/build.sh and scripts/quickstart.sh choose the variant with it.
set -uo pipefail
nvidia-smi -L > /dev/null 2>&1 || exit 1
NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
[ -n "$NVCC" ] || exit 1
echo "$NVCC"
