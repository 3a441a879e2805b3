#!/usr/bin/env bash
# gpu_verify.sh's searches (the ctest `gpu_verify_sh`), without a GPU: its functions are sourced
# and run against a stand-in `caffe` whose "GPU" fits a batch or side up to a limit (higher with
# -lms), so the largest sizes they report, the reports and the stop on a failure that is not about
# memory can be checked here before they cost device time.
set -uo pipefail
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export OUT="$WORK/out"
mkdir -p "$OUT"
GPU_VERIFY_SOURCE_ONLY=1 source "$(cd "$(dirname "$0")" && pwd)/gpu_verify.sh"
failures=0

FIT_PLAIN=100   # the largest value (first dim) that fits a -gpu_mem_limit without -lms
FIT_LMS=200     # ... with -lms (without -gpu_mem_limit everything fits)
BROKEN=0        # 1: every run fails for another reason
caffe() {  # caffe time -model FILE -gpu 0 -iterations N [flags]
  local model="" lms=0 budget=0 trace=""
  while [ $# -gt 0 ]; do
    case "$1" in
      -model) model="$2"; shift ;;
      -timeline) trace="$2"; shift ;;
      -lms) lms=1 ;;
      -gpu_mem_limit) budget=1 ;;
    esac
    shift
  done
  [ "$BROKEN" = 1 ] && { echo "F1121 net.cpp:12] Unknown layer type: Bogus"; return 1; }
  local value limit=$FIT_PLAIN
  value=$(grep -o "dim: [0-9]*" "$model" | head -1 | cut -d' ' -f2)
  [ "$lms" = 1 ] && limit=$FIT_LMS
  [ "$budget" = 1 ] || limit=1000000
  if [ "$value" -gt "$limit" ]; then
    echo "caffe time: error: forward pass of Convolution layer 'conv1': out of GPU memory"
    return 1
  fi
  [ "$lms" = 1 ] && echo "[LMS] swapped in 10 bytes (1 blocks, 0 prefetched)"
  # A trace of one 10 ms step: the GPU busy for 4 ms of it, one 2 MB swap in of 1 ms.
  [ -n "$trace" ] && cat > "$trace" <<'JSON'
{"otherData":{"rank":0},"traceEvents":[
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"main"}},
{"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"GPU 0 compute"}},
{"ph":"X","cat":"step","name":"iteration 0","pid":0,"tid":0,"ts":0,"dur":10000,"args":{}},
{"ph":"X","cat":"forward","name":"conv1","pid":0,"tid":0,"ts":0,"dur":100,"args":{}},
{"ph":"X","cat":"forward","name":"conv1","pid":0,"tid":1,"ts":500,"dur":4000,"args":{}},
{"ph":"X","cat":"copy","name":"swap in","pid":0,"tid":2,"ts":100,"dur":1000,"args":{"bytes":2000000}}
]}
JSON
  [ "${CAFFE_CUDNN_ALGO:-}" = time ] && value=$((value - 8))  # timed algorithms: faster
  [ -n "${CAFFE_CUDNN_WORKSPACE_MB:-}" ] && value=$((value - 2))  # more workspace: faster still
  [ "${CAFFE_FUSION:-1}" = 0 ] && value=$((value + 4))  # layers apart: slower
  printf 'I1122 caffe.cpp:520]      conv1\tforward: 30 ms.\n'
  printf 'I1122 caffe.cpp:522]      conv1\tbackward: 50.5 ms.\n'
  printf 'I1122 caffe.cpp:520] inception/3x3\tforward: 10 ms.\n'
  printf 'I1122 caffe.cpp:522] inception/3x3\tbackward: 20 ms.\n'
  echo "Average Forward-Backward: $((value * (1 + lms))).5 ms."
}
fake_model() { echo "layer { input_param { shape { dim: $1 dim: 3 } } }" > /tmp/probe.prototxt; }

check() {  # check <what> <expected> <got>
  if [ "$2" = "$3" ]; then
    echo "ok: $1: $3"
  else
    echo "FAIL: $1: expected '$2', got '$3'"
    failures=$((failures + 1))
  fi
}

M=(-gpu_mem_limit 16G)
check "largest batch, step 8 from 32" 96 "$(largest fake_model 32 8 1024 "$OUT/r1.txt" "${M[@]}")"
check "probes made" 6 "$(wc -l < "$OUT/r1.txt")"  # 32 64 128 96 112 104
check "largest with -lms" 200 "$(largest fake_model 96 8 256 "$OUT/r2.txt" "${M[@]}" -lms 8192)"
check "the cap when everything fits" 64 "$(largest fake_model 16 8 64 "$OUT/r3.txt" "${M[@]}")"
check "below a start that does not fit" 96 "$(largest fake_model 128 8 512 "$OUT/r4.txt" "${M[@]}")"
FIT_PLAIN=4
check "nothing fits" 0 "$(largest fake_model 32 8 512 "$OUT/r4.txt" "${M[@]}")"
FIT_PLAIN=100
BROKEN=1
largest fake_model 32 8 1024 "$OUT/r5.txt" "${M[@]}" > /dev/null 2> "$OUT/r5.err"
check "a failure not about memory stops the search" "1 Unknown layer type" \
  "$? $(grep -o 'Unknown layer type' "$OUT/r5.err")"
BROKEN=0

# Both Input shapes (data and label) get the batch, in either prototxt layout.
cat > "$WORK/net.prototxt" <<'NET'
layer { name: "data" type: "Input" top: "data" top: "label"
  input_param {
    shape {
      dim: 10
      dim: 3
      dim: 227
    }
    shape { dim: 10 }
  }
}
NET
check "set_batch sets every shape's first dim" "dim: 256 dim: 3 dim: 227 dim: 256" \
  "$(set_batch "$WORK/net.prototxt" 256 | grep -o 'dim: [0-9]*' | tr '\n' ' ' | sed 's/ $//')"

unet_side() { fake_model "$1"; }
run_unet > /dev/null
check "run_unet's result line" \
  "largest side without LMS: 96; with -lms 8192: 200; voxel ratio 9.04" "$(tail -1 "$OUT/unet.txt")"

resnet_batch() { fake_model "$1"; }
run_lmsfit > /dev/null
check "run_lmsfit times twice the batch that fits" \
  "largest batch without LMS under 16G: 96; timed at batch 192:" \
  "$(grep 'largest batch' "$OUT/lmsfit.txt")"
check "speed ratio with -lms 8192" "  16G, -lms 8192: 384.5 ms (speed ratio 0.501)" \
  "$(grep -- '-lms 8192:' "$OUT/lmsfit.txt")"
check "every LMS setting timed" 3 "$(grep -c -- '16G, -lms' "$OUT/lmsfit.txt")"

unet_side() { fake_model "$1"; }
run_unetfit > /dev/null
check "run_unetfit times about twice the voxels" \
  "largest side without LMS under 16G: 96; timed at side 120 (1.95x the voxels):" \
  "$(grep 'largest side' "$OUT/unetfit.txt")"
check "run_unetfit reuses run_unet's search (no probes of its own)" 0 \
  "$(grep -c 'fits\|does not fit' "$OUT/unetfit.txt")"
check "run_unetfit's -lms_frac 0.9 line" "  16G, -lms 8192 -lms_frac 0.9: 240.5 ms (speed ratio 0.501)" \
  "$(grep -- '-lms_frac 0.9:' "$OUT/unetfit.txt")"
# The time step: ours beside PyTorch's (a stand-in python3), and the ratio of the two.
batch_model() {  # ResNet-50 has BatchNorm layers, the others none
  fake_model "$2"
  cp /tmp/probe.prototxt "$3"
  case "$1" in resnet*) echo 'layer { type: "BatchNorm" }' >> "$3" ;; esac
}
python3() { printf 'torch_version 2.11.0\nshapes_checked 25\ntrain_ms 128.25\n'; }
run_time > /dev/null
check "run_time's line for GoogLeNet" \
  "bvlc_googlenet_trainval_b10 at batch 128: caffe 128.5 ms (cuDNN's heuristics), 120.5 ms (algorithms timed), 118.5 ms (timed, 1 GiB workspace), PyTorch 128.25 ms (torch_version 2.11.0 shapes_checked 25); PyTorch's time / ours: 0.998 (heuristics), 1.064 (timed), 1.082 (timed, 1 GiB)" \
  "$(grep '^bvlc_googlenet' "$OUT/time.txt")"
check "run_time's slowest layers of GoogLeNet's timed run" \
  "  slowest layers (timed run, GPU time): conv1 80.50 ms (67%), inception/3x3 30.00 ms (25%)" \
  "$(grep -A1 '^bvlc_googlenet' "$OUT/time.txt" | tail -1)"
check "run_time times BatchNorm nets with the layers apart too" \
  "  layers apart (CAFFE_FUSION=0, timed): 60.5 ms; apart / as one: 1.071" \
  "$(grep 'CAFFE_FUSION=0' "$OUT/time.txt")"
unset -f python3

# The timeline step: the [LMS] line, and the summary's row of GPU busy and swap-ins.
run_timeline > /dev/null
check "run_timeline's [LMS] line" "[LMS] swapped in 10 bytes (1 blocks, 0 prefetched)" \
  "$(grep '^\[LMS\]' "$OUT/timeline.txt")"
check "run_timeline's summary: GPU busy and the copies in" "10.00 1.0% 40.0% 2.0 (2 MB)" \
  "$(grep '^ *average' "$OUT/timeline.txt" | awk '{print $2, $3, $4, $10, $11, $12}')"

# After a step its logs go into logs_<step>.tar.gz; the summaries and other archives stay.
rm -rf "$OUT" && mkdir -p "$OUT"
for name in time.txt time_googlenet.log torch_googlenet.txt time_googlenet.png nvidia-smi.txt \
    device_query.txt logs_lenet.tar.gz lenet.txt; do
  echo "$name" > "$OUT/$name"
done
pack_logs time
check "pack_logs leaves the summaries and the archives" \
  "device_query.txt lenet.txt logs_lenet.tar.gz logs_time.tar.gz nvidia-smi.txt time.txt" \
  "$(cd "$OUT" && ls | tr '\n' ' ' | sed 's/ $//')"
check "pack_logs packs the step's logs" \
  "time_googlenet.log time_googlenet.png torch_googlenet.txt" \
  "$(tar -tzf "$OUT/logs_time.tar.gz" | sort | tr '\n' ' ' | sed 's/ $//')"
pack_logs lms
check "pack_logs without logs makes no archive" "" "$(cd "$OUT" && ls logs_lms.tar.gz 2> /dev/null)"

# The sanitize step against a stand-in compute-sanitizer: a clean program, one with an error, one
# that outlasts the limit, one whose test fails; each run's line names the tool and the program.
mkdir -p "$WORK/sanitizer_bin" "$WORK/bundle/bin"
cat > "$WORK/sanitizer_bin/compute-sanitizer" <<'SANITIZER'
#!/usr/bin/env bash
tool=memcheck
while [ "${1#--}" != "$1" ]; do
  [ "$1" = --tool ] && tool="$2" && shift
  [ "$1" = --print-limit ] || [ "$1" = --error-exitcode ] && shift
  shift
done
"$@"
status=$?
case "$(basename "$1")" in
  test_bad) echo "========= ERROR SUMMARY: 2 errors"; exit 86 ;;
  caffe|test_*) [ "$tool" = racecheck ] &&
      echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" ||
      echo "========= ERROR SUMMARY: 0 errors" ;;
esac
exit $status
SANITIZER
for program in "caffe:exit 0" "test_good:exit 0" "test_bad:exit 0" "test_slow:sleep 5" \
    "test_failing:exit 1"; do
  printf '#!/bin/sh\n%s\n' "${program#*:}" > "$WORK/bundle/bin/${program%%:*}"
done
chmod +x "$WORK/sanitizer_bin/compute-sanitizer" "$WORK/bundle/bin/"*
rm -rf "$OUT" && mkdir -p "$OUT"
(PATH="$WORK/sanitizer_bin:$PATH" BUNDLE_DIR="$WORK/bundle" SANITIZE_TIMEOUT=1 \
  SANITIZE_PROGRAMS="test_good test_bad test_slow test_failing" run_sanitize > /dev/null)
check "sanitize: a line per tool and program" \
  "memcheck test_bad: ERRORS (ERROR SUMMARY: 2 errors)|memcheck test_failing: exit 1 (a test failed, or the program did not start) (ERROR SUMMARY: 0 errors)|memcheck test_good: clean (ERROR SUMMARY: 0 errors)|memcheck test_slow: cut off after 1 s|racecheck test_bad: ERRORS (ERROR SUMMARY: 2 errors)|racecheck test_failing: exit 1 (a test failed, or the program did not start) (RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings))|racecheck test_good: clean (RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings))|racecheck test_slow: cut off after 1 s" \
  "$(sort "$OUT/sanitize.txt" | tr '\n' '|' | sed 's/|$//')"
# Of the layers' test programs only those with a GPU-against-CPU suite, and of those only that
# suite (the kernels' own programs whole).
cat > "$WORK/bundle/bin/test_relu_layer" <<'PROGRAM'
#!/bin/sh
case "$*" in
  *--gtest_list_tests*) printf 'ReLULayerGpuTest/0.  # TypeParam = float\n  ReLU\n' ;;
  *) echo "$*" > "$OUT/relu_arguments" ;;
esac
PROGRAM
printf '#!/bin/sh\nexit 0\n' > "$WORK/bundle/bin/test_argmax_layer"  # lists no GPU suite
chmod +x "$WORK/bundle/bin/test_relu_layer" "$WORK/bundle/bin/test_argmax_layer"
check "sanitize: the programs, a layer's with its GPU suite's filter" \
  "test_gpu_math_functions test_fused_layers test_gpu_blob test_im2col test_relu_layer:*LayerGpuTest*" \
  "$(BUNDLE_DIR="$WORK/bundle" sanitize_programs | tr '\n' ' ' | sed 's/ $//')"
rm -rf "$OUT" && mkdir -p "$OUT"
(PATH="$WORK/sanitizer_bin:$PATH" BUNDLE_DIR="$WORK/bundle" SANITIZE_TOOLS=memcheck \
  SANITIZE_PROGRAMS="test_relu_layer:*LayerGpuTest*" run_sanitize > /dev/null)
check "sanitize: a layer's program runs only its GPU suite" \
  "memcheck test_relu_layer: clean (ERROR SUMMARY: 0 errors); --gtest_brief=1 --gtest_filter=*LayerGpuTest*" \
  "$(cat "$OUT/sanitize.txt"); $(cat "$OUT/relu_arguments")"
printf '#!/bin/sh\necho "========= Error: Device not supported"\nexit 1\n' \
  > "$WORK/sanitizer_bin/compute-sanitizer"
rm -rf "$OUT" && mkdir -p "$OUT"
(PATH="$WORK/sanitizer_bin:$PATH" BUNDLE_DIR="$WORK/bundle" run_sanitize > /dev/null)
check "sanitize where the sanitizer refuses the device" \
  "sanitize: compute-sanitizer cannot run here: ========= Error: Device not supported" \
  "$(cat "$OUT/sanitize.txt")"

# Where the machine has no xz, unpack takes Python's tarfile.
mkdir -p "$WORK/packed/caffe-bundle/bin" "$WORK/no_xz" "$WORK/unpacked"
echo hello > "$WORK/packed/caffe-bundle/bin/tool"
ln -s tool "$WORK/packed/caffe-bundle/bin/link"
tar -C "$WORK/packed" -cJf "$WORK/bundle.tar.xz" caffe-bundle
ln -s "$(python3 -c "import sys; print(sys.executable)")" "$WORK/no_xz/python3"
PATH="$WORK/no_xz" unpack "$WORK/bundle.tar.xz" "$WORK/unpacked"
check "unpack without xz: the files and links" "hello" \
  "$(cat "$WORK/unpacked/caffe-bundle/bin/link")"
exit $failures
