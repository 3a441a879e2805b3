#!/usr/bin/env bash
# Ours beside PyTorch on the CPU, in one run: for each net, our training step (forward + backward)
# and inference forward from `caffe time`, and PyTorch running the same prototxt-defined graph
# (benchmarks/torch_from_prototxt.py) at the same batch and thread count, interleaved repeat by
# repeat. Prints one markdown table of medians over the repeats, with the ratios issue 9's goal is
# stated in (ours / PyTorch, ours / BVLC Caffe from ../shared/ANCHORS.md), peak resident memory,
# and the GFLOP/s of our convolution layers against the machine's sgemm rate measured alongside.
#
#   benchmarks/cpu.sh [-r repeats] [-i iterations] [-t threads] [-p "fp32 bf16"] [net ...]
#
# -p: the precisions, each a row per net (default fp32): ours with `caffe time -precision P`,
# PyTorch with bf16 autocast for bf16 (docs/PRECISION.md); they alternate within each repeat, and
# with more than one, the last lines give each net's fp32 / P ratio of our training step.
#
# Nets are names of ../shared/benchmarks/nets/<net>.prototxt, paths to prototxts, or
# resnet50_trainval_b<N> (models/resnet50/train_val.prototxt with its data layers replaced by an
# Input of batch N). Default: the five reference nets of ANCHORS.md and resnet50_trainval_b8.
# CAFFE_BUILD_DIR (default build) names the build; PYTHON (default /usr/bin/python3, where Debian's
# python3-torch goes) the interpreter. Installs python3-torch, python3-protobuf, protobuf-compiler
# and time with apt-get when missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."

REPEATS=3
ITERATIONS=10
THREADS=2
PRECISIONS=(fp32)
while getopts "r:i:t:p:" option; do
  case "$option" in
    r) REPEATS="$OPTARG" ;;
    i) ITERATIONS="$OPTARG" ;;
    t) THREADS="$OPTARG" ;;
    p) read -r -a PRECISIONS <<< "$OPTARG" ;;
    *) echo "usage: $0 [-r repeats] [-i iterations] [-t threads] [-p \"fp32 bf16\"] [net ...]" >&2
       exit 1 ;;
  esac
done
for precision in "${PRECISIONS[@]}"; do
  case "$precision" in
    fp32|bf16) ;;
    *) echo "-p: \"$precision\" is not a precision; expected fp32 or bf16" >&2; exit 1 ;;
  esac
done
shift $((OPTIND - 1))
NETS=("$@")
[ ${#NETS[@]} -eq 0 ] && NETS=(lenet_b64 cifar10_quick_b100 bvlc_reference_caffenet_trainval_b10
                               bvlc_alexnet_trainval_b10 bvlc_googlenet_trainval_b10
                               resnet50_trainval_b8)

SHARED="${CAFFE_SHARED_DIR:-../shared}"
BUILD="${CAFFE_BUILD_DIR:-build}"
CAFFE="$BUILD/bin/caffe"
SGEMM="$BUILD/bin/bench_sgemm"
PYTHON="${PYTHON:-/usr/bin/python3}"
TORCH_NET=benchmarks/torch_from_prototxt.py
[ -x "$CAFFE" ] || { echo "$CAFFE not found: run scripts/build.sh first" >&2; exit 1; }

missing=()
"$PYTHON" -c "import torch" 2> /dev/null || missing+=(python3-torch)
"$PYTHON" -c "import google.protobuf" 2> /dev/null || missing+=(python3-protobuf)
command -v protoc > /dev/null || missing+=(protobuf-compiler)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing ${missing[*]}: apt-get install them (as root)" >&2
    exit 1
  fi
  echo "installing ${missing[*]} ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
    { apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# caffe_pb2 from our own caffe.proto, so the script needs no pycaffe build.
protoc --proto_path=src/caffe/proto --python_out="$WORK" src/caffe/proto/caffe.proto

# BVLC Caffe's fwd+bwd ms and peak RSS from ANCHORS.md §1 (the ratio uses the range's low end,
# BVLC's best, so it errs against us).
declare -A BVLC=(
  [lenet_b64]="19.0-19.4|72 MB"
  [cifar10_quick_b100]="159.6|107 MB"
  [bvlc_reference_caffenet_trainval_b10]="416.6-418.8|623 MB"
  [bvlc_alexnet_trainval_b10]="469.8-494.1|665 MB"
  [bvlc_googlenet_trainval_b10]="1195|960 MB"
)

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# each "V1 V2 ...": the median of a space-separated list.
each() { tr ' ' '\n' <<< "$1" | sed '/^$/d' | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# value KEY FILE: the number of FILE's last "KEY <number>" line (torch_from_prototxt.py, GNU time).
value() { sed -n "s/^$1 \([0-9.eE+-]*\)\$/\1/p" "$2" | tail -1; }
# caffe_ms LABEL FILE: the milliseconds of caffe time's "LABEL: <number> ms." line.
caffe_ms() { sed -n "s/.*$1: \([0-9.eE+-]*\) ms\..*/\1/p" "$2" | tail -1; }

# Runs a command into LOG; on failure shows the log's tail and returns 1.
run_logged() {
  local log="$1" what="$2"
  shift 2
  if ! "$@" > "$log" 2>&1; then
    echo "$what failed ($*):" >&2
    tail -8 "$log" >&2
    return 1
  fi
}

export OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
STATUS=0
ALL_SGEMM=()
echo "| net | precision | ours train ms | PyTorch train ms | ours / PyTorch train (goal <= 0.8) | BVLC train ms | ours / BVLC train (goal <= 0.5) | ours inference ms | PyTorch inference ms | ours / PyTorch inference (goal <= 0.8) | ours peak RSS | PyTorch peak RSS | BVLC peak RSS | ours conv GFLOP/s vs sgemm |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
SPEEDUPS=()
for net in "${NETS[@]}"; do
  if [[ "$net" =~ ^resnet50_trainval_b([0-9]+)$ ]]; then
    model="$WORK/$net.prototxt"
    "$PYTHON" "$TORCH_NET" input-net --proto-dir "$WORK" \
      --model models/resnet50/train_val.prototxt --shape "${BASH_REMATCH[1]},3,224,224" > "$model"
  else
    model="$net"
    [ -f "$model" ] || model="$SHARED/benchmarks/nets/$net.prototxt"
    [ -f "$model" ] || { echo "no such net: $net (looked for $model)" >&2; exit 1; }
  fi
  name="$(basename "$model" .prototxt)"
  # Per precision, each figure's values over the repeats, space-separated.
  declare -A ours=() ours_inference=() ours_rss=() torch=() torch_inference=() torch_rss=() conv=()
  sgemm=()
  failed=""
  for repeat in $(seq "$REPEATS"); do
    for precision in "${PRECISIONS[@]}"; do
      log="$WORK/$name.$precision.$repeat"
      # Ours and PyTorch alternate, so a slow spell of the machine hits both.
      run_logged "$log.caffe_train" "$name: caffe time (TRAIN, $precision)" \
        /usr/bin/time -f "PEAK_RSS_KB %M" "$CAFFE" time -model "$model" \
        -iterations "$ITERATIONS" -precision "$precision" ||
        { failed="caffe time (TRAIN, $precision)"; break 2; }
      run_logged "$log.torch_train" "$name: PyTorch (TRAIN, $precision)" \
        /usr/bin/time -f "PEAK_RSS_KB %M" "$PYTHON" "$TORCH_NET" time --proto-dir "$WORK" \
        --model "$model" --phase TRAIN --iterations "$ITERATIONS" --threads "$THREADS" \
        --precision "$precision" --caffe-log "$log.caffe_train" ||
        { failed="PyTorch (TRAIN, $precision) or its shape check"; break 2; }
      run_logged "$log.caffe_test" "$name: caffe time (TEST, $precision)" \
        "$CAFFE" time -model "$model" -phase TEST -iterations "$ITERATIONS" \
        -precision "$precision" || { failed="caffe time (TEST, $precision)"; break 2; }
      run_logged "$log.torch_test" "$name: PyTorch (TEST, $precision)" \
        "$PYTHON" "$TORCH_NET" time --proto-dir "$WORK" --model "$model" --phase TEST \
        --iterations "$ITERATIONS" --threads "$THREADS" --precision "$precision" \
        --caffe-log "$log.caffe_test" || { failed="PyTorch (TEST, $precision) or its shape check"; break 2; }
      grep "^note:" "$log.torch_train" "$log.torch_test" | sed "s|^[^:]*:|$name: |" >&2 || true
      figures=("$(caffe_ms "Average Forward-Backward" "$log.caffe_train")"
               "$(caffe_ms "Average Forward pass" "$log.caffe_test")"
               "$(value PEAK_RSS_KB "$log.caffe_train")"
               "$(value train_ms "$log.torch_train")"
               "$(value inference_ms "$log.torch_test")"
               "$(value PEAK_RSS_KB "$log.torch_train")")
      for figure in "${figures[@]}"; do
        [ -n "$figure" ] || failed="a figure missing from the logs"
      done
      if [ -n "$failed" ]; then
        echo "$name: $failed; logs:" >&2
        tail -3 "$log".* >&2
        break 2
      fi
      ours[$precision]+=" ${figures[0]}"
      ours_inference[$precision]+=" ${figures[1]}"
      ours_rss[$precision]+=" ${figures[2]}"
      torch[$precision]+=" ${figures[3]}"
      torch_inference[$precision]+=" ${figures[4]}"
      torch_rss[$precision]+=" ${figures[5]}"
      conv[$precision]+=" $(value conv_gflops "$log.torch_train")"
      TORCH_VERSION="$(sed -n 's/^torch_version //p' "$log.torch_train")"
    done
    if [ -x "$SGEMM" ]; then
      sgemm+=("$("$SGEMM" | tail -1 | sed -n 's/.*: \([0-9.]*\) GFLOP.*/\1/p')")
      ALL_SGEMM+=("${sgemm[-1]}")
    fi
  done
  if [ -n "$failed" ]; then
    echo "| $name | | failed: $failed (see stderr) ||||||||||||"
    STATUS=1
    continue
  fi
  m_sgemm=""
  [ ${#sgemm[@]} -gt 0 ] && m_sgemm="$(printf '%s\n' "${sgemm[@]}" | median)"
  for precision in "${PRECISIONS[@]}"; do
    m_ours="$(each "${ours[$precision]}")"
    m_torch="$(each "${torch[$precision]}")"
    m_ours_inf="$(each "${ours_inference[$precision]}")"
    m_torch_inf="$(each "${torch_inference[$precision]}")"
    m_ours_rss="$(each "${ours_rss[$precision]}" | cut -d. -f1)"
    m_torch_rss="$(each "${torch_rss[$precision]}" | cut -d. -f1)"
    IFS='|' read -r bvlc bvlc_rss <<< "${BVLC[$name]:-n/a|n/a}"
    [ "$precision" = fp32 ] || { bvlc="n/a"; bvlc_rss="n/a"; }
    conv_cell="n/a"
    if [ -n "$(tr -d ' ' <<< "${conv[$precision]}")" ] && [ -n "$m_sgemm" ]; then
      m_conv="$(each "${conv[$precision]}")"
      conv_cell="$(awk -v c="$m_conv" -v s="$m_sgemm" \
        'BEGIN { printf "%.0f of %.0f (%.0f %%)", c, s, 100 * c / s }')"
    fi
    printf "| %s | %s | %.1f | %.1f | %s | %s | %s | %.1f | %.1f | %s | %d MB | %d MB | %s | %s |\n" \
      "$name" "$precision" "$m_ours" "$m_torch" "$(ratio "$m_ours" "$m_torch")" "$bvlc" \
      "$(if [ "$bvlc" = n/a ]; then echo n/a; else ratio "$m_ours" "${bvlc%%-*}"; fi)" \
      "$m_ours_inf" "$m_torch_inf" "$(ratio "$m_ours_inf" "$m_torch_inf")" \
      "$((m_ours_rss / 1024))" "$((m_torch_rss / 1024))" "$bvlc_rss" "$conv_cell"
    if [ "$precision" != fp32 ] && [ -n "${ours[fp32]:-}" ]; then
      SPEEDUPS+=("$name: our training step fp32 / $precision $(ratio "$(each "${ours[fp32]}")" "$m_ours"), inference $(ratio "$(each "${ours_inference[fp32]}")" "$m_ours_inf")")
    fi
  done
  unset ours ours_inference ours_rss torch torch_inference torch_rss conv
done

echo
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "$REPEATS repeats of $ITERATIONS iterations each, $THREADS threads," \
     "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $COMMIT, build $BUILD, PyTorch ${TORCH_VERSION:-?}"
cat <<'EOF'
train = forward + backward per iteration (caffe time's Average Forward-Backward; PyTorch
zero_grad + forward + loss.backward(), no update). inference = forward of the TEST-phase net
(caffe time -phase TEST's Average Forward pass; PyTorch eval + no_grad on the same TEST-phase
graph: Dropout off, BatchNorm on stored statistics, Accuracy layers included). bf16: ours with
-precision bf16, PyTorch under torch.autocast(dtype=torch.bfloat16). Peak RSS of the
TRAIN runs (GNU time). BVLC figures from ../shared/ANCHORS.md (ratios against a range's low end).
conv GFLOP/s: FLOPs of our convolution layers (2 per multiply-add; backward = weight gradient +
input gradient) over their per-layer times in caffe time, against bench_sgemm in the same repeats.
EOF
[ ${#SPEEDUPS[@]} -eq 0 ] || printf '%s\n' "${SPEEDUPS[@]}"
if [ ${#ALL_SGEMM[@]} -gt 0 ]; then
  read -r -a sorted <<< "$(printf '%s\n' "${ALL_SGEMM[@]}" | sort -g | tr '\n' ' ')"
  echo "sgemm during the run: ${sorted[0]}-${sorted[-1]} GFLOP/s;" \
       "machine now: $("$SGEMM" | tail -1)"
fi
exit "$STATUS"
