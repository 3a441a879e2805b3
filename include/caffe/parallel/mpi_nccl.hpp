// NCCL over the members of an MPI group (DDL's GPU learners, GPU builds with NCCL and MPI): the
// group shares one NCCL unique id over MPI, and checks first that its members hold distinct GPUs
// (NCCL refuses two members on one GPU; such a group reduces with another algorithm).
#ifndef CAFFE_PARALLEL_MPI_NCCL_HPP_
#define CAFFE_PARALLEL_MPI_NCCL_HPP_

#include <memory>
#include <string>

#include "caffe/parallel/mpi_util.hpp"
#include "caffe/parallel/nccl_communicator.hpp"

namespace caffe {

/// Collective over `group`: whether every member's current CUDA device is a different GPU (by
/// its UUID). When some share, `shared` (if given) names the first two members that do and their
/// GPU.
bool NcclGroupHasDistinctGpus(const MpiGroup& group, std::string* shared = nullptr);

/// Collective over `group`: an NCCL communicator over its members, each on its current device
/// (member 0 makes the unique id and broadcasts it over the group).
template <typename Dtype>
std::unique_ptr<NcclCommunicator<Dtype>> NcclCommunicatorOver(const MpiGroup& group);

}  // namespace caffe

#endif  // CAFFE_PARALLEL_MPI_NCCL_HPP_
