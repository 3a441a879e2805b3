#include "caffe/parallel/heartbeat.hpp"

#include <glog/logging.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <sstream>

#include "caffe/parallel/mpi_util.hpp"

namespace caffe {

namespace {
constexpr int kHeartbeatTag = 301;
using Clock = std::chrono::steady_clock;
double Seconds(Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }
}  // namespace

Heartbeat::Heartbeat(MPI_Comm comm, const std::vector<std::string>& places,
                     const Settings& settings)
    : places_(places), settings_(settings) {
  MPI_CHECK(MPI_Comm_dup(comm, &comm_));
  MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
  if (size_ > 1) thread_ = std::thread(&Heartbeat::Loop, this);
}

Heartbeat::~Heartbeat() {
  Stop();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void Heartbeat::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string Heartbeat::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

void Heartbeat::Loop() {
  const int right = (rank_ + 1) % size_, left = (rank_ + size_ - 1) % size_;
  int incoming = 0;
  MPI_Request receive = MPI_REQUEST_NULL;
  std::deque<MPI_Request> sends;
  MPI_Irecv(&incoming, 1, MPI_INT, left, kHeartbeatTag, comm_, &receive);
  Clock::time_point last_heard = Clock::now(), last_sent = Clock::time_point(), failed_at;
  while (!stop_) {
    const Clock::time_point now = Clock::now();
    if (!paused_ && Seconds(now - last_sent) >= settings_.period_s) {
      sends.emplace_back();
      MPI_Isend(&rank_, 1, MPI_INT, right, kHeartbeatTag, comm_, &sends.back());
      last_sent = now;
    }
    // Completed sends are dropped; a neighbour that stopped listening leaves them pending.
    while (!sends.empty()) {
      int done = 0;
      if (MPI_Test(&sends.front(), &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) break;
      sends.pop_front();
    }
    int arrived = 0;
    while (receive != MPI_REQUEST_NULL &&
           MPI_Test(&receive, &arrived, MPI_STATUS_IGNORE) == MPI_SUCCESS && arrived) {
      last_heard = now;
      MPI_Irecv(&incoming, 1, MPI_INT, left, kHeartbeatTag, comm_, &receive);
    }
    if (!failed_ && Seconds(now - last_heard) > settings_.timeout_s) {
      std::ostringstream message;
      message << "DDL: learner " << left << " (" << places_[left] << ") has sent no heartbeat for "
              << settings_.timeout_s << " s: it died or hangs (noticed by learner " << rank_ << ", "
              << places_[rank_] << "); stopping all learners";
      {
        std::lock_guard<std::mutex> lock(mutex_);
        failure_ = message.str();
      }
      failed_ = true;
      failed_at = now;
      LOG(ERROR) << failure_;
    }
    if (failed_ && settings_.abort_grace_s > 0 &&
        Seconds(now - failed_at) > settings_.abort_grace_s) {
      // The training thread did not stop by itself (it is not waiting on communication).
      std::fprintf(stderr, "caffe: %s (aborting the job)\n", failure().c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (receive != MPI_REQUEST_NULL) {
    MPI_Cancel(&receive);
    MPI_Wait(&receive, MPI_STATUS_IGNORE);
  }
  for (MPI_Request& send : sends) {
    int done = 0;
    MPI_Test(&send, &done, MPI_STATUS_IGNORE);
    if (!done) MPI_Request_free(&send);
  }
}

}  // namespace caffe
