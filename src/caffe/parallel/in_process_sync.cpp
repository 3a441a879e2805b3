#include "caffe/parallel/in_process_sync.hpp"

#include <algorithm>
#include <condition_variable>
#include <iomanip>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "caffe/memory/device_buffer.hpp"
#include "caffe/parallel/gradient_buffer.hpp"
#include "caffe/parallel/shared_memory_communicator.hpp"
#include "caffe/solver_factory.hpp"
#ifdef USE_NCCL
#include "caffe/parallel/nccl_communicator.hpp"
#endif

namespace caffe {

namespace {

std::string Megabytes(size_t bytes) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(2) << bytes / (1024.0 * 1024.0) << " MB";
  return text.str();
}

template <typename Dtype>
void CopyWeights(Net<Dtype>* net, std::vector<Dtype>* weights) {
  weights->clear();
  for (Blob<Dtype>* param : net->learnable_params()) {
    weights->insert(weights->end(), param->cpu_data(), param->cpu_data() + param->count());
  }
}

}  // namespace

// One solver's part: its gradients in one buffer (host memory in CPU mode, device memory in GPU
// mode), its member of the group's communicator, and the solver's callbacks that keep it in step
// with the others.
template <typename Dtype>
class InProcessSync<Dtype>::Member : public Solver<Dtype>::Callback {
 public:
  Member(InProcessSync* sync, Solver<Dtype>* solver, int rank)
      : sync_(sync),
        solver_(solver),
        rank_(rank),
        gradients_(solver->net().get(), sync->gpu_, SIZE_MAX) {
    sync_->members_[rank_] = this;
    solver_->add_callback(this);
    solver_->SetActionFunction([this] { return TakeAgreedAction(); });
  }

  size_t gradient_count() const { return gradients_.count(); }

  void on_start() override {
    if (weights_synced_) return;
    weights_synced_ = true;
    // Before the first iteration, after the root restored a snapshot or loaded weights.
    if (rank_ == 0) CopyWeights(solver_->net().get(), &sync_->root_weights_);
    sync_->barrier_->Wait();
    if (rank_ == 0) return;
    const size_t root_total = sync_->members_[0]->gradient_count();
    CAFFE_CHECK_EQ(gradient_count(), root_total)
        << "the train net of " << sync_->Describe(rank_) << " has " << gradient_count()
        << " learnable values, the root's " << root_total;
    // The root does not change its weights before every worker has passed the next barrier.
    const Dtype* weights = sync_->root_weights_.data();
    for (Blob<Dtype>* param : solver_->net()->learnable_params()) {
      std::copy(weights, weights + param->count(), param->mutable_cpu_data());
      weights += param->count();
    }
  }

  void on_loss_ready(Dtype* loss) override {
    std::vector<double>& mine = sync_->outputs_[rank_];
    mine.assign(1, *loss);
    const Blobs<Dtype>& outputs = solver_->net()->output_blobs();
    for (Blob<Dtype>* output : outputs) {
      mine.insert(mine.end(), output->cpu_data(), output->cpu_data() + output->count());
    }
    if (rank_ == 0) {
      sync_->requested_action_ =
          sync_->root_requests_ ? sync_->root_requests_() : SolverAction::NONE;
    }
    sync_->barrier_->Wait();
    // Nobody writes these again before the gradient barrier, which every thread must reach.
    agreed_action_ = sync_->requested_action_;
    if (rank_ != 0) return;
    // The root shows the averages over solvers (summed in rank order, in double).
    std::vector<double> mean(mine.size(), 0);
    for (const std::vector<double>& values : sync_->outputs_) {
      for (size_t i = 0; i < std::min(mean.size(), values.size()); ++i) mean[i] += values[i];
    }
    for (double& value : mean) value /= sync_->count_;
    *loss = static_cast<Dtype>(mean[0]);
    size_t next = 1;
    for (Blob<Dtype>* output : outputs) {
      Dtype* data = output->mutable_cpu_data();
      for (int i = 0; i < output->count(); ++i) data[i] = static_cast<Dtype>(mean[next++]);
    }
  }

  void on_gradients_ready() override {
    const size_t buckets = gradients_.buckets().size();
    gradients_.MakeCurrent(0, buckets);
    if (sync_->gpu_) SynchronizeDevice();  // backward's kernels are done
    // Every solver enters the collective, or (after a failure elsewhere) none does.
    sync_->barrier_->Wait();
    if (buckets > 0) {
      sync_->comms_[rank_]->Allreduce(gradients_.RangeData(0), gradients_.RangeCount(0, buckets));
    }
    // The sum over N solvers becomes their mean.
    gradients_.Scale(Dtype(1) / static_cast<Dtype>(sync_->count_));
  }

 private:
  // The request agreed on this iteration, handed to the solver once; only the root snapshots.
  SolverAction::Enum TakeAgreedAction() {
    SolverAction::Enum action = agreed_action_;
    agreed_action_ = SolverAction::NONE;
    if (action == SolverAction::SNAPSHOT && rank_ != 0) return SolverAction::NONE;
    return action;
  }

  InProcessSync* sync_;
  Solver<Dtype>* solver_;
  int rank_;
  GradientBuffer<Dtype> gradients_;
  bool weights_synced_ = false;
  SolverAction::Enum agreed_action_ = SolverAction::NONE;
};

template <typename Dtype>
InProcessSync<Dtype>::InProcessSync(Solver<Dtype>* root_solver, int solver_count,
                                    std::vector<int> devices)
    : root_(root_solver),
      count_(solver_count),
      devices_(std::move(devices)),
      gpu_(Caffe::mode() == Caffe::GPU) {
  CAFFE_CHECK_GE(count_, 1) << "parallel training needs at least one solver";
  CAFFE_CHECK(Caffe::root_solver())
      << "the solver passed to InProcessSync must be the root (Caffe::solver_rank() 0)";
  CAFFE_CHECK_EQ(Caffe::solver_count(), count_)
      << "call Caffe::set_solver_count(" << count_ << ") before building the root solver, so "
      << "its data layers read only their share of the records";
  if (gpu_) {
    CAFFE_CHECK_EQ(devices_.size(), static_cast<size_t>(count_))
        << "GPU mode: give one device id per solver";
    CAFFE_CHECK_EQ(Caffe::device(), devices_[0])
        << "the root solver must run on the first device listed";
  } else {
    devices_.clear();
  }
  // NCCL cannot hold one GPU twice in a communicator: a repeated id sums in host memory.
  [[maybe_unused]] const bool distinct =
      std::set<int>(devices_.begin(), devices_.end()).size() == devices_.size();
#ifdef USE_NCCL
  use_nccl_ = gpu_ && count_ > 1 && distinct;
#endif
  barrier_ = std::make_shared<ThreadBarrier>(count_);
  members_.assign(count_, nullptr);
  outputs_.assign(count_, {});
  final_iters_.assign(count_, -1);
  final_weights_.assign(count_, {});
  failures_.assign(count_, nullptr);
  root_member_ = std::make_unique<Member>(this, root_, 0);
  gradient_count_ = root_member_->gradient_count();

  std::ostringstream where;
  if (gpu_) {
    where << "GPUs ";
    for (int i = 0; i < count_; ++i) where << (i ? ", " : "") << devices_[i];
  } else {
    where << "the CPU";
  }
  LOG(INFO) << count_ << " solver(s) on " << where.str() << ", one thread each: the effective "
            << "batch is " << count_ << " x the train net's batch size; "
            << Megabytes(gradient_count_ * sizeof(Dtype)) << " of gradients summed "
            << (use_nccl_ ? "with NCCL" : "in shared memory") << " after each backward";
}

template <typename Dtype>
InProcessSync<Dtype>::~InProcessSync() = default;

template <typename Dtype>
std::string InProcessSync<Dtype>::allreduce_name() const {
  return use_nccl_ ? "NCCL" : "shared memory";
}

template <typename Dtype>
std::string InProcessSync<Dtype>::Describe(int rank) const {
  std::ostringstream text;
  text << "solver thread " << rank << " of " << count_;
  if (gpu_) text << " (GPU " << devices_[rank] << ")";
  return text.str();
}

template <typename Dtype>
void InProcessSync<Dtype>::RecordFailure(int rank, std::exception_ptr failure) {
  {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    if (!failures_[rank]) failures_[rank] = std::move(failure);
  }
  barrier_->Abort();
}

template <typename Dtype>
void InProcessSync<Dtype>::MakeCommunicators() {
#ifdef USE_NCCL
  if (use_nccl_) {
    for (auto& member : NcclCommunicator<Dtype>::ForDevices(devices_)) {
      comms_.push_back(std::move(member));
    }
    return;
  }
#endif
  auto group = std::make_shared<SharedMemoryGroup<Dtype>>(barrier_);
  for (int rank = 0; rank < count_; ++rank) {
    comms_.push_back(std::make_unique<SharedMemoryCommunicator<Dtype>>(group, rank, gpu_));
  }
}

template <typename Dtype>
void InProcessSync<Dtype>::WorkerMain(int rank, std::string resume_file) {
  std::unique_ptr<WorkerSetup> setup;  // outlives the solver
  std::unique_ptr<Solver<Dtype>> solver;
  try {
    Caffe::set_mode(gpu_ ? Caffe::GPU : Caffe::CPU);
    if (gpu_) Caffe::SetDevice(devices_[rank]);
    if (worker_setup_) setup = worker_setup_(rank);
    Caffe::set_solver_count(count_);
    Caffe::set_solver_rank(rank);
    Caffe::set_multiprocess(false);  // threads of one process
    SolverParameter param = root_->param();
    if (*root_->type()) param.set_type(root_->type());
    // The root alone tests, and its weights reach every worker before the first iteration.
    param.clear_test_net();
    param.clear_test_net_param();
    param.clear_test_iter();
    param.clear_test_state();
    param.set_test_interval(0);
    param.clear_weights();
    param.set_debug_info(false);
    if (worker_param_editor_) worker_param_editor_(rank, &param);
    {
      // LMDB's opening of a database resets the lock table it shares with every other opening
      // of that database in the process, so a reader starting meanwhile may see an old (even
      // empty) version: the workers build their nets, and open their databases, one at a time,
      // after the root (built before Run).
      std::lock_guard<std::mutex> lock(setup_mutex_);
      solver.reset(SolverRegistry<Dtype>::CreateSolver(param));
    }
    Member member(this, solver.get(), rank);
    if (setup) setup->Ready(solver.get());
    if (!resume_file.empty()) solver->Restore(resume_file.c_str());
    solver->Step(solver->param().max_iter() - solver->iter());
    CopyWeights(solver->net().get(), &final_weights_[rank]);
  } catch (const BarrierAborted&) {
    // Another thread failed, or the root ended: nothing of this thread's own to report.
  } catch (...) {
    RecordFailure(rank, std::current_exception());
  }
  if (solver) final_iters_[rank] = solver->iter();
}

template <typename Dtype>
void InProcessSync<Dtype>::Run(const char* resume_file) {
  CAFFE_CHECK(!ran_) << "InProcessSync::Run runs once";
  ran_ = true;
  const std::string resume = resume_file != nullptr ? resume_file : "";
  MakeCommunicators();
  std::vector<std::thread> workers;
  for (int rank = 1; rank < count_; ++rank) {
    workers.emplace_back(&InProcessSync::WorkerMain, this, rank, resume);
  }
  try {
    root_->Solve(resume_file);
    CopyWeights(root_->net().get(), &final_weights_[0]);
  } catch (const BarrierAborted&) {
    // A worker failed; its failure is reported below.
  } catch (...) {
    RecordFailure(0, std::current_exception());
  }
  final_iters_[0] = root_->iter();
  // Every worker has passed its last barrier once the root has (they are released together);
  // a worker still waiting (which no schedule should leave) is let go rather than left hanging.
  barrier_->Abort();
  for (std::thread& worker : workers) worker.join();
  if (failures_[0]) std::rethrow_exception(failures_[0]);
  for (int rank = 1; rank < count_; ++rank) {
    if (!failures_[rank]) continue;
    try {
      std::rethrow_exception(failures_[rank]);
    } catch (const std::exception& error) {
      throw Error(Describe(rank) + ": " + error.what());
    } catch (...) {
      throw Error(Describe(rank) + " failed with an unknown exception");
    }
  }
  for (int rank = 1; rank < count_; ++rank) {
    LOG_IF(WARNING, final_iters_[rank] != final_iters_[0])
        << Describe(rank) << " ended at iteration " << final_iters_[rank] << ", the root at "
        << final_iters_[0];
  }
}

template class InProcessSync<float>;
template class InProcessSync<double>;

}  // namespace caffe
