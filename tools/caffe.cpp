// caffe: the command-line brew. train, test, time, compare and device_query, with BVLC Caffe's
// flags, defaults and log lines, so existing scripts and log parsers keep working. This file holds
// the flags (defined here, so that `caffe -help` lists them under caffe.cpp and `-helpon=caffe`
// finds them, as with BVLC's tool) and main, which runs the command named; each command is a file
// of tools/caffe_tool/, which registers it.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <iostream>
#include <string>

#include "caffe/common.hpp"
#include "caffe/net/layer_precision.hpp"
#include "caffe_tool/command_registry.hpp"

using std::string;

DEFINE_string(gpu, "",
              "Optional; run in GPU mode on given device IDs separated by ','. Use '-gpu all' to "
              "run on all available GPUs. The effective training batch size is multiplied by the "
              "number of devices.");
DEFINE_string(solver, "", "The solver definition protocol buffer text file.");
DEFINE_string(model, "", "The model definition protocol buffer text file.");
DEFINE_string(phase, "", "Optional; network phase (TRAIN or TEST). Only used for 'time'.");
DEFINE_int32(level, 0, "Optional; network level.");
DEFINE_string(stage, "",
              "Optional; network stages (not to be confused with phase), separated by ','.");
DEFINE_string(snapshot, "",
              "Optional; the snapshot solver state to resume training, or 'latest': the newest "
              "complete snapshot of the solver's snapshot_prefix (none yet: start from the "
              "beginning, as a restarted job wants).");
DEFINE_string(weights, "",
              "Optional; the pretrained weights to initialize finetuning, separated by ','. "
              "Cannot be set simultaneously with snapshot.");
DEFINE_int32(iterations, 50, "The number of iterations to run.");
DEFINE_string(sigint_effect, "stop",
              "Optional; action to take when a SIGINT signal is received: snapshot, stop or "
              "none.");
DEFINE_string(reference, "",
              "For 'compare': an HDF5 file of reference results (input/, forward/, backward/, "
              "param_diff/ groups, as the golden fixtures).");
DEFINE_double(
    tolerance, 1e-4,
    "For 'compare': the largest allowed max|ours - reference| / max|reference| per blob.");
DEFINE_string(sighup_effect, "snapshot",
              "Optional; action to take when a SIGHUP signal is received: snapshot, stop or "
              "none.");
DEFINE_string(sigterm_effect, "stop",
              "Optional; action to take when a SIGTERM signal is received (a scheduler ending or "
              "preempting the job, mpirun after Ctrl-C): snapshot, stop (with the final "
              "snapshot) or none. BVLC's caffe died at once.");
DEFINE_string(lr_scaling, "keep",
              "Optional; resuming a snapshot taken by another number of learners (-gpu list, "
              "-ddl): keep the solver's base_lr, or 'linear': scale it with the learners.");
DEFINE_string(ddl, "",
              "Optional; distributed training (DDL): run under mpirun, one learner per process, "
              "with DDL's options in one string, e.g. -ddl \"-mode b:4x2x1 -dump_iter 100\" "
              "(-mode a:XxYxZ, -dump_iter N, -dev_sync 0|1|2, -rebind_iter N, -dbg_level 0|1|2, "
              "-timeout S, -bucket_kb N, -compress fp16|bf16; see docs/DDL.md).");
DEFINE_bool(bvlc, false,
            "Optional, with -ddl: no gradient buckets; reduce all gradients after backward "
            "(IBM Caffe's \"disable layer-wise reduction\").");
DEFINE_int64(lms, -1,
             "Optional, GPU runs; Large Model Support (docs/LMS.md): buffers of at least this many "
             "KB live in host memory and are copied to the GPU only for the layers that use "
             "them. -1 (default): off; 0: every buffer.");
DEFINE_double(lms_frac, 0.0,
              "Optional, with -lms: LMS stays dormant until more than this fraction (0 to 1) of "
              "the GPU memory budget is in use; e.g. 0.9 costs nothing for nets that fit.");
DEFINE_int32(lms_prefetch, 1, "Optional, with -lms: how many layers ahead buffers are copied in.");
DEFINE_string(gpu_mem_limit, "",
              "Optional, GPU runs; the most GPU memory Caffe may use, in bytes or with K, M, G, "
              "T (powers of 1024), e.g. 16G. Default: $CAFFE_GPU_MEM_LIMIT, else the whole GPU.");
DEFINE_string(precision, "",
              "Optional; the arithmetic of every net's layers where its prototxt names none for "
              "them: fp32, bf16 or fp16 (default: the prototxt's default_forward_type and "
              "default_backward_type, else fp32). See docs/PRECISION.md.");

DEFINE_string(timeline, "",
              "Optional, for 'train' and 'time': record where each thread's time goes into this "
              "Chrome trace file (docs/TIMELINE.md; open it in Perfetto or chrome://tracing). "
              "Under mpirun each learner writes FILE with .rankN before the extension.");
DEFINE_string(timeline_iters, "",
              "Optional, with -timeline: the iterations to record, FIRST:END (END not "
              "included); default 0:100.");

int main(int argc, char** argv) {
  FLAGS_alsologtostderr = 1;
  gflags::SetVersionString("1.0.0");
  gflags::SetUsageMessage(caffe_tool::UsageMessage());
  caffe::GlobalInit(&argc, &argv);
  if (argc != 2) {
    std::cerr << (argc < 2 ? "caffe: no command given" : "caffe: too many arguments") << "\n"
              << caffe_tool::UsageMessage() << "run 'caffe -help' for the flags\n";
    return 1;
  }
  const string name = argv[1];
  auto command = caffe_tool::Commands().find(name);
  if (command == caffe_tool::Commands().end()) {
    std::cerr << "caffe: unknown command '" << name << "'\n" << caffe_tool::UsageMessage();
    return 1;
  }
  try {
    caffe::SetPrecisionFlag(FLAGS_precision);
    return command->second.first();
  } catch (const caffe::Error& error) {
    // One write, so the lines of learners under mpirun do not interleave.
    std::cerr << ("caffe " + name + ": error: " + error.what() + "\n") << std::flush;
    return 1;
  }
}
