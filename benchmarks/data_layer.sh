#!/usr/bin/env bash
# Whether the data layer keeps up with training: images per second the Data layer delivers from an
# encoded-JPEG LMDB (bench_data_layer: 256x256 JPEGs, batch 256, crop 227, mirror, mean file, for
# 1 and 2 decode threads), beside the images per second CaffeNet's training step consumes
# according to `caffe time` (BVLC's train_val with Input layers at batch 10, forward + backward).
#
#   benchmarks/data_layer.sh [-i caffe-time iterations] [-t compute threads] [-d decode threads]
set -euo pipefail
cd "$(dirname "$0")/.."

ITERATIONS=10
THREADS=2
DECODE_THREADS=1,2
while getopts "i:t:d:" option; do
  case "$option" in
    i) ITERATIONS="$OPTARG" ;;
    t) THREADS="$OPTARG" ;;
    d) DECODE_THREADS="$OPTARG" ;;
    *) echo "usage: $0 [-i iterations] [-t compute threads] [-d decode threads, e.g. 1,2]" >&2
       exit 1 ;;
  esac
done

BUILD="${CAFFE_BUILD_DIR:-build}"
SHARED="${CAFFE_SHARED_DIR:-../shared}"
NET="$SHARED/benchmarks/nets/bvlc_reference_caffenet_trainval_b10.prototxt"
[ -x "$BUILD/bin/bench_data_layer" ] || { echo "$BUILD/bin/bench_data_layer not found: build \
with OpenCV (scripts/build.sh)" >&2; exit 1; }
[ -f "$NET" ] || { echo "no such net: $NET" >&2; exit 1; }

echo "## Data layer (encoded JPEG LMDB)"
"$BUILD/bin/bench_data_layer" -t "$DECODE_THREADS"
echo
echo "## CaffeNet training step (caffe time, batch 10, $THREADS compute threads)"
log="$(OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" \
       "$BUILD/bin/caffe" time -model "$NET" -iterations "$ITERATIONS" 2>&1)"
ms="$(sed -n 's/.*Average Forward-Backward: \([0-9.]*\) ms.*/\1/p' <<< "$log")"
[ -n "$ms" ] || { echo "$log" >&2; exit 1; }
awk -v ms="$ms" 'BEGIN { printf "Average Forward-Backward: %.1f ms per 10 images = %.1f images/s consumed\n", ms, 10000 / ms }'
echo
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
