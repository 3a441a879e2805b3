#!/usr/bin/env sh
# Trains AlexNet (models/bvlc_alexnet) on the ImageNet LMDBs. Extra arguments go to caffe, e.g.
# -gpu all to train on every GPU.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"

"$CAFFE_BIN" train \
    --solver=models/bvlc_alexnet/solver.prototxt "$@"
