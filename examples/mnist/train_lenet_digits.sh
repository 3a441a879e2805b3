#!/usr/bin/env sh
# Trains LeNet on the bundled digits (after create_digits.sh); extra flags go to caffe train.
set -e
cd "$(dirname "$0")/../.."
./build/bin/caffe train --solver=examples/mnist/lenet_digits_solver.prototxt "$@"
