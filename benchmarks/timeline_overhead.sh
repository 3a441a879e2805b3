#!/usr/bin/env bash
# What the timeline (docs/TIMELINE.md) costs: `caffe time` forward+backward per iteration on
# training nets, runs alternating between this build without -timeline, this build with
# -timeline recording every iteration, and (with -b) a build from before the timeline existed, in
# an order that rotates every round, so that machine noise falls on all alike. Prints a markdown
# table of medians and the differences.
#
#   benchmarks/timeline_overhead.sh [-b OTHER_CAFFE] [-r rounds] [-i iterations] [net ...]
#
# Nets are names of ../shared/benchmarks/nets/<net>.prototxt. Default: CaffeNet and GoogLeNet
# train_val at batch 10, 10 rounds of 10 iterations, 2 OpenMP threads.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=10
ITERATIONS=10
BEFORE=""
while getopts "b:r:i:" option; do
  case "$option" in
    b) BEFORE="$OPTARG" ;;
    r) ROUNDS="$OPTARG" ;;
    i) ITERATIONS="$OPTARG" ;;
    *) echo "usage: $0 [-b OTHER_CAFFE] [-r rounds] [-i iterations] [net ...]" >&2; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
NETS=("$@")
[ ${#NETS[@]} -eq 0 ] && NETS=(bvlc_reference_caffenet_trainval_b10 bvlc_googlenet_trainval_b10)
SHARED="${CAFFE_SHARED_DIR:-../shared}"
CAFFE=build/bin/caffe
[ -x "$CAFFE" ] || { echo "$CAFFE not found: run scripts/build.sh first" >&2; exit 1; }
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

# Milliseconds of one forward+backward, from `caffe time`'s average.
time_once() {
  OMP_NUM_THREADS=2 "$@" -iterations "$ITERATIONS" 2>&1 |
    sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p'
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "| net | before the timeline | off | on (every iteration recorded) | off vs before | on vs off |"
echo "|---|---|---|---|---|---|"
for net in "${NETS[@]}"; do
  model="$SHARED/benchmarks/nets/$net.prototxt"
  [ -f "$model" ] || { echo "no $model" >&2; exit 1; }
  : > "$SCRATCH/before"
  : > "$SCRATCH/off"
  : > "$SCRATCH/on"
  configurations=(off on)
  [ -n "$BEFORE" ] && configurations+=(before)
  count=${#configurations[@]}
  for round in $(seq "$ROUNDS"); do
    # Each round starts with the next configuration: a run after others is often slower (the
    # machine's turbo and caches), and that must not fall on one of them.
    for k in $(seq 0 $((count - 1))); do
      case "${configurations[$(((round + k) % count))]}" in
        off) time_once "$CAFFE" time -model "$model" >> "$SCRATCH/off" ;;
        on) time_once "$CAFFE" time -model "$model" -timeline "$SCRATCH/trace.json" \
              -timeline_iters "0:$ITERATIONS" >> "$SCRATCH/on" ;;
        before) time_once "$BEFORE" time -model "$model" >> "$SCRATCH/before" ;;
      esac
    done
  done
  off=$(median < "$SCRATCH/off")
  on=$(median < "$SCRATCH/on")
  before="-"
  versus_before="-"
  if [ -n "$BEFORE" ]; then
    before=$(median < "$SCRATCH/before")
    versus_before=$(awk -v a="$off" -v b="$before" 'BEGIN {printf "%+.1f %%", (a / b - 1) * 100}')
  fi
  versus_off=$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%+.1f %%", (a / b - 1) * 100}')
  echo "| $net | $before | $off | $on | $versus_before | $versus_off |"
done
