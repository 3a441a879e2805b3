#!/usr/bin/env sh
# Trains CIFAR-10 "quick" as N learners of one DDL job (after data/cifar10/get_cifar10.sh and
# examples/cifar10/create_cifar10.sh); readme.md says what the learners do and how to run on a
# cluster:
#   examples/ddl/train_cifar10_quick_ddl.sh [-n N] [-mode MODE] [-rf RANKFILE] [caffe flags...]
# ITERS, TEST_INTERVAL, TEST_ITER, DDL_OPTIONS, MPIRUN, MPIRUN_FLAGS, CAFFE_BIN, TOOLS:
# ddl_train.sh.
set -e
cd "$(dirname "$0")/../.."
. examples/require_files.sh
require_files "run data/cifar10/get_cifar10.sh, then examples/cifar10/create_cifar10.sh" \
  examples/cifar10/cifar10_train_lmdb examples/cifar10/cifar10_test_lmdb \
  examples/cifar10/mean.binaryproto
. examples/ddl/ddl_train.sh
ddl_train examples/ddl/cifar10_quick_ddl_solver.prototxt "$@"
