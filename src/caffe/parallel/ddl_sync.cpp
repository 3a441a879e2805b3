#include "caffe/parallel/ddl_sync.hpp"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <iomanip>
#include <sstream>

#include "caffe/parallel/mpi_util.hpp"
#include "caffe/timeline/timeline.hpp"

namespace caffe {

namespace {

double SecondsBetween(std::chrono::steady_clock::time_point from,
                      std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string Megabytes(size_t bytes) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(2) << bytes / (1024.0 * 1024.0) << " MB";
  return text.str();
}

std::string CpuList(const cpu_set_t& set) {
  std::string list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) list += (list.empty() ? "" : ",") + std::to_string(cpu);
  }
  return list;
}

}  // namespace

template <typename Dtype>
DdlSync<Dtype>::DdlSync(Solver<Dtype>* solver, DdlSession* session, ActionCallback local_actions)
    : solver_(solver),
      net_(solver->net().get()),
      session_(session),
      local_actions_(std::move(local_actions)),
      gpu_(Caffe::mode() == Caffe::GPU),
      overlap_(!session->options().bvlc) {
  const DdlOptions& options = session_->options();
  const Blobs<Dtype>& learnable = net_->learnable_params();
  // Buckets in backward order, each up to bucket_kb (a larger param gets a bucket of its own).
  const size_t capacity =
      overlap_ ? std::max<size_t>(1, options.bucket_kb * size_t(1024) / sizeof(Dtype)) : SIZE_MAX;
  gradients_ = std::make_unique<GradientBuffer<Dtype>>(net_, gpu_, capacity);
  const std::vector<Bucket>& buckets = gradients_->buckets();
  bucket_seconds_.assign(buckets.size(), 0);

  size_t largest = 1;
  for (const Bucket& bucket : buckets) largest = std::max(largest, bucket.count);
  session_->Run(
      [&] { comm_ = CreateDdlCommunicator<Dtype>(options, session_->topology(), gpu_, largest); });
  LOG_IF(INFO, session_->rank() == 0)
      << "DDL: " << Megabytes(gradients_->count() * sizeof(Dtype)) << " of gradients ("
      << learnable.size() << " params) in " << buckets.size() << " bucket(s)"
      << (overlap_ ? ", each reduced as soon as backward has produced it"
                   : " (-bvlc: reduced after backward, no overlap)")
      << "; allreduce " << comm_->name();
  if (options.dbg_level >= 1 && session_->rank() == 0) {
    for (size_t b = 0; b < buckets.size(); ++b) {
      LOG(INFO) << "DDL: bucket " << b << ": " << buckets[b].count << " elements, "
                << buckets[b].params.size() << " params, ready after layer '"
                << net_->layer_names()[buckets[b].ready_layer] << "'";
    }
  }
  net_->add_after_backward(this);
  solver_->add_callback(this);
  solver_->SetActionFunction([this] { return TakeAgreedAction(); });
}

template <typename Dtype>
void DdlSync<Dtype>::Solve(const char* resume_file) {
  if (session_->rank() == 0) {
    solver_->Solve(resume_file);
    return;
  }
  if (resume_file != nullptr && *resume_file) solver_->Restore(resume_file);
  solver_->Step(solver_->param().max_iter() - solver_->iter());
}

template <typename Dtype>
size_t BroadcastParams(Net<Dtype>* net, DdlSession* session, int root) {
  const Blobs<Dtype>& learnable = net->learnable_params();
  size_t count = 0;
  for (Blob<Dtype>* param : learnable) count += param->count();
  std::vector<Dtype> weights(std::max<size_t>(count, 1));
  size_t offset = 0;
  for (Blob<Dtype>* param : learnable) {
    std::copy(param->cpu_data(), param->cpu_data() + param->count(), weights.begin() + offset);
    offset += param->count();
  }
  session->Broadcast(weights.data(), count, root);
  offset = 0;
  for (Blob<Dtype>* param : learnable) {
    std::copy(weights.begin() + offset, weights.begin() + offset + param->count(),
              param->mutable_cpu_data());
    offset += param->count();
  }
  return count;
}

template <typename Dtype>
void DdlSync<Dtype>::BroadcastWeights() {
  const size_t count = BroadcastParams(net_, session_);
  LOG_IF(INFO, session_->rank() == 0)
      << "DDL: every learner starts from rank 0's weights (" << count << " values broadcast)";
}

template <typename Dtype>
void DdlSync<Dtype>::on_start() {
  session_->CheckHealth();
  if (!weights_synced_) {
    BroadcastWeights();
    weights_synced_ = true;
  }
  pass_ = 0;
  next_bucket_ = 0;
  waited_seconds_ = 0;
  iteration_start_ = Clock::now();
}

template <typename Dtype>
void DdlSync<Dtype>::Launch(size_t index) {
  if (index == 0) first_launch_ = Clock::now();
  gradients_->MakeCurrent(index, index + 1);
  // Backward's kernels must be done before another stream reads the gradients.
  if (gpu_) SynchronizeDevice();
  Dtype* data = gradients_->RangeData(index);
  const size_t count = gradients_->RangeCount(index, index + 1);
  const bool sync_after = gpu_ && session_->options().dev_sync == 2;
  session_->Submit([this, index, data, count, sync_after] {
    const Clock::time_point start = Clock::now();
    timeline::Slice slice("communication", "allreduce");
    slice.Arg("bucket", index).Arg("bytes", count * sizeof(Dtype)).Arg("algorithm", comm_->name());
    comm_->Allreduce(data, count);
    if (sync_after) SynchronizeDevice();
    last_done_ = Clock::now();
    bucket_seconds_[index] = SecondsBetween(start, last_done_);
  });
}

template <typename Dtype>
void DdlSync<Dtype>::run(int layer) {
  const int last_pass = solver_->param().iter_size() - 1;
  if (overlap_ && pass_ == last_pass) {
    // Backward runs from the top layer down: a bucket is complete once its lowest layer ran.
    const size_t end = gradients_->ReadyEnd(next_bucket_, layer);
    while (next_bucket_ < end) Launch(next_bucket_++);
  }
  if (layer == 0) {
    if (pass_ == last_pass) compute_seconds_ = SecondsBetween(iteration_start_, Clock::now());
    ++pass_;
  }
  session_->CheckHealth();
}

template <typename Dtype>
void DdlSync<Dtype>::on_loss_ready(Dtype* loss) {
  // One small allreduce per iteration: the loss, the net's outputs and the stop/snapshot votes.
  const Blobs<Dtype>& outputs = net_->output_blobs();
  std::vector<double> values(1, *loss);
  for (Blob<Dtype>* output : outputs) {
    for (int i = 0; i < output->count(); ++i) values.push_back(output->cpu_data()[i]);
  }
  const SolverAction::Enum local = local_actions_ ? local_actions_() : SolverAction::NONE;
  values.push_back(local == SolverAction::STOP ? 1 : 0);
  values.push_back(local == SolverAction::SNAPSHOT ? 1 : 0);
  const Clock::time_point start = Clock::now();
  session_->Run([&] {
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                            MPI_DOUBLE, MPI_SUM, session_->control()));
  });
  waited_seconds_ += SecondsBetween(start, Clock::now());
  const double learners = session_->size();
  *loss = static_cast<Dtype>(values[0] / learners);
  size_t next = 1;
  for (Blob<Dtype>* output : outputs) {
    Dtype* data = output->mutable_cpu_data();
    for (int i = 0; i < output->count(); ++i)
      data[i] = static_cast<Dtype>(values[next++] / learners);
  }
  const bool stop = values[next] > 0, snapshot = values[next + 1] > 0;
  agreed_action_ = stop       ? SolverAction::STOP
                   : snapshot ? SolverAction::SNAPSHOT
                              : SolverAction::NONE;
}

template <typename Dtype>
SolverAction::Enum DdlSync<Dtype>::TakeAgreedAction() {
  SolverAction::Enum action = agreed_action_;
  agreed_action_ = SolverAction::NONE;
  // Only rank 0 writes snapshots; the others go on.
  if (action == SolverAction::SNAPSHOT && session_->rank() != 0) return SolverAction::NONE;
  return action;
}

template <typename Dtype>
void DdlSync<Dtype>::on_gradients_ready() {
  const size_t buckets = gradients_->buckets().size();
  while (next_bucket_ < buckets) Launch(next_bucket_++);  // -bvlc: everything now
  const Clock::time_point start = Clock::now();
  session_->WaitAll();
  const Clock::time_point done = Clock::now();
  waited_seconds_ += SecondsBetween(start, done);
  const double end_to_end = buckets == 0 ? 0 : SecondsBetween(first_launch_, last_done_);
  // The sum over N learners becomes their mean.
  gradients_->Scale(Dtype(1) / session_->size());
  const DdlOptions& options = session_->options();
  const int iteration = solver_->iter() + 1;  // counting this one
  if (options.dbg_level >= 2 && session_->rank() == 0) {
    std::ostringstream line;
    line << std::fixed << std::setprecision(3);
    for (size_t b = 0; b < buckets; ++b) {
      line << (b ? ", " : "") << bucket_seconds_[b] * 1e3 << " ms";
    }
    LOG(INFO) << "DDL: iteration " << iteration << " buckets: " << line.str();
  }
  ++dump_iterations_;
  dump_compute_ += compute_seconds_;
  dump_end_to_end_ += end_to_end;
  dump_waited_ += waited_seconds_;
  ++check_iterations_;
  check_compute_ += compute_seconds_;
  if (options.dump_iter > 0 && iteration % options.dump_iter == 0) Dump(iteration);
  if (options.rebind_iter > 0 && iteration % options.rebind_iter == 0) CheckSpeed(iteration);
}

template <typename Dtype>
void DdlSync<Dtype>::Dump(int iteration) {
  const int size = session_->size();
  const double mean_compute = dump_compute_ / dump_iterations_;
  std::vector<double> computes(size, 0);
  session_->Run([&] {
    MPI_CHECK(MPI_Gather(&mean_compute, 1, MPI_DOUBLE, computes.data(), 1, MPI_DOUBLE, 0,
                         session_->control()));
  });
  if (session_->rank() == 0) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(3);
    text << "DDL dump at iteration " << iteration << " (mean of " << dump_iterations_
         << " iterations): allreduce end-to-end " << dump_end_to_end_ / dump_iterations_ * 1e3
         << " ms for " << Megabytes(gradients_->count() * sizeof(Dtype)) << " in "
         << gradients_->buckets().size() << " bucket(s); training waited "
         << dump_waited_ / dump_iterations_ * 1e3 << " ms for communication";
    const auto& stages = comm_->stages();
    for (size_t s = 0; s < stages.size(); ++s) {
      static const char* const kNames[] = {"X (inside a host)", "Y (across hosts)",
                                           "Z (across groups)"};
      text << "\n    dim " << stages[s].dim << " " << kNames[stages[s].dim] << ", "
           << stages[s].comm->size() << " learners: " << stages[s].comm->name() << " "
           << (stages.size() == 1 ? "allreduce"
               : s == 0           ? "reduce-scatter + allgather"
                                  : "allreduce of the shard")
           << " " << comm_->stage_seconds()[s] / dump_iterations_ * 1e3 << " ms";
    }
    const int slowest = std::max_element(computes.begin(), computes.end()) - computes.begin();
    const double fastest = *std::min_element(computes.begin(), computes.end());
    text << "\n    max jitter: learner " << slowest << " (host " << session_->hosts()[slowest]
         << "), forward+backward " << computes[slowest] * 1e3 << " ms, "
         << (computes[slowest] - fastest) * 1e3 << " ms behind the fastest learner";
    LOG(INFO) << text.str();
  }
  comm_->ResetTimes();
  dump_iterations_ = 0;
  dump_compute_ = dump_end_to_end_ = dump_waited_ = 0;
}

template <typename Dtype>
void DdlSync<Dtype>::CheckSpeed(int iteration) {
  const int size = session_->size();
  const double mean_compute = check_compute_ / check_iterations_;
  std::vector<double> computes(size, 0);
  session_->Run([&] {
    MPI_CHECK(MPI_Allgather(&mean_compute, 1, MPI_DOUBLE, computes.data(), 1, MPI_DOUBLE,
                            session_->control()));
  });
  check_iterations_ = 0;
  check_compute_ = 0;
  const int slowest = std::max_element(computes.begin(), computes.end()) - computes.begin();
  slowest_history_.push_back(slowest);
  if (slowest_history_.size() > 3) slowest_history_.pop_front();
  if (slowest_history_.size() < 3 ||
      std::count(slowest_history_.begin(), slowest_history_.end(), slowest) < 3) {
    return;
  }
  slowest_history_.clear();
  std::vector<double> sorted = computes;
  std::sort(sorted.begin(), sorted.end());
  std::ostringstream text;
  text << std::fixed << std::setprecision(3) << "DDL rebind check at iteration " << iteration
       << ": learner " << slowest << " (host " << session_->hosts()[slowest]
       << ") was the slowest in the last 3 checks (" << computes[slowest] * 1e3
       << " ms forward+backward vs median " << sorted[size / 2] * 1e3 << " ms)";
  rebind_report_ = text.str();
  LOG_IF(WARNING, session_->rank() == 0) << rebind_report_;
  if (session_->rank() == slowest) {
    rebind_report_ += "; " + Rebind();
    LOG(WARNING) << "DDL rebind, learner " << slowest << ": " << rebind_report_;
  }
}

template <typename Dtype>
std::string DdlSync<Dtype>::Rebind() {
  if (gpu_) return "a GPU learner keeps its device during training; nothing re-mapped";
  cpu_set_t current;
  CPU_ZERO(&current);
  if (sched_getaffinity(0, sizeof(current), &current) != 0) return "cannot read its CPU binding";
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (CPU_COUNT(&current) >= online) {
    return "it may already use every core of its host; nothing to re-map (check the host for "
           "other load)";
  }
  cpu_set_t all;
  CPU_ZERO(&all);
  for (long cpu = 0; cpu < online && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &all);
  // Every thread of the process (training, prefetch, OpenMP workers, communication).
  int threads = 0;
  if (DIR* tasks = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(tasks)) {
      const int tid = std::atoi(entry->d_name);
      if (tid > 0 && sched_setaffinity(tid, sizeof(all), &all) == 0) ++threads;
    }
    closedir(tasks);
  }
  return "its " + std::to_string(threads) + " threads were bound to cores " + CpuList(current) +
         "; re-bound to all " + std::to_string(online) + " cores of host " + session_->host();
}

template class DdlSync<float>;
template class DdlSync<double>;
template size_t BroadcastParams<float>(Net<float>*, DdlSession*, int);
template size_t BroadcastParams<double>(Net<double>*, DdlSession*, int);

}  // namespace caffe
