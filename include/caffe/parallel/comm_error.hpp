// CommError: a failure of communication between learners (a peer died or hangs, the network or
// the MPI library reported an error). It is a caffe::Error, so tools print it as one line and exit
// non-zero; code that can go on without the failed peers may catch it and rebuild its communicator.
#ifndef CAFFE_PARALLEL_COMM_ERROR_HPP_
#define CAFFE_PARALLEL_COMM_ERROR_HPP_

#include <string>

#include "caffe/util/error.hpp"

namespace caffe {

/// A communication failure; the message names the operation, this learner's rank and host, and
/// the peer at fault where it is known.
class CommError : public Error {
 public:
  explicit CommError(const std::string& message) : Error(message) {}
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_COMM_ERROR_HPP_
