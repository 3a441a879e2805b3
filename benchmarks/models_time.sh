#!/usr/bin/env bash
# Times every net under models/ on the CPU with `caffe time` at a small batch: each deploy.prototxt
# with its Input's batch (first dim) set to -b, the 3-D U-Net with a cubic input of side -s.
# Prints a markdown table of forward, backward and forward+backward milliseconds per iteration
# (medians over runs) and peak resident memory.
#
#   benchmarks/models_time.sh [-r runs] [-i iterations] [-t threads] [-b batch] [-s U-Net side]
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=3
ITERATIONS=3
THREADS=2
BATCH=2
SIDE=64
while getopts "r:i:t:b:s:" option; do
  case "$option" in
    r) RUNS="$OPTARG" ;;
    i) ITERATIONS="$OPTARG" ;;
    t) THREADS="$OPTARG" ;;
    b) BATCH="$OPTARG" ;;
    s) SIDE="$OPTARG" ;;
    *) echo "usage: $0 [-r runs] [-i iterations] [-t threads] [-b batch] [-s U-Net side]" >&2
       exit 1 ;;
  esac
done

CAFFE="${CAFFE_BUILD_DIR:-build}/bin/caffe"
[ -x "$CAFFE" ] || { echo "$CAFFE not found: run scripts/build.sh first" >&2; exit 1; }
command -v /usr/bin/time > /dev/null || { echo "GNU time is needed (apt-get install time)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# Rewrites the first Input shape of a deploy net: the batch, and for the U-Net the spatial sides.
# Both the one-line (`shape: { dim: 10 dim: 3 ... }`) and the one-dim-per-line forms occur.
resize_input() {
  python3 - "$1" "$2" "$3" <<'EOF'
import re, sys
path, batch, side = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
start = text.index("shape")
end = text.index("}", start)
dims = re.findall(r"dim:\s*\d+", text[start:end])
new = ["dim: " + batch] + dims[1:2] + (["dim: " + side] * (len(dims) - 2) if "unet" in path else dims[2:])
values = iter(new)
shape = re.sub(r"dim:\s*\d+", lambda _: next(values), text[start:end])
sys.stdout.write(text[:start] + shape + text[end:])
EOF
}

export OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS"
echo "| model | input | fwd ms | bwd ms | fwd+bwd ms | peak RSS |"
echo "|---|---|---|---|---|---|"
for deploy in models/*/deploy.prototxt; do
  name="$(basename "$(dirname "$deploy")")"
  model="$WORK/$name.prototxt"
  resize_input "$deploy" "$BATCH" "$SIDE" > "$model"
  input="$(python3 -c "import re,sys; t=open(sys.argv[1]).read(); s=t.index('shape'); \
print('x'.join(re.findall(r'dim:\s*(\d+)', t[s:t.index('}', s)])))" "$model")"
  fwd=() bwd=() both=() rss=()
  for _ in $(seq "$RUNS"); do
    log="$(/usr/bin/time -f "PEAK_RSS_KB %M" "$CAFFE" time -model "$model" \
           -iterations "$ITERATIONS" 2>&1)" || { echo "$name failed:" >&2; tail -5 <<< "$log" >&2; exit 1; }
    fwd+=("$(sed -n 's/.*Average Forward pass: \([0-9.]*\) ms.*/\1/p' <<< "$log")")
    bwd+=("$(sed -n 's/.*Average Backward pass: \([0-9.]*\) ms.*/\1/p' <<< "$log")")
    both+=("$(sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' <<< "$log")")
    rss+=("$(sed -n 's/^PEAK_RSS_KB \([0-9]*\)/\1/p' <<< "$log")")
  done
  printf "| %s | %s | %.1f | %.1f | %.1f | %d MB |\n" "$name" "$input" \
    "$(printf '%s\n' "${fwd[@]}" | median)" "$(printf '%s\n' "${bwd[@]}" | median)" \
    "$(printf '%s\n' "${both[@]}" | median)" \
    "$(( $(printf '%s\n' "${rss[@]}" | median | cut -d. -f1) / 1024 ))"
done
echo
echo "$RUNS runs of $ITERATIONS iterations each, $THREADS threads, $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
