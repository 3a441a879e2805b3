// What the MPI-based parts of DDL share: MPI_CHECK (a failed call becomes a CommError carrying
// the library's error string, this learner's rank and its host), the MPI datatype of a Dtype, and
// MpiGroup, an owned communicator whose errors are returned rather than fatal.
#ifndef CAFFE_PARALLEL_MPI_UTIL_HPP_
#define CAFFE_PARALLEL_MPI_UTIL_HPP_

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/parallel/comm_error.hpp"

namespace caffe {

/// "rank R of N on host H" for MPI_COMM_WORLD (or "rank ? (MPI not running) on host H").
std::string MpiWhere();
/// The MPI library's text for an error code.
std::string MpiErrorString(int code);
/// Collective over MPI_COMM_WORLD: this process's rank among the processes on its node (ordered
/// by world rank), and how many those are.
void NodeLocalRank(int* local_rank, int* local_size);
/// Throws CommError "<call> failed: <library text> (rank R of N on host H)".
[[noreturn]] void ThrowMpiError(int code, const char* call);

/// Runs an MPI call; any result but MPI_SUCCESS throws CommError (communicators must use
/// MPI_ERRORS_RETURN for errors to come back at all; MpiGroup sets it).
#define MPI_CHECK(call)                                 \
  do {                                                  \
    const int caffe_mpi_status_ = (call);               \
    if (caffe_mpi_status_ != MPI_SUCCESS) {             \
      ::caffe::ThrowMpiError(caffe_mpi_status_, #call); \
    }                                                   \
  } while (0)

template <typename Dtype>
MPI_Datatype MpiType();
template <>
inline MPI_Datatype MpiType<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype MpiType<double>() {
  return MPI_DOUBLE;
}

/// Largest element count one MPI call may carry (counts are ints).
constexpr size_t kMaxMpiCount = 0x7fffffff;

/// An owned MPI communicator with MPI_ERRORS_RETURN; freed when the last owner lets go (unless
/// MPI has been finalized by then).
class MpiGroup {
 public:
  /// A duplicate of `parent` (its own message space, so collectives on it never mix with others).
  static std::shared_ptr<MpiGroup> Duplicate(MPI_Comm parent);
  /// Collective over `parent`: the callers with equal `color` form one group, ordered by `key`.
  static std::shared_ptr<MpiGroup> Split(MPI_Comm parent, int color, int key);
  ~MpiGroup();

  MPI_Comm comm() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// The MPI_COMM_WORLD rank of each member, by group rank.
  const std::vector<int>& world_ranks() const { return world_ranks_; }

 private:
  explicit MpiGroup(MPI_Comm comm);
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<int> world_ranks_;

  MpiGroup(const MpiGroup&) = delete;
  MpiGroup& operator=(const MpiGroup&) = delete;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_MPI_UTIL_HPP_
