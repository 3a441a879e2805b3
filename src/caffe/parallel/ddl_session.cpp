#include "caffe/parallel/ddl_session.hpp"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>

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
}

void DdlSession::Finish(bool finalize_mpi) {
  if (finished_) return;
  // Learners end together: none stops its heartbeat while another still watches it.
  Run([this] { MPI_CHECK(MPI_Barrier(control_)); });
  heartbeat_->Stop();
  comm_thread_.reset();
  heartbeat_.reset();
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

void DdlSession::Wait(uint64_t ticket) {
  comm_thread_->Wait(ticket, [this] { CheckHealth(); });
}

}  // namespace caffe
