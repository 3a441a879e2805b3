#!/usr/bin/env sh
# Trains the CIFAR-10 "full" net with sigmoid activations and batch normalization (after
# create_cifar10.sh). Extra arguments go to caffe.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"

"$CAFFE_BIN" train \
    --solver=examples/cifar10/cifar10_full_sigmoid_solver_bn.prototxt "$@"
