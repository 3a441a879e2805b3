#!/usr/bin/env bash
# Times nets with `caffe time` and prints a markdown table: forward, backward and forward+backward
# milliseconds per iteration (medians over runs) and peak resident memory, beside BVLC Caffe's and
# PyTorch's figures from ../shared/ANCHORS.md for the same nets on this machine kind.
#
#   benchmarks/caffe_time.sh [-r runs] [-i iterations] [-t threads] [net ...]
#
# Nets are names of ../shared/benchmarks/nets/<net>.prototxt (BVLC's nets with Input layers) or
# paths to prototxts. Default: LeNet b64, CIFAR-10 quick b100, CaffeNet train_val b10.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=3
ITERATIONS=20
THREADS=2
while getopts "r:i:t:" option; do
  case "$option" in
    r) RUNS="$OPTARG" ;;
    i) ITERATIONS="$OPTARG" ;;
    t) THREADS="$OPTARG" ;;
    *) echo "usage: $0 [-r runs] [-i iterations] [-t threads] [net ...]" >&2; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
NETS=("$@")
[ ${#NETS[@]} -eq 0 ] && NETS=(lenet_b64 cifar10_quick_b100 bvlc_reference_caffenet_trainval_b10)

SHARED="${CAFFE_SHARED_DIR:-../shared}"
CAFFE=build/bin/caffe
[ -x "$CAFFE" ] || { echo "$CAFFE not found: run scripts/build.sh first" >&2; exit 1; }
command -v /usr/bin/time > /dev/null || { echo "GNU time is needed (apt-get install time)" >&2; exit 1; }

# BVLC fwd+bwd, PyTorch fwd+bwd, PyTorch inference fwd (ms) and BVLC peak RSS, from ANCHORS.md.
declare -A ANCHOR=(
  [lenet_b64]="19.0-19.4|19.8-20.6|8.0-8.3|72 MB"
  [cifar10_quick_b100]="159.6|55.5-68.0|29.4-30.0|107 MB"
  [bvlc_reference_caffenet_trainval_b10]="416.6-418.8|413.9-431.2|123-132|623 MB"
  [bvlc_alexnet_trainval_b10]="469.8-494.1|545.6|167|665 MB"
  [bvlc_googlenet_trainval_b10]="1195|1030|401|960 MB"
)

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

export OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS"
echo "| net | ours fwd | ours bwd | ours fwd+bwd | ours peak RSS | BVLC fwd+bwd | PyTorch fwd+bwd | PyTorch inference fwd | BVLC peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|"
for net in "${NETS[@]}"; do
  model="$net"
  [ -f "$model" ] || model="$SHARED/benchmarks/nets/$net.prototxt"
  [ -f "$model" ] || { echo "no such net: $net (looked for $model)" >&2; exit 1; }
  name="$(basename "$model" .prototxt)"
  fwd=() bwd=() both=() rss=()
  for _ in $(seq "$RUNS"); do
    log="$(/usr/bin/time -f "PEAK_RSS_KB %M" "$CAFFE" time -model "$model" \
           -iterations "$ITERATIONS" 2>&1)"
    fwd+=("$(sed -n 's/.*Average Forward pass: \([0-9.]*\) ms.*/\1/p' <<< "$log")")
    bwd+=("$(sed -n 's/.*Average Backward pass: \([0-9.]*\) ms.*/\1/p' <<< "$log")")
    both+=("$(sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' <<< "$log")")
    rss+=("$(sed -n 's/^PEAK_RSS_KB \([0-9]*\)/\1/p' <<< "$log")")
  done
  anchor="${ANCHOR[$name]:-|||}"
  IFS='|' read -r bvlc torch torch_inference bvlc_rss <<< "$anchor"
  printf "| %s | %.1f | %.1f | %.1f | %d MB | %s | %s | %s | %s |\n" "$name" \
    "$(printf '%s\n' "${fwd[@]}" | median)" "$(printf '%s\n' "${bwd[@]}" | median)" \
    "$(printf '%s\n' "${both[@]}" | median)" "$(( $(printf '%s\n' "${rss[@]}" | median | cut -d. -f1) / 1024 ))" \
    "$bvlc" "$torch" "$torch_inference" "$bvlc_rss"
done
echo
echo "$RUNS runs of $ITERATIONS iterations each, $THREADS threads, $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -x build/bin/bench_sgemm ] && echo "machine now: $(build/bin/bench_sgemm | tail -1)"
