#!/usr/bin/env sh
# Trains LeNet on the bundled digits as N learners of one DDL job (after
# examples/mnist/create_digits.sh); readme.md says what the learners do and how to run on a
# cluster:
#   examples/ddl/train_lenet_ddl.sh [-n N] [-mode MODE] [-rf RANKFILE] [caffe train flags...]
# e.g. -n 4 (this machine, -mode r:4) or -rf 4x2.rf -gpu 0 (scripts/rank_gen.py; -mode b:4x2x1).
# ITERS, TEST_INTERVAL, TEST_ITER, DDL_OPTIONS, MPIRUN, MPIRUN_FLAGS, CAFFE_BIN, TOOLS:
# ddl_train.sh.
set -e
cd "$(dirname "$0")/../.."
. examples/require_files.sh
require_files "run data/digits/get_digits.sh, then examples/mnist/create_digits.sh" \
  examples/mnist/digits_train_lmdb examples/mnist/digits_test_lmdb
. examples/ddl/ddl_train.sh
ddl_train examples/ddl/lenet_digits_ddl_solver.prototxt "$@"
