#!/usr/bin/env sh
# Trains CIFAR-10 "quick" (after create_cifar10.sh): 4000 iterations at learning rate 0.001, then
# on to 5000 at 0.0001, resumed from the iteration-4000 snapshot. Extra arguments go to both
# caffe runs (e.g. -gpu 0,1).
# ITERS and ITERS_LR1 move the two stages' ends (4000, 5000), TEST_ITER the test batches per test
# (100); e.g. a quick check: ITERS=20 ITERS_LR1=30 TEST_ITER=2 examples/cifar10/train_quick.sh
set -e
cd "$(dirname "$0")/../.."
. examples/cifar10/solver_override.sh
ITERS="${ITERS:-4000}"
ITERS_LR1="${ITERS_LR1:-5000}"

train_stage examples/cifar10/cifar10_quick_solver.prototxt "$ITERS" "" "$@"

# reduce learning rate by factor of 10 after 8 epochs
train_stage examples/cifar10/cifar10_quick_solver_lr1.prototxt "$ITERS_LR1" \
  examples/cifar10/cifar10_quick_iter_"$ITERS".solverstate "$@"
