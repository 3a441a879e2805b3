#include "caffe/parallel/ddl_session.hpp"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "caffe/common.hpp"
#include "caffe/parallel/hierarchical_communicator.hpp"
#include "caffe/parallel/learner_gpu.hpp"
#include "caffe/parallel/mpi_util.hpp"

namespace caffe {

namespace {
constexpr int kHostNameLength = 256;
}  // namespace

bool DdlSession::MpiRunning() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void DdlSession::AbortJob(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  _exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

DdlSession::DdlSession(const DdlOptions& options, CommThread::Job comm_setup) : options_(options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    const int status = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    CAFFE_CHECK(status == MPI_SUCCESS) << "DDL: MPI_Init_thread failed: " << MpiErrorString(status);
    initialized_mpi_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int provided = 0;
  MPI_CHECK(MPI_Query_thread(&provided));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  try {
    CAFFE_CHECK(provided == MPI_THREAD_MULTIPLE)
        << "DDL needs an MPI library with MPI_THREAD_MULTIPLE (this one provides level " << provided
        << "); Debian's Open MPI (libopenmpi-dev) has it";
    topology_ = ResolveDdlTopology(options_, size_);
  } catch (const Error&) {
    // Every learner reaches the same verdict: end MPI cleanly so each exits with the message.
    if (initialized_mpi_) MPI_Finalize();
    throw;
  }
  // Every learner's host, for messages and the heartbeat.
  std::vector<char> names(static_cast<size_t>(kHostNameLength) * size_, '\0');
  std::string own = HostName().substr(0, kHostNameLength - 1);
  std::memcpy(names.data() + static_cast<size_t>(kHostNameLength) * rank_, own.c_str(), own.size());
  MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, names.data(), kHostNameLength,
                          MPI_CHAR, MPI_COMM_WORLD));
  for (int r = 0; r < size_; ++r) hosts_.emplace_back(names.data() + kHostNameLength * r);
  pids_.assign(size_, 0);
  pids_[rank_] = static_cast<int>(getpid());
  MPI_CHECK(
      MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pids_.data(), 1, MPI_INT, MPI_COMM_WORLD));
  std::vector<std::string> places;
  for (int r = 0; r < size_; ++r) {
    places.push_back("host " + hosts_[r] + ", pid " + std::to_string(pids_[r]));
  }
  NodeLocalRank(&local_rank_, &local_size_);
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &control_));
  MPI_CHECK(MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN));

  Heartbeat::Settings settings;
  settings.timeout_s = options_.timeout_s;
  settings.period_s = std::min(1.0, options_.timeout_s / 5);
  heartbeat_ = std::make_unique<Heartbeat>(MPI_COMM_WORLD, places, settings);
  comm_thread_ = std::make_unique<CommThread>(std::move(comm_setup));

  LOG_IF(INFO, rank_ == 0) << "DDL: " << size_ << " learners as " << topology_.to_string()
                           << " (X per host, Y hosts per group, Z groups), mode "
                           << DdlAlgorithmName(options_.algorithm)
                           << (options_.bvlc ? ", -bvlc: reduce after backward" : "");
  LOG_IF(INFO, options_.dbg_level >= 1)
      << "DDL: learner " << rank_ << " of " << size_ << " on host " << host() << ", pid "
      << getpid() << ", local rank " << local_rank_ << " of " << local_size_ << ", coordinates ("
      << topology_.coordinate(rank_, 0) << "," << topology_.coordinate(rank_, 1) << ","
      << topology_.coordinate(rank_, 2) << ")";
}

DdlSession::~DdlSession() {
  if (finished_) return;
  if (std::uncaught_exceptions() == 0) {
    try {
      Finish();
      return;
    } catch (const std::exception& error) {
      LOG(ERROR) << "DDL: the job did not end cleanly: " << error.what();
    }
  }
  // A failure: a job of the communication thread may be stuck in a collective whose peer is
  // gone and would never return, so neither thread is joined; they end with the process (the
  // caller aborts the job). The heartbeat keeps running: it aborts the job itself if nobody does.
  comm_thread_.release();
  heartbeat_.release();
  float_comm_.release();
  double_comm_.release();
}

void DdlSession::Finish(bool finalize_mpi) {
  if (finished_) return;
  // Learners end together: none stops its heartbeat while another still watches it.
  Run([this] { MPI_CHECK(MPI_Barrier(control_)); });
  heartbeat_->Stop();
  comm_thread_.reset();
  heartbeat_.reset();
  float_comm_.reset();
  double_comm_.reset();
  MPI_Comm_free(&control_);
  finished_ = true;
  if (initialized_mpi_ && finalize_mpi) MPI_Finalize();
}

std::string DdlSession::FromRoot(const std::function<std::string()>& step) {
  // Rank 0's answer, or its error, prefixed by one byte that says which.
  std::string message;
  if (rank_ == 0) {
    try {
      message = "r" + step();
    } catch (const Error& error) {
      message = std::string("e") + error.what();
    }
  }
  int length = static_cast<int>(message.size());
  Run([&] { MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, control_)); });
  message.resize(length);
  Run([&] { MPI_CHECK(MPI_Bcast(message.data(), length, MPI_CHAR, 0, control_)); });
  if (message[0] == 'r') return message.substr(1);
  Finish();
  throw Error(message.substr(1));
}

void DdlSession::CheckHealth() const {
  if (heartbeat_ && heartbeat_->failed()) throw CommError(heartbeat_->failure());
}

uint64_t DdlSession::Submit(CommThread::Job job) {
  CAFFE_CHECK(comm_thread_ != nullptr)
      << "DDL: learner " << rank_ << " has ended its part in the job (finalized); it can no "
      << "longer communicate";
  return comm_thread_->Submit(std::move(job));
}

void DdlSession::Wait(uint64_t ticket) {
  if (comm_thread_ == nullptr) return;  // after Finish: Submit refuses, so nothing is queued
  comm_thread_->Wait(ticket, [this] { CheckHealth(); });
}

void DdlSession::WaitAll() {
  if (comm_thread_ != nullptr) Wait(comm_thread_->submitted());
}

void DdlSession::JoinAsSolver() const {
  if (rank_ != 0 && options_.dbg_level == 0) {
    FLAGS_minloglevel = std::max(FLAGS_minloglevel, 1);
  }
  Caffe::set_solver_count(size_);
  Caffe::set_solver_rank(rank_);
  Caffe::set_multiprocess(true);
}

#ifdef CPU_ONLY
int DdlSession::ChooseGpu(int requested) {
  CAFFE_THROW() << "DDL: GPU " << requested << " was asked for, but this build of Caffe has no "
                << "GPU support (built with CPU_ONLY); train on the CPU, or rebuild with CUDA";
}
#else
int DdlSession::ChooseGpu(int requested) {
  LearnerPlace place;
  place.local_rank = local_rank_;
  place.local_size = local_size_;
  place.host = host();
  CUDA_CHECK(cudaGetDeviceCount(&place.visible_count));
  place.granted = SchedulerGpusFromEnvironment(place.local_rank);
  std::string how;
  const int device = ChooseLearnerGpu(requested, place, &how);
  LOG_IF(INFO, options_.dbg_level >= 1) << "DDL: learner " << rank_ << " trains on " << how;
  // Learners that see one GPU each may still have been given the same one.
  cudaDeviceProp properties;
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  std::vector<char> uuids(16 * static_cast<size_t>(size_));
  std::memcpy(uuids.data() + 16 * rank_, properties.uuid.bytes, 16);
  Run([&] {
    MPI_CHECK(
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, uuids.data(), 16, MPI_BYTE, control_));
  });
  for (int other = 0; other < rank_; ++other) {
    if (hosts_[other] == host() &&
        std::memcmp(uuids.data() + 16 * other, properties.uuid.bytes, 16) == 0) {
      LOG(WARNING) << "DDL: learners " << other << " and " << rank_ << " on host " << host()
                   << " share one GPU (" << how
                   << "): they take turns on it; give each learner its own GPU for speed";
      break;
    }
  }
  return device;
}
#endif

template <typename Dtype>
void DdlSession::Broadcast(Dtype* data, size_t count, int root) {
  CAFFE_CHECK(root >= 0 && root < size_)
      << "DDL: broadcast from learner " << root << ", but the learners are 0 to " << size_ - 1;
  Run([&] {
    for (size_t done = 0; done < count; done += kMaxMpiCount) {
      MPI_CHECK(MPI_Bcast(data + done, static_cast<int>(std::min(kMaxMpiCount, count - done)),
                          MpiType<Dtype>(), root, control_));
    }
  });
}

template <>
std::unique_ptr<HierarchicalCommunicator<float>>& DdlSession::ArrayCommunicator<float>() {
  return float_comm_;
}

template <>
std::unique_ptr<HierarchicalCommunicator<double>>& DdlSession::ArrayCommunicator<double>() {
  return double_comm_;
}

template <typename Dtype>
void DdlSession::Allreduce(Dtype* data, size_t count) {
  if (count == 0) return;  // every learner passes the same count
  std::unique_ptr<HierarchicalCommunicator<Dtype>>& comm = ArrayCommunicator<Dtype>();
  Run([&] {
    if (comm == nullptr) {
      const size_t sample = std::max<size_t>(1, options_.bucket_kb * size_t(1024) / sizeof(Dtype));
      DdlOptions exact = options_;
      exact.compression = Compression::kNone;
      comm = CreateDdlCommunicator<Dtype>(exact, topology_, /*gpu_learner=*/false, sample);
    }
    comm->Allreduce(data, count);
  });
}

std::vector<int64_t> DdlSession::Allgather(int64_t value) {
  std::vector<int64_t> values(size_, 0);
  values[rank_] = value;
  Run([&] {
    MPI_CHECK(
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, values.data(), 1, MPI_INT64_T, control_));
  });
  return values;
}

template void DdlSession::Broadcast<float>(float*, size_t, int);
template void DdlSession::Broadcast<double>(double*, size_t, int);
template void DdlSession::Allreduce<float>(float*, size_t);
template void DdlSession::Allreduce<double>(double*, size_t);

}  // namespace caffe
