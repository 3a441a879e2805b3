#include "caffe/parallel/nccl_solver_sync.hpp"

#include <cstring>

#ifdef USE_NCCL
#include <nccl.h>

#include "caffe/util/math_functions.hpp"
#endif

namespace caffe {

#ifdef USE_NCCL

namespace {

#define CAFFE_SOLVER_NCCL_CHECK(call)                                                        \
  do {                                                                                       \
    const ncclResult_t caffe_nccl_status_ = (call);                                          \
    CAFFE_CHECK(caffe_nccl_status_ == ncclSuccess)                                           \
        << "NCCL call failed: " #call ": " << ncclGetErrorString(caffe_nccl_status_);        \
  } while (0)

template <typename Dtype>
ncclDataType_t NcclTypeOf() {
  return sizeof(Dtype) == sizeof(float) ? ncclFloat : ncclDouble;
}

}  // namespace

bool NcclSolverSyncBuilt() { return true; }

template <typename Dtype>
struct NcclSolverSync<Dtype>::Comm {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  ~Comm() {
    if (comm != nullptr) ncclCommDestroy(comm);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
  // Runs `collective` on the stream after the device's work so far; returns once it is done.
  template <typename Collective>
  void Run(Collective collective) {
    CUDA_CHECK(cudaDeviceSynchronize());  // the kernels that wrote the buffers
    CAFFE_SOLVER_NCCL_CHECK(collective(stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

template <typename Dtype>
std::string NcclSolverSync<Dtype>::NewUid() {
  ncclUniqueId id;
  CAFFE_SOLVER_NCCL_CHECK(ncclGetUniqueId(&id));
  return std::string(id.internal, sizeof(id.internal));
}

template <typename Dtype>
NcclSolverSync<Dtype>::NcclSolverSync(Solver<Dtype>* solver, const std::string& uid)
    : solver_(solver), rank_(Caffe::solver_rank()), size_(Caffe::solver_count()) {
  CAFFE_CHECK(Caffe::mode() == Caffe::GPU)
      << "NCCL synchronizes GPU solvers: call caffe.set_mode_gpu() and set_device() first";
  ncclUniqueId id;
  CAFFE_CHECK_EQ(uid.size(), sizeof(id.internal))
      << "the NCCL unique id has " << uid.size() << " bytes; expected the "
      << sizeof(id.internal) << " of NCCL.new_uid()";
  CAFFE_CHECK(rank_ >= 0 && rank_ < size_)
      << "solver rank " << rank_ << " of " << size_
      << ": call caffe.set_solver_count() and set_solver_rank() before making the solver";
  std::memcpy(id.internal, uid.data(), sizeof(id.internal));
  comm_ = std::make_unique<Comm>();
  CUDA_CHECK(cudaStreamCreateWithFlags(&comm_->stream, cudaStreamNonBlocking));
  CAFFE_SOLVER_NCCL_CHECK(ncclCommInitRank(&comm_->comm, size_, id, rank_));
  // The diffs move into one buffer (shared params share their owner's diff, so they follow).
  const Blobs<Dtype>& learnable = solver_->net()->learnable_params();
  for (Blob<Dtype>* param : learnable) count_ += param->count();
  gradients_ = std::make_unique<DeviceBuffer<Dtype>>(count_);
  size_t offset = 0;
  for (Blob<Dtype>* param : learnable) {
    if (param->count() == 0) continue;
    param->diff()->set_gpu_data(gradients_->data() + offset);
    offset += param->count();
  }
}

template <typename Dtype>
NcclSolverSync<Dtype>::~NcclSolverSync() = default;

template <typename Dtype>
void NcclSolverSync<Dtype>::Broadcast() {
  for (Blob<Dtype>* param : solver_->net()->learnable_params()) {
    if (param->count() == 0) continue;
    Dtype* data = param->mutable_gpu_data();
    comm_->Run([&](cudaStream_t stream) {
      return ncclBroadcast(data, data, param->count(), NcclTypeOf<Dtype>(), 0, comm_->comm,
                           stream);
    });
  }
}

template <typename Dtype>
void NcclSolverSync<Dtype>::on_gradients_ready() {
  if (count_ == 0) return;
  // The device copies become the newest (a gradient last written on the host goes over first),
  // so that reading a diff after the reduction sees the mean.
  for (Blob<Dtype>* param : solver_->net()->learnable_params()) param->mutable_gpu_diff();
  Dtype* gradients = gradients_->data();
  comm_->Run([&](cudaStream_t stream) {
    return ncclAllReduce(gradients, gradients, count_, NcclTypeOf<Dtype>(), ncclSum, comm_->comm,
                         stream);
  });
  // The update's kernels follow on the default stream, after this scaling.
  caffe_gpu_scal(static_cast<int>(count_), Dtype(1) / static_cast<Dtype>(size_), gradients);
}

#else  // no NCCL

bool NcclSolverSyncBuilt() { return false; }

template <typename Dtype>
struct NcclSolverSync<Dtype>::Comm {};

namespace {
[[noreturn]] void NoNccl() {
  CAFFE_THROW() << "caffe.NCCL needs a GPU build of Caffe with NCCL, which this build is not; "
                   "train on several GPUs with `caffe train -gpu 0,1` or `-ddl` instead";
}
}  // namespace

template <typename Dtype>
std::string NcclSolverSync<Dtype>::NewUid() {
  NoNccl();
}
template <typename Dtype>
NcclSolverSync<Dtype>::NcclSolverSync(Solver<Dtype>* solver, const std::string&)
    : solver_(solver) {
  NoNccl();
}
template <typename Dtype>
NcclSolverSync<Dtype>::~NcclSolverSync() = default;
template <typename Dtype>
void NcclSolverSync<Dtype>::Broadcast() {
  NoNccl();
}
template <typename Dtype>
void NcclSolverSync<Dtype>::on_gradients_ready() {
  NoNccl();
}

#endif  // USE_NCCL

template class NcclSolverSync<float>;
template class NcclSolverSync<double>;

}  // namespace caffe
