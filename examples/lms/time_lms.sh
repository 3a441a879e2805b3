#!/usr/bin/env sh
# Times a net too large for the GPU's memory under Large Model Support (docs/LMS.md): GoogLeNet's
# deploy net at 10x3x1200x1200 (IBM's own LMS case, about 15.9 GB of blobs) or the 3-D U-Net on a
# 192x192x192 volume:
#   examples/lms/time_lms.sh googlenet|unet3d [-batch N] [-size S] [-cpu] [caffe time flags...]
# writes the net, examples/lms/<net>_<N>x<S>.prototxt, from the model's deploy net
# (resize_input.sh: only the Input shape changes), and runs
#   caffe time -model NET -gpu 0 -lms 8192 -lms_frac 0.9 -iterations 1 [flags...]
# Defaults: googlenet -batch 10 -size 1200, unet3d -batch 1 -size 192. Flags given later win
# (-lms 160000000, -gpu_mem_limit 16G to act as a 16 GB GPU, -iterations 5). -cpu leaves -gpu
# out: the net runs on the CPU, where the LMS flags have no effect (the log says so); use it with
# a small -size to check a net quickly. CAFFE_BIN or TOOLS: the caffe binary, or the tools'
# folder (default ./build/bin).
set -e
cd "$(dirname "$0")/../.."
CAFFE_BIN="${CAFFE_BIN:-${TOOLS:-./build/bin}/caffe}"

fail() {
  echo "$(basename "$0"): error: $*" >&2
  exit 1
}

net="${1:-}"
[ $# -eq 0 ] || shift
case "$net" in
  googlenet) model=models/bvlc_googlenet/deploy.prototxt batch=10 size=1200 ;;
  unet3d) model=models/unet3d/deploy.prototxt batch=1 size=192 ;;
  *) fail "the first argument names the net: googlenet or unet3d (got '$net')" ;;
esac
gpu="-gpu 0"
while [ $# -gt 0 ]; do
  case "$1" in
    -batch | -size)
      [ $# -ge 2 ] || fail "$1 needs a value"
      if [ "$1" = -batch ]; then batch="$2"; else size="$2"; fi
      shift 2
      ;;
    -cpu)
      gpu=""
      shift
      ;;
    *) break ;;
  esac
done
if [ "$net" = googlenet ]; then
  dims="$batch 3 $size $size"
else
  dims="$batch 1 $size $size $size"
fi
model_out="examples/lms/${net}_${batch}x${size}.prototxt"
# shellcheck disable=SC2086  # dims and gpu are lists of words
sh examples/lms/resize_input.sh "$model" "$model_out" $dims
# shellcheck disable=SC2086
set -- "$CAFFE_BIN" time -model "$model_out" $gpu -lms 8192 -lms_frac 0.9 -iterations 1 "$@"
echo "$*"
"$@"
