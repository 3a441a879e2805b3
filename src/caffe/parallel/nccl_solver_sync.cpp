#include "caffe/parallel/nccl_solver_sync.hpp"

#include <cstring>

#ifdef USE_NCCL
#include "caffe/parallel/nccl_communicator.hpp"
#endif

namespace caffe {

#ifdef USE_NCCL

bool NcclSolverSyncBuilt() { return true; }

template <typename Dtype>
struct NcclSolverSync<Dtype>::Comm {
  std::unique_ptr<NcclCommunicator<Dtype>> nccl;
};

template <typename Dtype>
std::string NcclSolverSync<Dtype>::NewUid() {
  return NcclCommunicator<Dtype>::NewUid();
}

template <typename Dtype>
NcclSolverSync<Dtype>::NcclSolverSync(Solver<Dtype>* solver, const std::string& uid)
    : solver_(solver), rank_(Caffe::solver_rank()), size_(Caffe::solver_count()) {
  CAFFE_CHECK(Caffe::mode() == Caffe::GPU)
      << "NCCL synchronizes GPU solvers: call caffe.set_mode_gpu() and set_device() first";
  CAFFE_CHECK(rank_ >= 0 && rank_ < size_)
      << "solver rank " << rank_ << " of " << size_
      << ": call caffe.set_solver_count() and set_solver_rank() before making the solver";
  comm_ = std::make_unique<Comm>();
  comm_->nccl = std::make_unique<NcclCommunicator<Dtype>>(uid, rank_, size_,
                                                          "solver rank " + std::to_string(rank_));
  // A bucket per param, so what a layer completes is one range of buckets.
  gradients_ = std::make_unique<GradientBuffer<Dtype>>(solver_->net().get(), true, 1);
}

template <typename Dtype>
NcclSolverSync<Dtype>::~NcclSolverSync() = default;

template <typename Dtype>
void NcclSolverSync<Dtype>::Broadcast() {
  const Blobs<Dtype>& learnable = solver_->net()->learnable_params();
  for (Blob<Dtype>* param : learnable) {
    // The device copy, made current (and marked newest) first.
    if (param->count() > 0) comm_->nccl->Broadcast(param->mutable_gpu_data(), param->count());
  }
  comm_->nccl->Synchronize();
}

template <typename Dtype>
void NcclSolverSync<Dtype>::on_start() {
  next_ = 0;
  pass_ = 0;
}

template <typename Dtype>
void NcclSolverSync<Dtype>::Launch(size_t end) {
  if (end <= next_) return;
  // The device copies become the newest (a gradient last written on the host goes over first),
  // so that reading a diff after the reduction sees the mean.
  gradients_->MakeCurrent(next_, end);
  comm_->nccl->AllreduceAfterCompute(gradients_->RangeData(next_),
                                     gradients_->RangeCount(next_, end));
  next_ = end;
}

template <typename Dtype>
void NcclSolverSync<Dtype>::run(int layer) {
  if (pass_ == solver_->param().iter_size() - 1) {
    // Backward runs from the top layer down: a gradient is complete once its lowest user ran.
    Launch(gradients_->ReadyEnd(next_, layer));
  }
  if (layer == 0) ++pass_;
}

template <typename Dtype>
void NcclSolverSync<Dtype>::on_gradients_ready() {
  Launch(gradients_->buckets().size());  // all of them, without layer-wise reduction
  next_ = 0;
  pass_ = 0;
  comm_->nccl->Synchronize();
  // The update's kernels follow on the default stream, after this scaling.
  gradients_->Scale(Dtype(1) / static_cast<Dtype>(size_));
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
NcclSolverSync<Dtype>::NcclSolverSync(Solver<Dtype>* solver, const std::string&) : solver_(solver) {
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
