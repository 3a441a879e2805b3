#!/usr/bin/env sh
# Trains CaffeNet (models/bvlc_reference_caffenet) on the ImageNet LMDBs. Extra arguments go to
# caffe, e.g. -gpu all to train on every GPU.
set -e
cd "$(dirname "$0")/../.."

./build/bin/caffe train \
    --solver=models/bvlc_reference_caffenet/solver.prototxt "$@"
