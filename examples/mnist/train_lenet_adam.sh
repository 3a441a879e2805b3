#!/usr/bin/env sh
# Trains LeNet on MNIST with Adam (after create_mnist.sh); extra flags go to caffe train.
set -e
cd "$(dirname "$0")/../.."
./build/bin/caffe train --solver=examples/mnist/lenet_solver_adam.prototxt "$@"
