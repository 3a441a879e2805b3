#!/usr/bin/env sh
# Trains CIFAR-10 "full" (after create_cifar10.sh): 60000 iterations at learning rate 0.001, to
# 65000 at 0.0001, then to 70000 at 0.00001, each stage resumed from the previous one's snapshot.
# Extra arguments go to every caffe run (e.g. -gpu 0).
# ITERS, ITERS_LR1 and ITERS_LR2 move the stages' ends (60000, 65000, 70000), TEST_ITER the test
# batches per test (100).
set -e
cd "$(dirname "$0")/../.."
. examples/cifar10/solver_override.sh
ITERS="${ITERS:-60000}"
ITERS_LR1="${ITERS_LR1:-65000}"
ITERS_LR2="${ITERS_LR2:-70000}"

train_stage examples/cifar10/cifar10_full_solver.prototxt "$ITERS" "" "$@"

# reduce learning rate by factor of 10
train_stage examples/cifar10/cifar10_full_solver_lr1.prototxt "$ITERS_LR1" \
  examples/cifar10/cifar10_full_iter_"$ITERS".solverstate.h5 "$@"

# reduce learning rate by factor of 10
train_stage examples/cifar10/cifar10_full_solver_lr2.prototxt "$ITERS_LR2" \
  examples/cifar10/cifar10_full_iter_"$ITERS_LR1".solverstate.h5 "$@"
