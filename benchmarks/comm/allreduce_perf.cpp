// allreduce_perf: times DDL's allreduce algorithms beside the MPI library's own MPI_Allreduce, in
// the style of NVIDIA's nccl-tests (same flags, same metrics). Run under mpirun:
//
//   mpirun -n 4 --oversubscribe build/bin/allreduce_perf -b 4K -e 256M -f 4 -n 20 -w 5 -c 1
//   mpirun -n 4 ... allreduce_perf -m b:2x2,p:2x2     # also the hierarchical modes of -ddl
//   mpirun -n 1 ... allreduce_perf -g 1 -b 256M -e 256M -m n   # GPU buffers, beside NCCL's own
//
// For each size: time (microseconds per allreduce, the slowest rank's), algbw = bytes / time and
// busbw = algbw * 2(P-1)/P (the data each link carries in a bandwidth-optimal allreduce, so
// numbers compare across P). With -c 1 the first result of each algorithm and size is checked
// against the exact sum (integer-valued data) and wrong elements are counted.
//
// Flags: -b first size, -e last size (bytes, K/M/G suffixes), -f factor between sizes, -n timed
// iterations, -w warm-up iterations, -c check (0/1), -d float|double, -a algorithms (any of
// MPI_Allreduce, ring, mpi, rcs; default all; none: only the modes), -m -ddl modes
// (comma-separated, e.g. b:2x2), -g 1: buffers in GPU memory (rank r on GPU local rank mod GPUs;
// GPU builds): the modes then reduce as GPU learners do, and the algorithm ncclAllReduce (the
// default with -g 1) is NCCL's own call, as nccl-tests' all_reduce_perf times it. -z fp16|bf16:
// ring, mpi, rcs and the modes send 16-bit values (-ddl's -compress); the check then allows the
// rounding's error (compression.hpp). To count the bytes each rank sends, run under Open MPI's
// monitoring:
//   mpirun --mca pml_monitoring_enable 1 --mca pml_monitoring_enable_output 1 ... -a ring -z fp16
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/memory/device_buffer.hpp"
#include "caffe/parallel/ddl_options.hpp"
#include "caffe/parallel/hierarchical_communicator.hpp"
#include "caffe/parallel/mpi_communicator.hpp"
#ifdef USE_NCCL
#include "caffe/parallel/mpi_nccl.hpp"
#endif
#include "caffe/parallel/rcs_communicator.hpp"
#include "caffe/parallel/ring_communicator.hpp"

namespace {

struct Settings {
  size_t begin_bytes = 4 << 10, end_bytes = 256 << 20;
  double factor = 2;
  int iterations = 20, warmup = 5;
  bool check = true;
  std::string dtype = "float";
  std::vector<std::string> algorithms = {"MPI_Allreduce", "ring", "mpi", "rcs"};
  std::vector<std::string> modes;
  bool gpu = false;
  caffe::Compression compression = caffe::Compression::kNone;
};

size_t ParseBytes(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  switch (*end) {
    case 'K':
    case 'k':
      value *= 1 << 10;
      break;
    case 'M':
    case 'm':
      value *= 1 << 20;
      break;
    case 'G':
    case 'g':
      value *= 1 << 30;
      break;
    default:
      break;
  }
  return static_cast<size_t>(value);
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

bool ParseFlags(int argc, char** argv, Settings* settings, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      *error = "flag " + flag + " needs a value";
      return false;
    }
    const std::string value = argv[++i];
    if (flag == "-b")
      settings->begin_bytes = ParseBytes(value);
    else if (flag == "-e")
      settings->end_bytes = ParseBytes(value);
    else if (flag == "-f")
      settings->factor = std::atof(value.c_str());
    else if (flag == "-n")
      settings->iterations = std::atoi(value.c_str());
    else if (flag == "-w")
      settings->warmup = std::atoi(value.c_str());
    else if (flag == "-c")
      settings->check = std::atoi(value.c_str()) != 0;
    else if (flag == "-d")
      settings->dtype = value;
    else if (flag == "-a")
      settings->algorithms = value == "none" ? std::vector<std::string>() : Split(value);
    else if (flag == "-m")
      settings->modes = Split(value);
    else if (flag == "-g")
      settings->gpu = std::atoi(value.c_str()) != 0;
    else if (flag == "-z") {
      if (!caffe::ParseCompression(value, &settings->compression)) {
        *error = "-z " + value + ": expected fp16, bf16 or none";
        return false;
      }
    } else {
      *error = "unknown flag " + flag + "; known: -b -e -f -n -w -c -d -a -m -g -z";
      return false;
    }
  }
  if (settings->gpu) {
    const std::vector<std::string> host_default = Settings().algorithms;
    if (settings->algorithms == host_default) settings->algorithms = {"ncclAllReduce"};
    for (const std::string& name : settings->algorithms) {
      if (name != "ncclAllReduce") {
        *error = "-g 1 times GPU buffers: -a takes only ncclAllReduce there (the host algorithm " +
                 name + " does not apply; give -ddl modes with -m)";
        return false;
      }
    }
  }
  if (settings->factor <= 1 || settings->iterations < 1 || settings->begin_bytes == 0 ||
      settings->end_bytes < settings->begin_bytes ||
      (settings->dtype != "float" && settings->dtype != "double")) {
    *error = "need -f > 1, -n >= 1, 0 < -b <= -e, -d float or double";
    return false;
  }
  return true;
}

template <typename Dtype>
Dtype Value(int rank, size_t i) {
  return static_cast<Dtype>((rank + 1) * static_cast<long>(i % 97) - 40);
}

// Elements that differ from the exact sum by more than `unit_roundoff` allows: each of the at
// most 2P roundings of a compressed allreduce (a partial sum on each hop, the result once) errs
// by unit_roundoff of at most the sum of magnitudes. Without compression, any difference.
template <typename Dtype>
long CountWrong(const std::vector<Dtype>& buffer, int size, double unit_roundoff) {
  long wrong = 0;
  for (size_t i = 0; i < buffer.size(); ++i) {
    double expected = 0, magnitude = 0;
    for (int r = 0; r < size; ++r) {
      expected += Value<Dtype>(r, i);
      magnitude += std::abs(static_cast<double>(Value<Dtype>(r, i)));
    }
    if (std::abs(buffer[i] - expected) > 2 * size * unit_roundoff * magnitude) ++wrong;
  }
  return wrong;
}

// One algorithm under test: allreduce of `count` elements in place.
template <typename Dtype>
struct Candidate {
  std::string name;
  std::function<void(Dtype*, size_t)> allreduce;
};

// The buffer under test, in host memory or (with -g 1) on this rank's GPU.
template <typename Dtype>
class TestBuffer {
 public:
  TestBuffer(size_t count, bool gpu) : host_(count) {
    if (gpu) device_ = std::make_unique<caffe::DeviceBuffer<Dtype>>(count);
  }
  Dtype* data() { return device_ ? device_->data() : host_.data(); }
  void Fill(int rank) {
    for (size_t i = 0; i < host_.size(); ++i) host_[i] = Value<Dtype>(rank, i);
    if (device_) caffe::CopyHostToDevice(host_.data(), device_->data(), Bytes());
  }
  long CountWrong(int size, double unit_roundoff) {
    if (device_) caffe::CopyDeviceToHost(device_->data(), host_.data(), Bytes());
    return ::CountWrong(host_, size, unit_roundoff);
  }

 private:
  size_t Bytes() const { return host_.size() * sizeof(Dtype); }
  std::vector<Dtype> host_;
  std::unique_ptr<caffe::DeviceBuffer<Dtype>> device_;
};

// Rank r's GPU: its rank among the processes of its node, modulo the GPUs it sees.
void UseLocalGpu() {
  int local_rank = 0, local_size = 1;
  caffe::NodeLocalRank(&local_rank, &local_size);
#ifndef CPU_ONLY
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    throw std::runtime_error("-g 1: no GPU visible to this process");
  }
  caffe::Caffe::SetDevice(local_rank % count);
#else
  throw std::runtime_error("-g 1: this build has no GPU support (CPU_ONLY)");
#endif
}

template <typename Dtype>
int Run(const Settings& settings) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  using namespace caffe;
  if (settings.gpu) UseLocalGpu();
  std::shared_ptr<MpiGroup> world = MpiGroup::Duplicate(MPI_COMM_WORLD);
  RingCommunicator<Dtype> ring(world, settings.compression);
  MpiCommunicator<Dtype> mpi(world, settings.compression);
  RcsCommunicator<Dtype> rcs(world, settings.compression);
  std::vector<std::string> names = settings.algorithms;
  for (const std::string& mode : settings.modes) names.push_back(mode);
#ifdef USE_NCCL
  // NCCL's own allreduce: NcclCommunicator's Allreduce is one ncclAllReduce in place, waited
  // on. NCCL refuses two ranks on one GPU: then only the modes run (they reduce through the host).
  std::unique_ptr<NcclCommunicator<Dtype>> nccl_own;
  std::string shared;
  if (settings.gpu && NcclGroupHasDistinctGpus(*world, &shared)) {
    nccl_own = NcclCommunicatorOver<Dtype>(*world);
  } else if (settings.gpu) {
    names.erase(std::remove(names.begin(), names.end(), "ncclAllReduce"), names.end());
    if (rank == 0) std::printf("# ncclAllReduce left out: %s\n", shared.c_str());
  }
#endif
  if (rank == 0) {
    std::printf(
        "# allreduce_perf: %d processes, %s in %s memory, %d iterations after %d warm-up, check "
        "%s, compression %s\n",
        size, settings.dtype.c_str(), settings.gpu ? "GPU" : "host", settings.iterations,
        settings.warmup, settings.check ? "on" : "off", CompressionName(settings.compression));
    std::printf(
        "# time: us per allreduce (slowest rank); algbw, busbw: GB/s; busbw = algbw * "
        "2(P-1)/P\n");
    std::printf("#%13s %12s", "size(B)", "count");
    for (const std::string& name : names) {
      std::printf("  %26s",
                  (name + (name.find(':') != std::string::npos ? " (-mode)" : "")).c_str());
    }
    std::printf("\n#%13s %12s", "", "");
    for (size_t i = 0; i < names.size(); ++i)
      std::printf("  %9s %7s %7s %2s", "time", "algbw", "busbw", "#x");
    std::printf("\n");
  }
  for (double bytes = settings.begin_bytes; bytes <= settings.end_bytes * 1.0001;
       bytes *= settings.factor) {
    const size_t count = std::max<size_t>(1, static_cast<size_t>(bytes) / sizeof(Dtype));
    std::vector<Candidate<Dtype>> candidates;
    std::vector<std::unique_ptr<HierarchicalCommunicator<Dtype>>> hierarchical;
    for (const std::string& name : settings.algorithms) {
      if (name == "MPI_Allreduce") {
        candidates.push_back({name, [&](Dtype* data, size_t n) {
                                MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n),
                                                        MpiType<Dtype>(), MPI_SUM, world->comm()));
                              }});
      } else if (name == "ring") {
        candidates.push_back({name, [&](Dtype* data, size_t n) { ring.Allreduce(data, n); }});
      } else if (name == "mpi") {
        candidates.push_back({name, [&](Dtype* data, size_t n) { mpi.Allreduce(data, n); }});
      } else if (name == "rcs") {
        candidates.push_back({name, [&](Dtype* data, size_t n) { rcs.Allreduce(data, n); }});
#ifdef USE_NCCL
      } else if (name == "ncclAllReduce") {
        if (!nccl_own) continue;
        candidates.push_back({name, [&](Dtype* data, size_t n) { nccl_own->Allreduce(data, n); }});
#endif
      } else {
        if (rank == 0) {
          std::fprintf(stderr, "allreduce_perf: %s %s\n",
                       name == "ncclAllReduce" ? "this build has no NCCL for" : "unknown algorithm",
                       name.c_str());
        }
        return 1;
      }
    }
    for (const std::string& mode : settings.modes) {
      // The explorer inside times its candidates on this very size.
      DdlOptions options = ParseDdlOptions("-mode " + mode);
      options.compression = settings.compression;
      hierarchical.push_back(CreateDdlCommunicator<Dtype>(
          options, ResolveDdlTopology(options, size), settings.gpu, count));
      HierarchicalCommunicator<Dtype>* comm = hierarchical.back().get();
      candidates.push_back({mode, [comm](Dtype* data, size_t n) { comm->Allreduce(data, n); }});
    }
    TestBuffer<Dtype> buffer(count, settings.gpu);
    if (rank == 0) std::printf("%14zu %12zu", count * sizeof(Dtype), count);
    for (Candidate<Dtype>& candidate : candidates) {
      long wrong = 0;
      if (settings.check) {
        buffer.Fill(rank);
        candidate.allreduce(buffer.data(), count);
        // MPI_Allreduce (and NCCL's own) always sum exactly.
        const bool exact = candidate.name == "MPI_Allreduce" || candidate.name == "ncclAllReduce";
        wrong = buffer.CountWrong(size, exact ? 0 : CompressionUnitRoundoff(settings.compression));
        MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      }
      for (int i = 0; i < settings.warmup; ++i) candidate.allreduce(buffer.data(), count);
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < settings.iterations; ++i) candidate.allreduce(buffer.data(), count);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
          settings.iterations;
      MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      const double algbw = count * sizeof(Dtype) / seconds / 1e9;
      const double busbw = algbw * 2.0 * (size - 1) / size;
      if (rank == 0) {
        std::printf("  %9.1f %7.3f %7.3f %2ld", seconds * 1e6, algbw, busbw, wrong);
      }
    }
    if (rank == 0) {
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Settings settings;
  std::string error;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  if (!ParseFlags(argc, argv, &settings, &error)) {
    if (rank == 0) std::fprintf(stderr, "allreduce_perf: %s\n", error.c_str());
    status = 2;
  } else {
    try {
      status = settings.dtype == "float" ? Run<float>(settings) : Run<double>(settings);
    } catch (const std::exception& failure) {
      std::fprintf(stderr, "allreduce_perf: %s\n", failure.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return status;
}
