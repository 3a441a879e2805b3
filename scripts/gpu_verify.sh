#!/usr/bin/env bash
# Verifies the GPU build on a machine with a GPU but none of our Debian packages (the H200 that
# some sessions are lent; docs/GPU_STATUS.md says how to prepare and what to record). Run from
# the repository root there, with the bundle/ folder that scripts/gpu_prepare.sh makes here (the
# GPU build with its tests, the digits, ../shared's nets and fixtures, ResNet-50 at batch 64)
# carried along. Steps: tests [programs...] (alone), or any of lenet, time, ddl, lms, lmsfrac,
# lmsfit, unetfit, unet, timeline, sanitize; each command may run 10 minutes, so give a few steps
# per call:
#   scripts/gpu_verify.sh tests                       # every test program of the bundle
#   scripts/gpu_verify.sh tests test_gpu_math_functions test_relu_layer
#   scripts/gpu_verify.sh lenet time
#   scripts/gpu_verify.sh ddl
#   scripts/gpu_verify.sh lms
#   scripts/gpu_verify.sh lmsfrac lmsfit
#   scripts/gpu_verify.sh unetfit
#   scripts/gpu_verify.sh unet
#   scripts/gpu_verify.sh timeline                    # GoogLeNet 1200x1200 under LMS, traced
#   scripts/gpu_verify.sh sanitize                    # compute-sanitizer over the kernels' tests
# Logs and summaries go to $OUT (or gpu_verify_out/): each step's summary in <step>.txt, its logs
# in logs_<step>.tar.gz (the device tool brings back 8 files of $OUT).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="${OUT:-$ROOT/gpu_verify_out}"
mkdir -p "$OUT"
BUNDLE_DIR=/tmp/caffe-bundle

# Unpacks a .tar.xz: with tar where the machine has xz, else with Python's tarfile (the GPU
# machine's image need not have xz; its python3 is there for PyTorch).
unpack() {  # unpack <archive> <folder>
  if command -v xz > /dev/null; then
    tar -xJf "$1" -C "$2"
  else
    python3 -c 'import sys, tarfile
trusted = {"filter": "fully_trusted"} if hasattr(tarfile, "data_filter") else {}  # our own archive
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **trusted)' "$1" "$2"
  fi
}

# The test programs look for the sources, tools and shared fixtures where they were built
# (/work/main, /work/main/build-gpu/bin, /work/shared): recreate those paths here.
setup() {
  if [ ! -d "$BUNDLE_DIR" ]; then
    unpack bundle/gpu.tar.xz /tmp ||
      { echo "gpu_verify: cannot unpack bundle/gpu.tar.xz (scripts/gpu_prepare.sh)" >&2; exit 1; }
  fi
  mkdir -p /work
  [ "$ROOT" = /work/main ] || ln -sfn "$ROOT" /work/main
  ln -sfn "$BUNDLE_DIR" "$ROOT/build-gpu"
  if [ ! -e /work/shared ] && [ -f bundle/shared.tar.xz ]; then
    mkdir -p /tmp/shared && unpack bundle/shared.tar.xz /tmp/shared &&
      ln -sfn /tmp/shared /work/shared
  fi
  # shellcheck disable=SC1091
  source "$BUNDLE_DIR/env.sh"
  # Open MPI's shared-memory transport copies large messages with process_vm_readv, which some
  # container runtimes (gVisor) refuse: plain copies through the shared segment instead.
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  # Nor bind ranks to cores (the sandbox may refuse affinity calls; one GPU learner needs none).
  export OMPI_MCA_hwloc_base_binding_policy=none
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  caffe device_query -gpu 0 > "$OUT/device_query.txt" 2>&1
}

# How many test programs run at once: half the cores, 1 to 8 (they share the GPU).
half_the_cores() {
  local jobs=$(( $(nproc) / 2 ))
  [ "$jobs" -le 8 ] || jobs=8
  [ "$jobs" -ge 1 ] || jobs=1
  echo "$jobs"
}

# half_the_cores() test programs at once, so that the whole suite fits one 10-minute call;
# RUN_TESTS_JOBS=1 runs them one by one.
run_tests() {
  local jobs start=$SECONDS
  jobs=$(half_the_cores)
  RUN_TESTS_JOBS="${RUN_TESTS_JOBS:-$jobs}" LOG_DIR=/tmp/test_logs "$BUNDLE_DIR/run_tests.sh" "$@" \
      2>&1 | tee "$OUT/tests.txt"
  echo "gpu_verify: tests took $((SECONDS - start)) s with RUN_TESTS_JOBS=${RUN_TESTS_JOBS:-$jobs}" |
    tee -a "$OUT/tests.txt"
  tar -C /tmp -czf "$OUT/test_logs.tar.gz" test_logs
}

# The digits' LMDBs for LeNet (once per machine).
make_digits() {
  [ -d examples/mnist/digits_test_lmdb ] && return 0
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
      t10k-labels-idx1-ubyte; do
    [ -s "data/digits/$f" ] || cp "bundle/$f" data/digits/
  done
  convert_mnist_data data/digits/train-images-idx3-ubyte data/digits/train-labels-idx1-ubyte \
      examples/mnist/digits_train_lmdb --backend=lmdb > /dev/null 2>&1
  convert_mnist_data data/digits/t10k-images-idx3-ubyte data/digits/t10k-labels-idx1-ubyte \
      examples/mnist/digits_test_lmdb --backend=lmdb > /dev/null 2>&1
}

# The last test accuracy of a caffe train log.
last_accuracy() { grep "Test net output #0: accuracy" "$1" | tail -1 | sed 's/.*accuracy = //'; }

run_lenet() {
  # Issue 5, must-show 3: LeNet on the digits with -gpu 0 (the CPU's accuracy is in
  # docs/PERFORMANCE.md), then -gpu all (one solver thread per GPU, NCCL between them).
  make_digits
  # With GNU time's peak memory where the machine has it.
  local gnu_time=()
  [ -x /usr/bin/time ] && gnu_time=(/usr/bin/time -v)
  "${gnu_time[@]}" caffe train --solver=examples/mnist/lenet_digits_solver.prototxt -gpu 0 \
      > "$OUT/lenet_gpu.log" 2>&1
  echo "LeNet -gpu 0: exit $?, accuracy $(last_accuracy "$OUT/lenet_gpu.log")" | tee -a "$OUT/lenet.txt"
  caffe train --solver=examples/mnist/lenet_digits_solver.prototxt -gpu all \
      > "$OUT/lenet_gpu_all.log" 2>&1
  echo "LeNet -gpu all: exit $?, accuracy $(last_accuracy "$OUT/lenet_gpu_all.log")" \
       "($(grep -o "Using GPUs.*" "$OUT/lenet_gpu_all.log" | head -1))" |
    tee -a "$OUT/lenet.txt"
  # A training step's time with its Data layer (batches in pinned memory on the GPU), and the
  # compute mode device_query reports.
  caffe time -model examples/mnist/lenet_digits_train_test.prototxt -gpu 0 -iterations 50 \
      > "$OUT/lenet_time.log" 2>&1
  local status=$? step data mode
  step=$(grep -o "Average Forward-Backward: .*" "$OUT/lenet_time.log")
  data=$(grep -o "mnist$(printf '\t')forward: .*" "$OUT/lenet_time.log")
  mode=$(caffe device_query -gpu 0 2>&1 | grep -o "Compute mode: .*" | tr -s " ")
  echo "LeNet caffe time -gpu 0: exit $status, $step, data layer $data; $mode" |
    tee -a "$OUT/lenet.txt"
}

run_ddl() {
  # Issue 7, must-show 5: DDL with GPU learners under the bundle's mpirun. One learner (mode n),
  # then two (mode b): on one GPU they share it and reduce through host memory (NCCL refuses a
  # shared GPU), on two or more each has its own and NCCL reduces. Then allreduce_perf on GPU
  # buffers, ours beside NCCL's own ncclAllReduce, for 256 MB.
  make_digits
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
  for learners in 1 2; do
    local log="$OUT/ddl_n$learners.log"
    mpirun --oversubscribe -n "$learners" caffe train \
        --solver=examples/mnist/lenet_digits_solver.prototxt -gpu 0 \
        -ddl "-mode $([ "$learners" = 1 ] && echo n:1 || echo b:2) -dump_iter 500" > "$log" 2>&1
    echo "LeNet, $learners DDL learner(s) on $gpus GPU(s): exit $?, accuracy" \
         "$(last_accuracy "$log"); $(grep -o "DDL: dimension.*" "$log" | head -1)" |
      tee -a "$OUT/ddl.txt"
  done
  # Issue 43, must-show 7: two learners on the one GPU (-gpu 0 each) end with the weights of two
  # CPU learners on the same data, 20 steps from the same seed. NCCL refuses two ranks on one
  # GPU, so they reduce through host memory (the warning names the GPU); with several GPUs each
  # learner has its own and NCCL reduces.
  local solver=/tmp/ddl_pair_solver.prototxt weights=() device
  for device in gpu cpu; do
    sed -e 's/^max_iter:.*/max_iter: 20/; s/^test_interval:.*/test_interval: 1000/' \
        -e "s|^snapshot_prefix:.*|snapshot_prefix: \"/tmp/ddl_pair_$device\"|" \
        examples/mnist/lenet_digits_solver.prototxt > "$solver"
    echo "random_seed: 1" >> "$solver"
    local flags=()
    [ "$device" = gpu ] && flags=(-gpu 0)
    mpirun --oversubscribe -n 2 caffe train --solver="$solver" "${flags[@]}" -ddl "-mode n:2" \
        > "$OUT/ddl_pair_$device.log" 2>&1
    echo "LeNet, 2 DDL learners on the $device, 20 steps: exit $?;" \
         "$(grep -o "DDL: dimension.*\|NCCL needs one GPU.*" "$OUT/ddl_pair_$device.log" | head -2 |
            tr '\n' ' ')" | tee -a "$OUT/ddl.txt"
    weights+=("/tmp/ddl_pair_${device}_iter_20.caffemodel")
  done
  # The Python with protobuf: PyTorch's, as the time step's.
  local python=python3
  [ -x /opt/torch/.venv/bin/python3 ] && python=/opt/torch/.venv/bin/python3
  "$python" tools/extra/compare_caffemodels.py "${weights[@]}" --tolerance 1e-3 \
      --proto-dir bundle/proto 2>&1 | sed 's/^/GPU pair vs CPU pair: /' | tee -a "$OUT/ddl.txt"
  mpirun --oversubscribe -n 1 allreduce_perf -g 1 -b 256M -e 256M -n 20 -w 5 -m n:1 2>&1 |
    grep -v "^I[0-9]" | tee -a "$OUT/ddl.txt"
  # Two learners: on one GPU they share it (mode b reduces through host memory, and
  # ncclAllReduce is left out); on several, NCCL's own beside modes n and b.
  if [ "$gpus" -lt 2 ]; then
    mpirun --oversubscribe -n 2 allreduce_perf -g 1 -b 256M -e 256M -n 5 -w 1 -m b:2 2>&1 |
      grep -v "^I[0-9]" | tee -a "$OUT/ddl.txt"
  else
    mpirun --oversubscribe -n "$gpus" allreduce_perf -g 1 -b 4M -e 256M -f 4 -m "n:$gpus,b:$gpus" \
        2>&1 | grep -v "^I[0-9]" | tee -a "$OUT/ddl.txt"
  fi
}

run_time() {
  # Issue 5, must-show 3: caffe time forward-backward at the batches the issue names, with our
  # default engines (cuDNN), with cuDNN's heuristic algorithms (the default), with
  # CAFFE_CUDNN_ALGO=time, and timed with a 1 GiB workspace limit instead of 64 MiB (whether the
  # default limit keeps the fastest algorithms out), beside PyTorch doing the same graph at the same batch in fp32
  # (benchmarks/torch_from_prototxt.py --device cuda: TF32 off, cuDNN's autotuner on), whose
  # top shapes are checked against Caffe's log. Nets: bundle/nets/<name>.prototxt if there
  # (ResNet-50 made by gpu_prepare.sh), else /work/shared/benchmarks/nets/.
  local nets=(bvlc_reference_caffenet_trainval_b10:256 bvlc_alexnet_trainval_b10:256
              bvlc_googlenet_trainval_b10:128 resnet50_trainval_b64:64)
  local python=python3
  [ -x /opt/torch/.venv/bin/python3 ] && python=/opt/torch/.venv/bin/python3
  for entry in "${nets[@]}"; do
    local name="${entry%%:*}" batch="${entry##*:}" model="/tmp/${entry%%:*}_${entry##*:}.prototxt"
    batch_model "$name" "$batch" "$model" 2>&1 | tee -a "$OUT/time.txt"
    [ -f "$model" ] || continue
    caffe time -model "$model" -gpu 0 -iterations 20 > "$OUT/time_$name.log" 2>&1
    CAFFE_CUDNN_ALGO=time caffe time -model "$model" -gpu 0 -iterations 20 \
        > "$OUT/time_${name}_timed.log" 2>&1
    CAFFE_CUDNN_ALGO=time CAFFE_CUDNN_WORKSPACE_MB=1024 caffe time -model "$model" -gpu 0 \
        -iterations 20 > "$OUT/time_${name}_timed_1g.log" 2>&1
    local ours timed timed_1g torch
    ours=$(average_ms "$OUT/time_$name.log")
    timed=$(average_ms "$OUT/time_${name}_timed.log")
    timed_1g=$(average_ms "$OUT/time_${name}_timed_1g.log")
    "$python" benchmarks/torch_from_prototxt.py time --proto-dir bundle/proto --model "$model" \
        --phase TRAIN --iterations 20 --device cuda --caffe-log "$OUT/time_$name.log" \
        > "$OUT/torch_$name.txt" 2>&1
    torch=$(grep "^train_ms " "$OUT/torch_$name.txt" | cut -d' ' -f2)
    echo "$name at batch $batch: caffe ${ours:-failed} ms (cuDNN's heuristics)," \
         "${timed:-failed} ms (algorithms timed), ${timed_1g:-failed} ms (timed, 1 GiB" \
         "workspace), PyTorch ${torch:-failed} ms" \
         "($(grep "^torch_version\|^shapes_checked" "$OUT/torch_$name.txt" | paste -sd' ' -)); PyTorch's" \
         "time / ours: $(ratio "$torch" "$ours") (heuristics), $(ratio "$torch" "$timed") (timed)," \
         "$(ratio "$torch" "$timed_1g") (timed, 1 GiB)" | tee -a "$OUT/time.txt"
    echo "  slowest layers (timed run, GPU time):" \
         "$(slowest_layers "$OUT/time_${name}_timed.log" 6)" | tee -a "$OUT/time.txt"
    # Whether running layers as one (the default: BatchNorm with its Scale and ReLU, a sum with
    # its ReLU, a convolution with its ReLU) pays: the timed run again with every layer apart.
    if grep -q 'type: *"\(BatchNorm\|Eltwise\|ReLU\)"' "$model"; then
      CAFFE_FUSION=0 CAFFE_CUDNN_ALGO=time caffe time -model "$model" -gpu 0 -iterations 20 \
          > "$OUT/time_${name}_timed_apart.log" 2>&1
      local apart
      apart=$(average_ms "$OUT/time_${name}_timed_apart.log")
      echo "  layers apart (CAFFE_FUSION=0, timed): ${apart:-failed} ms;" \
           "apart / as one: $(ratio "$apart" "$timed")" | tee -a "$OUT/time.txt"
    fi
    # Where the time goes, as a picture where this Python has matplotlib: the timed run, with
    # the layers-apart run beside it.
    local logs=("$OUT/time_${name}_timed.log")
    [ -f "$OUT/time_${name}_timed_apart.log" ] && logs+=("$OUT/time_${name}_timed_apart.log")
    "$python" tools/extra/plot_caffe_time.py "${logs[@]}" -o "$OUT/time_$name.png" \
        --title "$name, batch $batch, GPU" > /dev/null 2>&1 || true
  done
}

run_lms() {
  # Issue 6, must-show 2 (the seed case of ANCHORS.md): BVLC GoogLeNet's deploy net with a
  # 10x3x1200x1200 input, about 15.9 GB of blobs. Under a 16 GB budget it must fail with the clear
  # out-of-memory error without LMS and complete with -lms 8192 and with a large threshold; the run
  # without a budget is the reference. Each run's exit code, averages and [LMS] lines go to lms.txt.
  local model=/tmp/googlenet_1200.prototxt
  sed 's/dim: 224 dim: 224/dim: 1200 dim: 1200/' models/bvlc_googlenet/deploy.prototxt > "$model"
  grep -q "dim: 1200 dim: 1200" "$model" ||
    { echo "gpu_verify: no 224x224 input in the GoogLeNet deploy net" >&2; return 1; }
  local runs=("none:" "budget:-gpu_mem_limit 16G" "lms8192:-gpu_mem_limit 16G -lms 8192"
              "lms_large:-gpu_mem_limit 16G -lms 160000000")
  for entry in "${runs[@]}"; do
    local name="${entry%%:*}" flags="${entry#*:}"
    # shellcheck disable=SC2086
    caffe time -model "$model" -gpu 0 -iterations 3 $flags > "$OUT/lms_$name.log" 2>&1
    local code=$?
    {
      echo "== $name ($flags): exit code $code"
      grep -E "Average (Forward|Backward) pass|Average Forward-Backward|\[LMS\]|out of GPU memory" \
          "$OUT/lms_$name.log" | sed 's/^[IWE][0-9]* [0-9:.]* *[0-9]* [a-z_.]*:[0-9]*\] //' | head -20
    } | tee -a "$OUT/lms.txt"
  done
  # The outputs with LMS must equal the unbudgeted run's. One set of weights for all runs (HDF5:
  # the classifier alone is 4 GB at this size, past protobuf's 2 GB), then `caffe test` prints
  # every output value of each run.
  cat > /tmp/googlenet_1200_solver.prototxt <<EOF
net: "$model"
base_lr: 0
lr_policy: "fixed"
max_iter: 0
random_seed: 1
snapshot_format: HDF5
snapshot_prefix: "/tmp/googlenet_1200"
EOF
  caffe train -solver /tmp/googlenet_1200_solver.prototxt -gpu 0 > "$OUT/lms_weights.log" 2>&1 ||
    { echo "gpu_verify: could not make the weights (lms_weights.log)" | tee -a "$OUT/lms.txt"; return 1; }
  rm -f /tmp/googlenet_1200_iter_0.solverstate.h5
  local weights=/tmp/googlenet_1200_iter_0.caffemodel.h5
  for entry in "${runs[@]}"; do
    local name="${entry%%:*}" flags="${entry#*:}"
    [ "$name" = budget ] && continue  # fails by design
    # shellcheck disable=SC2086
    caffe test -model "$model" -weights "$weights" -gpu 0 -iterations 1 $flags 2>&1 |
      grep -o "Batch 0, prob = .*" > "$OUT/lms_outputs_$name.txt"
    local verdict="differ"
    [ -s "$OUT/lms_outputs_$name.txt" ] && cmp -s "$OUT/lms_outputs_none.txt" \
        "$OUT/lms_outputs_$name.txt" && verdict="equal"
    echo "outputs of $name ($flags): $(wc -l < "$OUT/lms_outputs_$name.txt") values, $verdict to" \
         "the unbudgeted run's" | tee -a "$OUT/lms.txt"
  done
}

run_timeline() {
  # Issue 41, must-show 4: the seed's GoogLeNet 10x3x1200x1200 with -lms 8192 under a 16G budget,
  # recorded by -timeline: summarize_timeline.py's table (GPU busy, LMS stalls, H2D and D2H bytes
  # and GB/s) beside the run's [LMS] line; then, where Nsight Systems is installed, the same run
  # under nsys with its NVTX summary (the layers' names).
  local model=/tmp/googlenet_1200.prototxt
  sed 's/dim: 224 dim: 224/dim: 1200 dim: 1200/' models/bvlc_googlenet/deploy.prototxt > "$model"
  local flags=(-gpu 0 -iterations 3 -gpu_mem_limit 16G -lms 8192)
  caffe time -model "$model" "${flags[@]}" -timeline "$OUT/googlenet_lms_trace.json" \
      > "$OUT/timeline_googlenet.log" 2>&1
  echo "== GoogLeNet 10x3x1200x1200 ${flags[*]} -timeline: exit $?" | tee -a "$OUT/timeline.txt"
  grep -E "Average Forward-Backward|\[LMS\]" "$OUT/timeline_googlenet.log" |
    sed 's/^[IWE][0-9]* [0-9:.]* *[0-9]* [a-z_.]*:[0-9]*\] //' | tee -a "$OUT/timeline.txt"
  python3 tools/extra/summarize_timeline.py "$OUT/googlenet_lms_trace.json" 2>&1 |
    tee -a "$OUT/timeline.txt"
  if command -v nsys > /dev/null; then
    nsys profile -t cuda,nvtx -o /tmp/googlenet_lms -f true caffe time -model "$model" \
        "${flags[@]}" > "$OUT/timeline_nsys.log" 2>&1
    echo "== nsys profile: exit $?" | tee -a "$OUT/timeline.txt"
    nsys stats --report nvtx_sum /tmp/googlenet_lms.nsys-rep 2>&1 | head -30 |
      tee -a "$OUT/timeline.txt"
  else
    echo "nsys: not installed on this machine (NVTX ranges not checked)" | tee -a "$OUT/timeline.txt"
  fi
}

# What the CUDA emulator cannot see (docs/CUDA_EMU.md): device accesses out of bounds or
# misaligned, races on shared memory inside a block, barriers that not every thread reaches.
# NVIDIA's compute-sanitizer (that machine's CUDA has it) runs the tests of the kernels under each
# tool ($SANITIZE_TOOLS, $SANITIZE_PROGRAMS), half_the_cores() at once, each cut off after
# $SANITIZE_TIMEOUT seconds, so that the step fits a 10-minute call. One line per run in
# sanitize.txt. KINDS.md saw it refuse the device under gVisor: the summary then says so, after
# one short probe.
SANITIZE_PROGRAMS_DEFAULT="test_gpu_math_functions test_fused_layers test_gpu_blob test_im2col"
# The programs to sanitize, one "program" or "program:gtest filter" a line: the kernels' own
# programs whole, and of each layer's test program that has one, only its GPU-against-CPU suite
# (<Type>LayerGpuTest; the program's other cases are the CPU's and gradient checks).
sanitize_programs() {
  local program
  printf '%s\n' $SANITIZE_PROGRAMS_DEFAULT
  for program in "$BUNDLE_DIR"/bin/test_*_layer; do
    [ -x "$program" ] || continue
    "$program" --gtest_list_tests --gtest_filter='*LayerGpuTest*' 2> /dev/null |
      grep -q "LayerGpuTest" && echo "$(basename "$program"):*LayerGpuTest*"
  done
}
run_sanitize() {
  local sanitizer tool program programs lines jobs limit="${SANITIZE_TIMEOUT:-240}"
  jobs=$(half_the_cores)
  sanitizer=$(command -v compute-sanitizer ||
              ls /usr/local/cuda*/bin/compute-sanitizer 2> /dev/null | head -1)
  if [ -z "$sanitizer" ]; then
    echo "sanitize: no compute-sanitizer on this machine" | tee -a "$OUT/sanitize.txt"
    return 0
  fi
  if ! "$sanitizer" --tool memcheck "$BUNDLE_DIR/bin/caffe" device_query -gpu 0 \
      > "$OUT/sanitize_probe.log" 2>&1; then
    echo "sanitize: compute-sanitizer cannot run here:" \
         "$(grep -m1 -i 'error\|not supported' "$OUT/sanitize_probe.log")" |
      tee -a "$OUT/sanitize.txt"
    return 0
  fi
  lines=$(mktemp -d)
  # read, not word splitting: a filter's '*' must not match files here.
  read -ra programs <<< "${SANITIZE_PROGRAMS:-$(sanitize_programs | tr '\n' ' ')}"
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    for program in "${programs[@]}"; do
      while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
      sanitize_one "$sanitizer" "$tool" "$program" "$limit" > "$lines/$tool.${program%%:*}" &
    done
  done
  wait
  cat "$lines"/* | tee -a "$OUT/sanitize.txt"
  rm -rf "$lines"
}

# One program under one tool: "<tool> <program>: clean|ERRORS|..." with the tool's summary line;
# its output in sanitize_<tool>_<program>.log.
sanitize_one() {  # sanitize_one <sanitizer> <tool> <program[:gtest filter]> <seconds>
  local program="${3%%:*}" filter=() status result summary log
  [ "$program" = "$3" ] || filter=(--gtest_filter="${3#*:}")
  log="$OUT/sanitize_$2_$program.log"
  timeout "$4" "$1" --tool "$2" --print-limit 20 --error-exitcode 86 "$BUNDLE_DIR/bin/$program" \
      --gtest_brief=1 "${filter[@]}" > "$log" 2>&1
  status=$?
  case $status in
    0) result="clean" ;;
    86) result="ERRORS" ;;
    124) result="cut off after $4 s" ;;
    *) result="exit $status (a test failed, or the program did not start)" ;;
  esac
  summary=$(grep -o "[A-Z]* SUMMARY: .*" "$log" | tail -1)
  echo "$2 $program: $result${summary:+ ($summary)}"
}

# Whether one `caffe time` forward-backward of model $1 (flags after it) completes. 0: it did;
# 1: it ran out of memory (GPU budget, LMS, or the host); anything else stops the search that
# asked, with the log's last lines. The log is $OUT/probe_last.log.
probe() {
  local model="$1"; shift
  caffe time -model "$model" -gpu 0 -iterations 1 "$@" > "$OUT/probe_last.log" 2>&1
  local code=$?
  [ $code -eq 0 ] && return 0
  if [ $code -eq 137 ] || grep -q "out of GPU memory\|out of device memory\|out of memory" \
      "$OUT/probe_last.log"; then
    return 1
  fi
  echo "gpu_verify: caffe time failed (exit $code), not for memory:" >&2
  tail -5 "$OUT/probe_last.log" >&2
  return 2
}

# Probes `$make VALUE` (which writes /tmp/probe.prototxt) with the flags after; one line in
# $report; the status of probe.
probe_value() {
  local make="$1" value="$2" report="$3"; shift 3
  "$make" "$value"
  probe /tmp/probe.prototxt "$@"
  local result=$?
  echo "  $value ($*): $([ $result -eq 0 ] && echo fits || echo "does not fit ($result)")" >> "$report"
  return $result
}

# The largest multiple of $step in [$start, $cap] for which probe_value succeeds: doubling up to
# $cap, then halving the gap. Prints it (0: not even $start); fails on a non-memory error.
largest() {
  local make="$1" start="$2" step="$3" cap="$4" report="$5"; shift 5
  local good=0 bad=0 value="$start" result
  while [ "$bad" -eq 0 ]; do
    probe_value "$make" "$value" "$report" "$@"; result=$?
    [ $result -eq 2 ] && return 1
    if [ $result -eq 0 ]; then good=$value; else bad=$value; fi
    [ "$value" -ge "$cap" ] && break
    value=$((2 * value > cap ? cap : 2 * value))
  done
  [ "$bad" -eq 0 ] && { echo "$good"; return 0; }
  while [ $((bad - good)) -gt "$step" ]; do
    value=$(( (good + bad) / 2 / step * step ))
    [ "$value" -le "$good" ] && value=$((good + step))
    probe_value "$make" "$value" "$report" "$@"; result=$?
    [ $result -eq 2 ] && return 1
    if [ $result -eq 0 ]; then good=$value; else bad=$value; fi
  done
  echo "$good"
}

# $1 / $2 to three decimals (nothing when $2 is empty or 0: a run that failed).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b }'; }

# Average Forward-Backward ms of a `caffe time` log.
average_ms() { grep "Average Forward-Backward" "$1" | tail -1 | sed 's/.*Backward: *\([0-9.]*\) ms.*/\1/'; }

# The $2 layers of a `caffe time` log $1 with the most forward + backward time, slowest first, as
# "name fwd+bwd ms (share of the whole)": what limits a net's speed.
slowest_layers() {
  # A layer line ends "<name>\tforward: <ms> ms." (or backward).
  awk '/\t(forward|backward): / { t[$(NF-3)] += $(NF-1) } END { for (k in t) print t[k], k }' \
      "$1" | sort -rn | head -"$2" |
    awk -v whole="$(average_ms "$1")" '{
      share = whole > 0 ? 100 * $1 / whole : 0
      printf "%s%s %.2f ms (%.0f%%)", (NR > 1 ? ", " : ""), $2, $1, share
    } END { print "" }'
}

# caffe time of $1 with the flags after it, 10 iterations, log $OUT/$2.log; prints the average.
time_ms() {
  local model="$1" name="$2"; shift 2
  caffe time -model "$model" -gpu 0 -iterations 10 "$@" > "$OUT/$name.log" 2>&1
  average_ms "$OUT/$name.log"
}

# Prints net $1 with every Input shape's first dim (data and label alike) set to $2.
set_batch() {
  awk -v batch="$2" '/shape/ { first = 1 }
    first && /dim:/ { sub(/dim: *[0-9]+/, "dim: " batch); first = 0 } { print }' "$1"
}

# A training net of bundle/nets or ../shared/benchmarks/nets with its Input batch set.
batch_model() {
  local name="$1" batch="$2" out="$3" model="bundle/nets/$1.prototxt"
  [ -f "$model" ] || model="/work/shared/benchmarks/nets/$name.prototxt"
  [ -f "$model" ] || { echo "gpu_verify: no $name.prototxt" >&2; return 1; }
  set_batch "$model" "$batch" > "$out"
}

run_lmsfrac() {
  # Issue 6, must-show 3 (first half): with -lms_frac 0.9 a net that fits trains as fast as
  # without LMS (within 3 %). Each net at issue 5's batch, LMS off and -lms 8192 -lms_frac 0.9.
  local nets=(bvlc_alexnet_trainval_b10:256 bvlc_googlenet_trainval_b10:128
              resnet50_trainval_b64:64)
  for entry in "${nets[@]}"; do
    local name="${entry%%:*}" batch="${entry##*:}" model="/tmp/frac_${entry%%:*}.prototxt"
    batch_model "$name" "$batch" "$model" || continue
    local off on
    off=$(time_ms "$model" "lmsfrac_${name}_off")
    on=$(time_ms "$model" "lmsfrac_${name}_frac" -lms 8192 -lms_frac 0.9)
    echo "$name batch $batch: LMS off $off ms, -lms 8192 -lms_frac 0.9 $on ms" \
         "(ratio $(ratio "$on" "$off"))" |
      tee -a "$OUT/lmsfrac.txt"
  done
}

resnet_batch() { batch_model resnet50_trainval_b64 "$1" /tmp/probe.prototxt; }

# Times model $1 (too big for a 16 GB budget) without a budget and under 16G with each LMS
# setting; logs $OUT/$2_*.log; prints one line per setting with its speed over the unbudgeted
# run's, then the [LMS] traffic lines.
time_lms_settings() {
  local model="$1" name="$2" free
  free=$(time_ms "$model" "${name}_nobudget")
  echo "  no budget: $free ms"
  local settings=("lms8192:-lms 8192" "lms8192_frac09:-lms 8192 -lms_frac 0.9"
                  "lms_large:-lms 1000000")
  for entry in "${settings[@]}"; do
    local label="${entry%%:*}" flags="${entry#*:}" ms
    # shellcheck disable=SC2086
    ms=$(time_ms "$model" "${name}_$label" -gpu_mem_limit 16G $flags)
    echo "  16G, $flags: ${ms:-failed} ms (speed ratio $(ratio "$free" "$ms"))"
  done
  for entry in "${settings[@]}"; do
    grep -h "\[LMS\] swapped" "$OUT/${name}_${entry%%:*}.log"
  done
}

run_lmsfit() {
  # Issue 6, must-show 3 (second half): ResNet-50 at twice the batch that fits a 16 GB budget
  # trains with LMS at >= 70 % of its speed without a budget.
  local report="$OUT/lmsfit.txt" fit batch
  echo "ResNet-50 batches under -gpu_mem_limit 16G without LMS:" >> "$report"
  fit=$(largest resnet_batch 32 8 1024 "$report" -gpu_mem_limit 16G) || return 1
  batch=$((2 * fit))
  resnet_batch "$batch"
  cp /tmp/probe.prototxt /tmp/resnet_fit2x.prototxt
  {
    echo "largest batch without LMS under 16G: $fit; timed at batch $batch:"
    time_lms_settings /tmp/resnet_fit2x.prototxt lmsfit
  } | tee -a "$report"
}

run_unetfit() {
  # Issue 6, must-show 3 (second half), with the 3-D U-Net: at about twice the voxels that fit a
  # 16 GB budget (the side times 2^(1/3), to the nearest multiple of 8), LMS against no budget. Its
  # 3x3x3 convolutions do far more arithmetic per byte swapped than ResNet-50's.
  local report="$OUT/unetfit.txt" fit side
  unet_fit "$report" || return 1
  fit=$UNET_FIT
  side=$(awk -v s="$fit" 'BEGIN { printf "%d", int(s * 2 ^ (1 / 3) / 8 + 0.5) * 8 }')
  unet_side "$side"
  cp /tmp/probe.prototxt /tmp/unet_fit2x.prototxt
  {
    echo "largest side without LMS under 16G: $fit; timed at side $side" \
         "($(voxel_ratio "$side" "$fit")x the voxels):"
    time_lms_settings /tmp/unet_fit2x.prototxt unetfit
  } | tee -a "$report"
}

unet_side() {
  sed "s/dim: 64$/dim: $1/" models/unet3d/deploy.prototxt > /tmp/probe.prototxt
}

# (side $1 / side $2)^3 to two decimals (nothing when $2 is 0).
voxel_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", (a / b) ^ 3 }'; }

# Sets UNET_FIT to the largest U-Net side under 16G without LMS, its probes reported in $1;
# searched once per call (unetfit and unet both need it; probes cost device time).
UNET_FIT=""
unet_fit() {
  if [ -n "$UNET_FIT" ]; then
    echo "3-D U-Net under -gpu_mem_limit 16G without LMS: side $UNET_FIT at most" \
         "(the step before searched)" >> "$1"
    return 0
  fi
  echo "3-D U-Net sides under -gpu_mem_limit 16G without LMS:" >> "$1"
  UNET_FIT=$(largest unet_side 64 8 512 "$1" -gpu_mem_limit 16G)
}

run_unet() {
  # Issue 6, must-show 4: the largest cubic side (multiple of 8, batch 1) of the 3-D U-Net whose
  # forward-backward runs under a 16 GB budget, without and with LMS; the voxel ratio.
  local report="$OUT/unet.txt" plain lms
  unet_fit "$report" || return 1
  plain=$UNET_FIT
  # With LMS the host holds every buffer (about 18 KB a voxel: 256^3 is some 300 GB), so the
  # search stops at 256.
  echo "3-D U-Net sides under -gpu_mem_limit 16G with -lms 8192:" >> "$report"
  lms=$(largest unet_side "$plain" 8 256 "$report" -gpu_mem_limit 16G -lms 8192) || return 1
  echo "largest side without LMS: $plain; with -lms 8192: $lms; voxel ratio" \
       "$(voxel_ratio "$lms" "$plain")" |
    tee -a "$report"
}

# The device tool brings back 8 files of $OUT at most: after each step its logs go into one
# archive, logs_<step>.tar.gz, beside the steps' summaries (<step>.txt), nvidia-smi.txt and
# device_query.txt.
SUMMARIES=(tests.txt lenet.txt time.txt ddl.txt lms.txt lmsfrac.txt lmsfit.txt unetfit.txt unet.txt
           timeline.txt sanitize.txt nvidia-smi.txt device_query.txt)
pack_logs() {  # pack_logs <step>
  local files=() file name
  for file in "$OUT"/*; do
    name="$(basename "$file")"
    [ -f "$file" ] || continue
    [[ " ${SUMMARIES[*]} " == *" $name "* || "$name" == *.tar.gz ]] && continue
    files+=("$name")
  done
  [ ${#files[@]} -gt 0 ] || return 0
  tar -C "$OUT" -czf "$OUT/logs_$1.tar.gz" "${files[@]}" && (cd "$OUT" && rm -f "${files[@]}")
}

# scripts/test_gpu_verify.sh sources the functions above and runs them against a stand-in caffe.
[ "${GPU_VERIFY_SOURCE_ONLY:-0}" = 1 ] && return 0
setup
step="${1:-tests}"
if [ "$step" = tests ]; then
  shift
  run_tests "$@"
  exit
fi
for step in "$@"; do
  case "$step" in
    lenet) run_lenet ;;
    time) run_time ;;
    ddl) run_ddl ;;
    lms) run_lms ;;
    lmsfrac) run_lmsfrac ;;
    lmsfit) run_lmsfit ;;
    unet) run_unet ;;
    unetfit) run_unetfit ;;
    timeline) run_timeline ;;
    sanitize) run_sanitize ;;
    *) echo "gpu_verify: unknown step '$step' (tests [programs], or lenet, time, ddl, lms," \
            "lmsfrac, lmsfit, unetfit, unet, timeline, sanitize)" >&2; exit 2 ;;
  esac
  pack_logs "$step"
done
