#!/usr/bin/env sh
# Trains CaffeNet (models/bvlc_reference_caffenet) on the ImageNet LMDBs. Extra arguments go to
# caffe, e.g. -gpu all to train on every GPU.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"

"$CAFFE_BIN" train \
    --solver=models/bvlc_reference_caffenet/solver.prototxt "$@"
