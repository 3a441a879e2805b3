# Sourced by the DDL example scripts, from the repository root.
#   ddl_train SOLVER [-n N] [-mode MODE] [-rf RANKFILE] [CAFFE_TRAIN_FLAGS...]
# trains with SOLVER as N learners of one DDL job (docs/DDL.md), printing the command first:
#   mpirun -n N -x PATH [-rf RANKFILE | --oversubscribe] CAFFE_BIN train --solver=COPY \
#          -ddl "-mode MODE $DDL_OPTIONS" CAFFE_TRAIN_FLAGS
# N: -n, else the number of learners the rank file places, else 2. MODE: -mode, else b:XxYxZ
# from the rank file's "#dims" line, else r:N. SOLVER holds the schedule of one process; COPY is
# it for N learners at the same per-learner batch: max_iter, stepsize, stepvalue, test_interval
# and snapshot divided by N (the same epochs in 1/N of the steps), max_iter rounded up to whole
# test intervals so that the run ends with a test. COPY is written in a folder beside SOLVER
# (every learner reads it, on every host: like the data, it must be on a shared filesystem) and
# removed at exit. The environment can change:
#   ITERS          the steps (then TEST_INTERVAL defaults to ITERS: a test at the start and end)
#   TEST_INTERVAL  the steps between tests;  TEST_ITER  the test batches per test
#   DDL_OPTIONS    more -ddl options, e.g. "-dump_iter 100"
#   MPIRUN         the launcher (default mpirun);  MPIRUN_FLAGS  more of its flags, e.g.
#                  "--mca btl_tcp_if_include ib0" (split at spaces)
#   OMP_NUM_THREADS  each learner's threads (without a rank file: this machine's cores / N)
#   CAFFE_BIN or TOOLS  the caffe binary, or the tools' folder (default ./build/bin)
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"

ddl_fail() {
  echo "$(basename "$0"): error: $*" >&2
  exit 1
}

# ddl_count NAME VALUE: fails unless VALUE is a whole number >= 1.
ddl_count() {
  case "$2" in
    '' | *[!0-9]* | 0*) ddl_fail "$1 '$2' is not a whole number >= 1" ;;
  esac
}

# ddl_field NAME FILE: the first value of the solver field NAME in FILE.
ddl_field() {
  sed -n "s/^$1: *\([0-9]*\).*/\1/p" "$2" | head -n 1
}

# ddl_solver SOLVER LEARNERS: the solver for LEARNERS learners, on stdout.
ddl_solver() {
  max_iter="$(ddl_field max_iter "$1")"
  interval="$(ddl_field test_interval "$1")"
  if [ -z "$max_iter" ] || [ -z "$interval" ]; then
    ddl_fail "$1 has no max_iter or test_interval"
  fi
  if [ -n "${ITERS:-}" ]; then
    ddl_count ITERS "$ITERS"
    iters="$ITERS"
    interval="${TEST_INTERVAL:-$ITERS}"
    ddl_count TEST_INTERVAL "$interval"
  else
    interval="${TEST_INTERVAL:-$(((interval + $2 - 1) / $2))}"
    ddl_count TEST_INTERVAL "$interval"
    iters=$((((max_iter + $2 - 1) / $2 + interval - 1) / interval * interval))
  fi
  [ -z "${TEST_ITER:-}" ] || ddl_count TEST_ITER "$TEST_ITER"
  awk -v n="$2" -v iters="$iters" -v interval="$interval" -v test_iter="${TEST_ITER:-}" '
    /^max_iter:/ { print "max_iter: " iters; next }
    /^test_interval:/ { print "test_interval: " interval; next }
    /^test_iter:/ && test_iter != "" { print "test_iter: " test_iter; next }
    /^(stepsize|stepvalue|snapshot):/ {
      split($0, field, /: */)
      value = field[2] + 0
      print field[1] ": " (value > 0 ? int((value + n - 1) / n) : value)
      next
    }
    { print }' "$1"
}

ddl_train() {
  solver="$1"
  shift
  learners=""
  mode=""
  rankfile=""
  while [ $# -gt 0 ]; do
    case "$1" in
      -n | -mode | -rf)
        [ $# -ge 2 ] || ddl_fail "$1 needs a value"
        case "$1" in
          -n) learners="$2" ;;
          -mode) mode="$2" ;;
          -rf) rankfile="$2" ;;
        esac
        shift 2
        ;;
      *) break ;;
    esac
  done
  [ -z "$learners" ] || ddl_count -n "$learners"
  if [ -n "$rankfile" ]; then
    [ -r "$rankfile" ] ||
      ddl_fail "rank file $rankfile cannot be read (scripts/rank_gen.py makes one)"
    placed="$(grep -c '^rank [0-9]' "$rankfile" || true)"
    [ "$placed" -gt 0 ] ||
      ddl_fail "rank file $rankfile places no learners (no 'rank R=HOST slot=...' lines)"
    [ -z "$learners" ] || [ "$learners" = "$placed" ] ||
      ddl_fail "-n $learners, but rank file $rankfile places $placed learners"
    learners="$placed"
    dims="$(sed -n 's/^#dims = *\([0-9x]*\).*/\1/p' "$rankfile" | head -n 1)"
    [ -n "$mode" ] || mode="${dims:+b:$dims}"
  fi
  learners="${learners:-2}"
  mode="${mode:-r:$learners}"
  command -v "${MPIRUN:-mpirun}" > /dev/null ||
    ddl_fail "${MPIRUN:-mpirun} not found: install Open MPI (scripts/install_deps.sh) or set MPIRUN"

  DDL_RUN_DIR="$(mktemp -d "$(dirname "$solver")/run.XXXXXX")"
  trap 'rm -rf "$DDL_RUN_DIR"' EXIT
  trap 'exit 130' INT TERM
  copy="$DDL_RUN_DIR/$(basename "$solver")"
  ddl_solver "$solver" "$learners" > "$copy"
  echo "$(basename "$0"): $learners learners, -mode $mode, $(ddl_field max_iter "$copy")" \
       "iterations (one process: $(ddl_field max_iter "$solver")), a test every" \
       "$(ddl_field test_interval "$copy")"

  set -- "$CAFFE_BIN" train --solver="$copy" -ddl "-mode $mode${DDL_OPTIONS:+ $DDL_OPTIONS}" "$@"
  if [ -n "$rankfile" ]; then
    set -- -rf "$rankfile" "$@"
  else
    # One machine: learners may outnumber its cores; their OpenMP pools share the cores.
    cores="$(getconf _NPROCESSORS_ONLN 2> /dev/null || echo 1)"
    threads=$((cores / learners > 0 ? cores / learners : 1))
    set -- --oversubscribe -x OMP_NUM_THREADS="${OMP_NUM_THREADS:-$threads}" "$@"
  fi
  if [ -n "$rankfile" ] && [ -n "${OMP_NUM_THREADS:-}" ]; then
    set -- -x OMP_NUM_THREADS "$@"
  fi
  [ -z "${LD_LIBRARY_PATH:-}" ] || set -- -x LD_LIBRARY_PATH "$@"
  # shellcheck disable=SC2086  # MPIRUN_FLAGS is a list of flags
  set -- "${MPIRUN:-mpirun}" -n "$learners" -x PATH ${MPIRUN_FLAGS:-} "$@"
  for word in "$@"; do
    case "$word" in
      *' '*) printf "'%s' " "$word" ;;
      *) printf '%s ' "$word" ;;
    esac
  done
  echo
  "$@"
}
