#include "caffe/parallel/nccl_communicator.hpp"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "caffe/parallel/comm_error.hpp"
#include "caffe/parallel/nccl_util.hpp"

namespace caffe {

namespace {

// NCCL and CUDA failures become CommErrors naming the call, the library's text and `where`.
#define CAFFE_COMM_LIBRARY_CHECK(call, success, describe, where)                               \
  do {                                                                                         \
    const auto caffe_comm_status_ = (call);                                                    \
    if (caffe_comm_status_ != (success)) {                                                     \
      throw CommError(std::string(#call) + " failed: " + describe(caffe_comm_status_) + " (" + \
                      (where) + ")");                                                          \
    }                                                                                          \
  } while (0)
#define CAFFE_NCCL_CHECK(call, where) \
  CAFFE_COMM_LIBRARY_CHECK(call, ncclSuccess, ncclGetErrorString, where)
#define CAFFE_COMM_CUDA_CHECK(call, where) \
  CAFFE_COMM_LIBRARY_CHECK(call, cudaSuccess, cudaGetErrorString, where)

bool EqualBlocks(const Blocks& blocks) {
  for (int i = 1; i < blocks.parts(); ++i) {
    if (blocks.count[i] != blocks.count[0]) return false;
  }
  return true;
}

}  // namespace

template <typename Dtype>
std::string NcclCommunicator<Dtype>::NewUid() {
  ncclUniqueId id;
  CAFFE_NCCL_CHECK(ncclGetUniqueId(&id), "making an NCCL unique id");
  return std::string(id.internal, sizeof(id.internal));
}

template <typename Dtype>
NcclCommunicator<Dtype>::NcclCommunicator(const std::string& uid, int rank, int size,
                                          std::string where)
    : rank_(rank), size_(size), where_(std::move(where)) {
  ncclUniqueId id;
  CAFFE_CHECK_EQ(uid.size(), sizeof(id.internal))
      << "the NCCL unique id has " << uid.size() << " bytes; expected the " << sizeof(id.internal)
      << " of NCCL.new_uid()";
  CAFFE_CHECK(rank >= 0 && rank < size) << "NCCL member " << rank << " of " << size;
  std::memcpy(id.internal, uid.data(), sizeof(id.internal));
  CAFFE_COMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), where_);
  CAFFE_COMM_CUDA_CHECK(cudaEventCreateWithFlags(&compute_done_, cudaEventDisableTiming), where_);
  CAFFE_NCCL_CHECK(ncclCommInitRank(&comm_, size, id, rank), where_);
}

template <typename Dtype>
NcclCommunicator<Dtype>::NcclCommunicator(ncclComm_t comm, int rank, int size, std::string where)
    : comm_(comm), rank_(rank), size_(size), where_(std::move(where)) {
  CAFFE_COMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), where_);
  CAFFE_COMM_CUDA_CHECK(cudaEventCreateWithFlags(&compute_done_, cudaEventDisableTiming), where_);
}

template <typename Dtype>
std::vector<std::unique_ptr<NcclCommunicator<Dtype>>> NcclCommunicator<Dtype>::ForDevices(
    const std::vector<int>& devices) {
  const int size = static_cast<int>(devices.size());
  std::vector<ncclComm_t> comms(devices.size(), nullptr);
  CAFFE_NCCL_CHECK(ncclCommInitAll(comms.data(), size, devices.data()), "this process");
  int current = 0;
  CAFFE_COMM_CUDA_CHECK(cudaGetDevice(&current), "this process");
  std::vector<std::unique_ptr<NcclCommunicator>> members;
  for (int rank = 0; rank < size; ++rank) {
    // Each member's stream on its own device.
    CAFFE_COMM_CUDA_CHECK(cudaSetDevice(devices[rank]), "this process");
    members.emplace_back(new NcclCommunicator(
        comms[rank], rank, size,
        "solver thread " + std::to_string(rank) + " on GPU " + std::to_string(devices[rank])));
  }
  CAFFE_COMM_CUDA_CHECK(cudaSetDevice(current), "this process");
  return members;
}

template <typename Dtype>
NcclCommunicator<Dtype>::~NcclCommunicator() {
  if (comm_) ncclCommDestroy(comm_);
  if (compute_done_) cudaEventDestroy(compute_done_);
  if (stream_) cudaStreamDestroy(stream_);
}

template <typename Dtype>
void NcclCommunicator<Dtype>::Synchronize() {
  while (true) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) CAFFE_COMM_CUDA_CHECK(status, where_);
    ncclResult_t async_error = ncclSuccess;
    CAFFE_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error), where_);
    if (async_error != ncclSuccess) {
      ncclCommAbort(comm_);
      comm_ = nullptr;
      throw CommError(std::string("NCCL reported an asynchronous error: ") +
                      ncclGetErrorString(async_error) + " (" + where_ + ")");
    }
  }
}

template <typename Dtype>
void NcclCommunicator<Dtype>::Allreduce(Dtype* buffer, size_t count) {
  if (size_ == 1 || count == 0) return;
  CAFFE_NCCL_CHECK(ncclAllReduce(buffer, buffer, count, NcclType<Dtype>(), ncclSum, comm_, stream_),
                   where_);
  Synchronize();
}

template <typename Dtype>
void NcclCommunicator<Dtype>::AllreduceAfterCompute(Dtype* buffer, size_t count) {
  if (size_ == 1 || count == 0) return;
  CAFFE_COMM_CUDA_CHECK(cudaEventRecord(compute_done_, nullptr), where_);
  CAFFE_COMM_CUDA_CHECK(cudaStreamWaitEvent(stream_, compute_done_, 0), where_);
  CAFFE_NCCL_CHECK(ncclAllReduce(buffer, buffer, count, NcclType<Dtype>(), ncclSum, comm_, stream_),
                   where_);
}

template <typename Dtype>
void NcclCommunicator<Dtype>::Broadcast(Dtype* buffer, size_t count) {
  if (size_ == 1 || count == 0) return;
  CAFFE_COMM_CUDA_CHECK(cudaEventRecord(compute_done_, nullptr), where_);
  CAFFE_COMM_CUDA_CHECK(cudaStreamWaitEvent(stream_, compute_done_, 0), where_);
  CAFFE_NCCL_CHECK(ncclBroadcast(buffer, buffer, count, NcclType<Dtype>(), 0, comm_, stream_),
                   where_);
}

template <typename Dtype>
void NcclCommunicator<Dtype>::ReduceScatter(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (size_ == 1) return;
  if (EqualBlocks(blocks)) {
    CAFFE_NCCL_CHECK(ncclReduceScatter(buffer + blocks.offset[0], buffer + blocks.offset[rank_],
                                       blocks.count[0], NcclType<Dtype>(), ncclSum, comm_, stream_),
                     where_);
  } else {
    CAFFE_NCCL_CHECK(ncclGroupStart(), where_);
    for (int root = 0; root < blocks.parts(); ++root) {
      Dtype* block = buffer + blocks.offset[root];
      CAFFE_NCCL_CHECK(ncclReduce(block, block, blocks.count[root], NcclType<Dtype>(), ncclSum,
                                  root, comm_, stream_),
                       where_);
    }
    CAFFE_NCCL_CHECK(ncclGroupEnd(), where_);
  }
  Synchronize();
}

template <typename Dtype>
void NcclCommunicator<Dtype>::Allgather(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (size_ == 1) return;
  if (EqualBlocks(blocks)) {
    CAFFE_NCCL_CHECK(ncclAllGather(buffer + blocks.offset[rank_], buffer + blocks.offset[0],
                                   blocks.count[0], NcclType<Dtype>(), comm_, stream_),
                     where_);
  } else {
    CAFFE_NCCL_CHECK(ncclGroupStart(), where_);
    for (int root = 0; root < blocks.parts(); ++root) {
      Dtype* block = buffer + blocks.offset[root];
      CAFFE_NCCL_CHECK(
          ncclBroadcast(block, block, blocks.count[root], NcclType<Dtype>(), root, comm_, stream_),
          where_);
    }
    CAFFE_NCCL_CHECK(ncclGroupEnd(), where_);
  }
  Synchronize();
}

template class NcclCommunicator<float>;
template class NcclCommunicator<double>;

}  // namespace caffe
