#include "caffe/parallel/nccl_communicator.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "caffe/util/nccl_util.hpp"

namespace caffe {

namespace {

// NCCL and CUDA failures in DDL become CommErrors naming the call, the library's text, this
// learner's rank and host.
#define CAFFE_DDL_LIBRARY_CHECK(call, success, describe)                                      \
  do {                                                                                        \
    const auto caffe_ddl_status_ = (call);                                                    \
    if (caffe_ddl_status_ != (success)) {                                                     \
      throw CommError(std::string(#call) + " failed: " + describe(caffe_ddl_status_) + " (" + \
                      MpiWhere() + ")");                                                      \
    }                                                                                         \
  } while (0)
#define CAFFE_NCCL_CHECK(call) CAFFE_DDL_LIBRARY_CHECK(call, ncclSuccess, ncclGetErrorString)
#define CAFFE_DDL_CUDA_CHECK(call) CAFFE_DDL_LIBRARY_CHECK(call, cudaSuccess, cudaGetErrorString)

bool EqualBlocks(const Blocks& blocks) {
  for (int i = 1; i < blocks.parts(); ++i) {
    if (blocks.count[i] != blocks.count[0]) return false;
  }
  return true;
}

// The UUID of the current CUDA device as 32 hex digits.
std::string CurrentGpuUuid() {
  int device = 0;
  CAFFE_DDL_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties;
  CAFFE_DDL_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  std::string hex;
  char digits[3];
  for (unsigned char byte : properties.uuid.bytes) {
    std::snprintf(digits, sizeof(digits), "%02x", byte);
    hex += digits;
  }
  return hex;
}

}  // namespace

bool NcclGroupHasDistinctGpus(const MpiGroup& group, std::string* shared) {
  const std::string mine = CurrentGpuUuid();
  constexpr int kLength = 32;
  std::vector<char> all(static_cast<size_t>(kLength) * group.size());
  MPI_CHECK(MPI_Allgather(mine.data(), kLength, MPI_CHAR, all.data(), kLength, MPI_CHAR,
                          group.comm()));
  for (int a = 0; a < group.size(); ++a) {
    for (int b = a + 1; b < group.size(); ++b) {
      if (std::equal(all.begin() + a * kLength, all.begin() + (a + 1) * kLength,
                     all.begin() + b * kLength)) {
        if (shared) {
          *shared = "learners " + std::to_string(group.world_ranks()[a]) + " and " +
                    std::to_string(group.world_ranks()[b]) + " share GPU " +
                    std::string(all.begin() + a * kLength, all.begin() + (a + 1) * kLength);
        }
        return false;
      }
    }
  }
  return true;
}

template <typename Dtype>
NcclCommunicator<Dtype>::NcclCommunicator(std::shared_ptr<MpiGroup> group)
    : TwoPhaseCommunicator<Dtype>(std::move(group)) {
  ncclUniqueId id;
  if (this->rank() == 0) CAFFE_NCCL_CHECK(ncclGetUniqueId(&id));
  MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, this->group_->comm()));
  CAFFE_DDL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CAFFE_NCCL_CHECK(ncclCommInitRank(&comm_, this->size(), id, this->rank()));
}

template <typename Dtype>
NcclCommunicator<Dtype>::~NcclCommunicator() {
  if (comm_) ncclCommDestroy(comm_);
  if (stream_) cudaStreamDestroy(stream_);
}

template <typename Dtype>
void NcclCommunicator<Dtype>::Synchronize() {
  while (true) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) CAFFE_DDL_CUDA_CHECK(status);
    ncclResult_t async_error = ncclSuccess;
    CAFFE_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
    if (async_error != ncclSuccess) {
      ncclCommAbort(comm_);
      comm_ = nullptr;
      throw CommError(std::string("NCCL reported an asynchronous error: ") +
                      ncclGetErrorString(async_error) + " (" + MpiWhere() + ")");
    }
  }
}

template <typename Dtype>
void NcclCommunicator<Dtype>::Allreduce(Dtype* buffer, size_t count) {
  if (this->size() == 1 || count == 0) return;
  CAFFE_NCCL_CHECK(
      ncclAllReduce(buffer, buffer, count, NcclType<Dtype>(), ncclSum, comm_, stream_));
  Synchronize();
}

template <typename Dtype>
void NcclCommunicator<Dtype>::ReduceScatter(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  const int rank = this->rank();
  if (EqualBlocks(blocks)) {
    CAFFE_NCCL_CHECK(ncclReduceScatter(buffer + blocks.offset[0], buffer + blocks.offset[rank],
                                       blocks.count[0], NcclType<Dtype>(), ncclSum, comm_,
                                       stream_));
  } else {
    CAFFE_NCCL_CHECK(ncclGroupStart());
    for (int root = 0; root < blocks.parts(); ++root) {
      Dtype* block = buffer + blocks.offset[root];
      CAFFE_NCCL_CHECK(ncclReduce(block, block, blocks.count[root], NcclType<Dtype>(), ncclSum,
                                  root, comm_, stream_));
    }
    CAFFE_NCCL_CHECK(ncclGroupEnd());
  }
  Synchronize();
}

template <typename Dtype>
void NcclCommunicator<Dtype>::Allgather(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  const int rank = this->rank();
  if (EqualBlocks(blocks)) {
    CAFFE_NCCL_CHECK(ncclAllGather(buffer + blocks.offset[rank], buffer + blocks.offset[0],
                                   blocks.count[0], NcclType<Dtype>(), comm_, stream_));
  } else {
    CAFFE_NCCL_CHECK(ncclGroupStart());
    for (int root = 0; root < blocks.parts(); ++root) {
      Dtype* block = buffer + blocks.offset[root];
      CAFFE_NCCL_CHECK(
          ncclBroadcast(block, block, blocks.count[root], NcclType<Dtype>(), root, comm_, stream_));
    }
    CAFFE_NCCL_CHECK(ncclGroupEnd());
  }
  Synchronize();
}

template class NcclCommunicator<float>;
template class NcclCommunicator<double>;

}  // namespace caffe
