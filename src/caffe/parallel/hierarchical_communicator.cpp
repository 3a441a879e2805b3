#include "caffe/parallel/hierarchical_communicator.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "caffe/memory/device_buffer.hpp"
#include "caffe/parallel/explorer.hpp"
#include "caffe/parallel/mpi_communicator.hpp"
#include "caffe/parallel/rcs_communicator.hpp"
#include "caffe/parallel/ring_communicator.hpp"
#include "caffe/timeline/timeline.hpp"
#ifdef USE_NCCL
#include "caffe/parallel/mpi_nccl.hpp"
#endif

namespace caffe {

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One stage of an allreduce on the timeline: "<operation>, dim D", with its bytes and learners.
class StageSlice {
 public:
  StageSlice(const char* operation, int dim, size_t bytes, int learners)
      : slice_("communication", timeline::Recording()
                                    ? std::string(operation) + ", dim " + std::to_string(dim)
                                    : std::string()) {
    slice_.Arg("bytes", bytes).Arg("learners", learners);
  }

 private:
  timeline::Slice slice_;
};

const char* DimensionName(int dim) {
  static const char* const kNames[] = {"X (inside a host)", "Y (across hosts)",
                                       "Z (across groups)"};
  return kNames[dim];
}

enum class Algorithm { kRing, kMpi, kRcs, kNccl };

template <typename Dtype>
std::unique_ptr<TwoPhaseCommunicator<Dtype>> Make(Algorithm algorithm,
                                                  std::shared_ptr<MpiGroup> group,
                                                  Compression compression) {
  switch (algorithm) {
    case Algorithm::kRing:
      return std::make_unique<RingCommunicator<Dtype>>(group, compression);
    case Algorithm::kMpi:
      return std::make_unique<MpiCommunicator<Dtype>>(group, compression);
    case Algorithm::kRcs:
      return std::make_unique<RcsCommunicator<Dtype>>(group, compression);
    case Algorithm::kNccl:  // sums in the buffer's type: compression applies to the MPI stages
#ifdef USE_NCCL
      return NcclCommunicatorOver<Dtype>(*group);
#else
      break;
#endif
  }
  LOG(FATAL) << "NCCL requested in a build without NCCL";
  return nullptr;
}

// The candidates for one dimension under a mode; a single candidate is used as is.
std::vector<Algorithm> Candidates(DdlAlgorithm mode, int dim, bool nccl) {
  const std::vector<Algorithm> host_algorithms = {Algorithm::kRing, Algorithm::kRcs,
                                                  Algorithm::kMpi};
  switch (mode) {
    case DdlAlgorithm::kRing:
      return {Algorithm::kRing};
    case DdlAlgorithm::kMpi:
      return {Algorithm::kMpi};
    case DdlAlgorithm::kRcs:
      return {Algorithm::kRcs};
    case DdlAlgorithm::kNccl:
      return {nccl ? Algorithm::kNccl : Algorithm::kRing};
    case DdlAlgorithm::kEnhanced:
      if (dim == 0) return {nccl ? Algorithm::kNccl : Algorithm::kRing};
      if (nccl) return {Algorithm::kNccl, Algorithm::kRing, Algorithm::kRcs, Algorithm::kMpi};
      return host_algorithms;
    case DdlAlgorithm::kExplore:
      if (nccl) return {Algorithm::kNccl, Algorithm::kRing, Algorithm::kRcs, Algorithm::kMpi};
      return host_algorithms;
  }
  return host_algorithms;
}

// Whether NCCL can reduce over `group` (GPU learners): not when two members share a GPU (say,
// more learners on a node than GPUs), which NCCL refuses; that dimension falls back to the host
// algorithms, with one warning.
bool NcclUsable(const MpiGroup& group, int dim) {
#ifdef USE_NCCL
  std::string shared;
  if (NcclGroupHasDistinctGpus(group, &shared)) return true;
  LOG_IF(WARNING, group.rank() == 0)
      << "DDL: dimension " << dim << " (" << DimensionName(dim) << "): " << shared
      << "; NCCL needs one GPU per learner, so this dimension reduces through host memory";
#else
  (void)group, (void)dim;
#endif
  return false;
}

}  // namespace

bool DdlHasNccl() {
#ifdef USE_NCCL
  return true;
#else
  return false;
#endif
}

template <typename Dtype>
HierarchicalCommunicator<Dtype>::HierarchicalCommunicator(std::vector<Stage> stages, int world_rank,
                                                          int world_size, bool device_buffers)
    : stages_(std::move(stages)),
      world_rank_(world_rank),
      world_size_(world_size),
      device_buffers_(device_buffers),
      stage_seconds_(stages_.size(), 0.0) {
  for (const Stage& stage : stages_) {
    CHECK(device_buffers_ || !stage.comm->on_device())
        << "a device algorithm cannot reduce host buffers";
  }
}

template <typename Dtype>
std::string HierarchicalCommunicator<Dtype>::name() const {
  if (stages_.empty()) return "none";
  std::string name;
  for (const Stage& stage : stages_) name += (name.empty() ? "" : "|") + stage.comm->name();
  return name;
}

template <typename Dtype>
void HierarchicalCommunicator<Dtype>::ResetTimes() {
  std::fill(stage_seconds_.begin(), stage_seconds_.end(), 0.0);
}

template <typename Dtype>
Dtype* HierarchicalCommunicator<Dtype>::Place(Dtype* buffer, size_t offset, size_t count,
                                              bool on_device) {
  if (!device_buffers_) return buffer;
  if (host_.size() < offset + count) host_.resize(offset + count);
  if (on_device && data_on_host_) {
    CopyHostToDevice(host_.data() + offset, buffer + offset, count * sizeof(Dtype));
  } else if (!on_device && !data_on_host_) {
    CopyDeviceToHost(buffer + offset, host_.data() + offset, count * sizeof(Dtype));
  }
  data_on_host_ = !on_device;
  return on_device ? buffer : host_.data();
}

template <typename Dtype>
void HierarchicalCommunicator<Dtype>::Allreduce(Dtype* buffer, size_t count) {
  if (stages_.empty() || count == 0) return;
  data_on_host_ = false;
  TwoPhaseCommunicator<Dtype>* first = stages_[0].comm.get();
  auto start = std::chrono::steady_clock::now();
  if (stages_.size() == 1) {
    StageSlice slice("allreduce", stages_[0].dim, count * sizeof(Dtype), first->size());
    first->Allreduce(Place(buffer, 0, count, first->on_device()), count);
    stage_seconds_[0] += SecondsSince(start);
  } else {
    const Blocks blocks = Blocks::Even(count, first->size());
    {
      StageSlice slice("reduce-scatter", stages_[0].dim, count * sizeof(Dtype), first->size());
      first->ReduceScatter(Place(buffer, 0, count, first->on_device()), blocks);
    }
    stage_seconds_[0] += SecondsSince(start);
    const size_t shard_offset = blocks.offset[first->rank()];
    const size_t shard_count = blocks.count[first->rank()];
    for (size_t s = 1; s < stages_.size(); ++s) {
      start = std::chrono::steady_clock::now();
      TwoPhaseCommunicator<Dtype>* stage = stages_[s].comm.get();
      StageSlice slice("allreduce", stages_[s].dim, shard_count * sizeof(Dtype), stage->size());
      Dtype* base = Place(buffer, shard_offset, shard_count, stage->on_device());
      stage->Allreduce(base + shard_offset, shard_count);
      stage_seconds_[s] += SecondsSince(start);
    }
    start = std::chrono::steady_clock::now();
    StageSlice slice("allgather", stages_[0].dim, count * sizeof(Dtype), first->size());
    first->Allgather(Place(buffer, shard_offset, shard_count, first->on_device()), blocks);
    stage_seconds_[0] += SecondsSince(start);
  }
  if (device_buffers_ && data_on_host_) Place(buffer, 0, count, true);
}

template <typename Dtype>
std::unique_ptr<HierarchicalCommunicator<Dtype>> CreateDdlCommunicator(const DdlOptions& options,
                                                                       const DdlTopology& topology,
                                                                       bool gpu_learner,
                                                                       size_t sample_count) {
  int world_rank = 0, world_size = 1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  CAFFE_CHECK_EQ(topology.size(), world_size) << "the topology does not cover every learner";
  const bool nccl = gpu_learner && DdlHasNccl();
  std::vector<typename HierarchicalCommunicator<Dtype>::Stage> stages;
  size_t stage_count = sample_count;
  for (int dim = 0; dim < 3; ++dim) {
    if (topology.dims[dim] == 1) continue;
    // Every learner takes part in the split; the members of a group share its first rank.
    const std::vector<int> members = topology.group(world_rank, dim);
    std::shared_ptr<MpiGroup> group =
        MpiGroup::Split(MPI_COMM_WORLD, members[0], topology.coordinate(world_rank, dim));
    const std::vector<Algorithm> algorithms =
        Candidates(options.algorithm, dim, nccl && NcclUsable(*group, dim));
    std::vector<std::unique_ptr<TwoPhaseCommunicator<Dtype>>> candidates;
    for (Algorithm algorithm : algorithms) {
      candidates.push_back(Make<Dtype>(algorithm, group, options.compression));
    }
    typename HierarchicalCommunicator<Dtype>::Stage stage;
    stage.dim = dim;
    if (candidates.size() == 1) {
      stage.why = "set by the mode";
    } else {
      std::vector<TwoPhaseCommunicator<Dtype>*> pointers;
      for (const auto& candidate : candidates) pointers.push_back(candidate.get());
      const typename Explorer<Dtype>::Choice choice =
          Explorer<Dtype>::Pick(pointers, *group, stage_count);
      stage.why = "measured on " + std::to_string(stage_count) +
                  " elements: " + Explorer<Dtype>::Describe(pointers, choice);
      std::swap(candidates[0], candidates[choice.chosen]);
    }
    stage.comm = std::move(candidates[0]);
    std::string compression;
    if (options.compression != Compression::kNone) {
      compression = stage.comm->on_device()
                        ? std::string(", in fp32: -compress applies to ring, rcs and mpi stages")
                        : std::string(", gradients sent in ") +
                              CompressionName(options.compression) + " and summed in fp32";
    }
    LOG_IF(INFO, world_rank == 0) << "DDL: dimension " << dim << " " << DimensionName(dim) << ", "
                                  << topology.dims[dim] << " learners: " << stage.comm->name()
                                  << " (" << stage.why << ")" << compression;
    // Later stages reduce this learner's shard of the first stage.
    if (stages.empty()) stage_count = (sample_count + topology.dims[dim] - 1) / topology.dims[dim];
    stages.push_back(std::move(stage));
  }
  return std::make_unique<HierarchicalCommunicator<Dtype>>(std::move(stages), world_rank,
                                                           world_size, gpu_learner);
}

template class HierarchicalCommunicator<float>;
template class HierarchicalCommunicator<double>;
template std::unique_ptr<HierarchicalCommunicator<float>> CreateDdlCommunicator<float>(
    const DdlOptions&, const DdlTopology&, bool, size_t);
template std::unique_ptr<HierarchicalCommunicator<double>> CreateDdlCommunicator<double>(
    const DdlOptions&, const DdlTopology&, bool, size_t);

}  // namespace caffe
