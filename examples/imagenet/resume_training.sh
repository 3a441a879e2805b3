#!/usr/bin/env sh
# Resumes CaffeNet training from its snapshot at iteration ITER (default 10000),
# models/bvlc_reference_caffenet/caffenet_train_iter_<ITER>.solverstate (or .solverstate.h5 when
# the solver writes HDF5 snapshots). Extra arguments go to caffe, e.g. -gpu all.
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"

ITER="${ITER:-10000}"
SNAPSHOT=models/bvlc_reference_caffenet/caffenet_train_iter_${ITER}.solverstate
if [ ! -e "$SNAPSHOT" ] && [ -e "$SNAPSHOT.h5" ]; then
  SNAPSHOT="$SNAPSHOT.h5"
fi

"$CAFFE_BIN" train \
    --solver=models/bvlc_reference_caffenet/solver.prototxt \
    --snapshot="$SNAPSHOT" \
    "$@"
