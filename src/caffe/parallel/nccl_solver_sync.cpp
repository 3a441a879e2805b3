#include "caffe/parallel/nccl_solver_sync.hpp"

#include <cstring>

#ifdef USE_NCCL
#include "caffe/parallel/gradient_order.hpp"
#include "caffe/util/math_functions.hpp"
#include "caffe/util/nccl_util.hpp"
#endif

namespace caffe {

#ifdef USE_NCCL

bool NcclSolverSyncBuilt() { return true; }

template <typename Dtype>
struct NcclSolverSync<Dtype>::Comm {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t compute_done = nullptr;  // recorded on the compute stream before each launch
  ~Comm() {
    if (comm != nullptr) ncclCommDestroy(comm);
    if (compute_done != nullptr) cudaEventDestroy(compute_done);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

template <typename Dtype>
std::string NcclSolverSync<Dtype>::NewUid() {
  ncclUniqueId id;
  CAFFE_NCCL_CALL(ncclGetUniqueId(&id));
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
  CUDA_CHECK(cudaEventCreateWithFlags(&comm_->compute_done, cudaEventDisableTiming));
  CAFFE_NCCL_CALL(ncclCommInitRank(&comm_->comm, size_, id, rank_));
  // The diffs move into one buffer in the order backward completes them, so that what a layer
  // completes is one range (shared params share their owner's diff, so they follow).
  const GradientOrder order = BackwardGradientOrder(*solver_->net());
  ready_ = order.ready;
  order_ = order.order;
  const Blobs<Dtype>& learnable = solver_->net()->learnable_params();
  for (int index : order_) {
    offset_.push_back(count_);
    count_ += learnable[index]->count();
  }
  offset_.push_back(count_);
  gradients_ = std::make_unique<DeviceBuffer<Dtype>>(count_);
  for (size_t k = 0; k < order_.size(); ++k) {
    Blob<Dtype>* param = learnable[order_[k]];
    if (param->count() > 0) param->diff()->set_gpu_data(gradients_->data() + offset_[k]);
  }
}

template <typename Dtype>
NcclSolverSync<Dtype>::~NcclSolverSync() = default;

template <typename Dtype>
void NcclSolverSync<Dtype>::Broadcast() {
  const Blobs<Dtype>& learnable = solver_->net()->learnable_params();
  vector<Dtype*> data;  // the device copies, made current (and marked newest) first
  for (Blob<Dtype>* param : learnable) {
    data.push_back(param->count() > 0 ? param->mutable_gpu_data() : nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());  // the copies and kernels that wrote them
  for (size_t i = 0; i < learnable.size(); ++i) {
    if (data[i] == nullptr) continue;
    CAFFE_NCCL_CALL(ncclBroadcast(data[i], data[i], learnable[i]->count(), NcclType<Dtype>(), 0,
                                  comm_->comm, comm_->stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(comm_->stream));
}

template <typename Dtype>
void NcclSolverSync<Dtype>::on_start() {
  next_ = 0;
  pass_ = 0;
}

template <typename Dtype>
void NcclSolverSync<Dtype>::Launch(size_t end) {
  if (end <= next_) return;
  const Blobs<Dtype>& learnable = solver_->net()->learnable_params();
  // The device copies become the newest (a gradient last written on the host goes over first),
  // so that reading a diff after the reduction sees the mean.
  for (size_t k = next_; k < end; ++k) learnable[order_[k]]->mutable_gpu_diff();
  const size_t begin = offset_[next_], count = offset_[end] - begin;
  next_ = end;
  if (count == 0) return;
  // After the kernels that wrote these gradients (issued on the compute stream so far).
  CUDA_CHECK(cudaEventRecord(comm_->compute_done, 0));
  CUDA_CHECK(cudaStreamWaitEvent(comm_->stream, comm_->compute_done, 0));
  Dtype* range = gradients_->data() + begin;
  CAFFE_NCCL_CALL(ncclAllReduce(range, range, count, NcclType<Dtype>(), ncclSum,
                                        comm_->comm, comm_->stream));
}

template <typename Dtype>
void NcclSolverSync<Dtype>::run(int layer) {
  if (pass_ == solver_->param().iter_size() - 1) {
    // Backward runs from the top layer down: a gradient is complete once its lowest user ran.
    size_t end = next_;
    while (end < order_.size() && ready_[order_[end]] >= layer) ++end;
    Launch(end);
  }
  if (layer == 0) ++pass_;
}

template <typename Dtype>
void NcclSolverSync<Dtype>::on_gradients_ready() {
  Launch(order_.size());  // all of them, without layer-wise reduction
  next_ = 0;
  pass_ = 0;
  if (count_ == 0) return;
  CUDA_CHECK(cudaStreamSynchronize(comm_->stream));
  // The update's kernels follow on the default stream, after this scaling.
  caffe_gpu_scal(static_cast<int>(count_), Dtype(1) / static_cast<Dtype>(size_),
                 gradients_->data());
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
void NcclSolverSync<Dtype>::on_start() {
  NoNccl();
}
template <typename Dtype>
void NcclSolverSync<Dtype>::on_gradients_ready() {
  NoNccl();
}
template <typename Dtype>
void NcclSolverSync<Dtype>::run(int) {
  NoNccl();
}

#endif  // USE_NCCL

template class NcclSolverSync<float>;
template class NcclSolverSync<double>;

}  // namespace caffe
