// The explorer (IBM DDL's mode p, and the across-host part of mode b): at start-up each dimension
// of the topology times its candidate algorithms on a buffer the size it will reduce, and keeps
// the fastest. Every member of a group sees the same timings (the slowest member's), so all pick
// the same algorithm.
#ifndef CAFFE_PARALLEL_EXPLORER_HPP_
#define CAFFE_PARALLEL_EXPLORER_HPP_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/mpi_util.hpp"

namespace caffe {

/// Times allreduce candidates on one group and picks one.
template <typename Dtype>
class Explorer {
 public:
  struct Choice {
    int chosen = 0;               // index into the candidates
    std::vector<double> seconds;  // per candidate: the slowest member's median time
  };
  /// Seconds since any fixed point; the default reads std::chrono::steady_clock. Tests pass a
  /// clock of their own so that the choice does not hang on how busy the machine is.
  using Clock = std::function<double()>;
  /// Collective over `group`, which every candidate reduces over: each candidate runs one
  /// warm-up and `repeats` timed allreduces of `count` elements (the buffer is on the device for
  /// device candidates); the lowest time wins, ties going to the earlier candidate.
  static Choice Pick(const std::vector<TwoPhaseCommunicator<Dtype>*>& candidates,
                     const MpiGroup& group, size_t count, int repeats = 5,
                     const Clock& clock = SteadyClock);
  static double SteadyClock();
  /// "ring 1.20 ms, rcs 0.95 ms, mpi 1.10 ms".
  static std::string Describe(const std::vector<TwoPhaseCommunicator<Dtype>*>& candidates,
                              const Choice& choice);
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_EXPLORER_HPP_
