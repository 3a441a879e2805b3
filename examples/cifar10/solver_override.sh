# Sourced by the CIFAR-10 training scripts, from the repository root.
#   solver FILE MAX_ITER   prints the solver file to train with: FILE itself when MAX_ITER is its
#                          own max_iter and TEST_ITER is unset, otherwise a copy in a temporary
#                          folder (removed when the script exits) with max_iter and, when
#                          TEST_ITER is set, test_iter replaced. Paths inside a solver stay
#                          relative to the repository root, where the scripts run.
#   train_stage FILE MAX_ITER SNAPSHOT [ARGS...]
#                          runs `caffe train` with `solver FILE MAX_ITER`, resumed from SNAPSHOT
#                          unless it is empty; ARGS go to caffe (e.g. -gpu 0,1).
# caffe is CAFFE_BIN, else TOOLS/caffe, else ./build/bin/caffe.
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"
OVERRIDES="$(mktemp -d)"
trap 'rm -rf "$OVERRIDES"' EXIT

solver() {
  file="$1"
  max_iter="$2"
  own_max_iter="$(sed -n 's/^max_iter: *\([0-9]*\).*/\1/p' "$file")"
  if [ "$max_iter" = "$own_max_iter" ] && [ -z "${TEST_ITER:-}" ]; then
    echo "$file"
    return
  fi
  copy="$OVERRIDES/$(basename "$file")"
  sed -e "s/^max_iter:.*/max_iter: $max_iter/" \
      -e "s/^test_iter:.*/test_iter: ${TEST_ITER:-100}/" "$file" > "$copy"
  echo "$copy"
}

train_stage() {
  stage_solver="$(solver "$1" "$2")"
  snapshot="$3"
  shift 3
  if [ -n "$snapshot" ]; then
    "$CAFFE_BIN" train --solver="$stage_solver" --snapshot="$snapshot" "$@"
  else
    "$CAFFE_BIN" train --solver="$stage_solver" "$@"
  fi
}
