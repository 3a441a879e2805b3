#!/usr/bin/env sh
# Trains LeNet on MNIST (after data/mnist/get_mnist.sh and examples/mnist/create_mnist.sh).
set -e
cd "$(dirname "$0")/../.."
./build/bin/caffe train --solver=examples/mnist/lenet_solver.prototxt "$@"
