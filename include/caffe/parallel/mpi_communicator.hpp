// The MPI library's own collectives: MPI_Reduce_scatter then MPI_Allgatherv (IBM DDL's mode m).
// Open MPI picks its algorithm per message size (its "tuned" component); the cost is whatever it
// chose, typically ring-like for large messages on few processes.
#ifndef CAFFE_PARALLEL_MPI_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_MPI_COMMUNICATOR_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/parallel/mpi_group_communicator.hpp"

namespace caffe {

/// MPI_Reduce_scatter + MPI_Allgatherv (host buffers).
template <typename Dtype>
class MpiCommunicator : public MpiGroupCommunicator<Dtype> {
 public:
  explicit MpiCommunicator(std::shared_ptr<MpiGroup> group,
                           Compression compression = Compression::kNone);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;
  std::string name() const override { return "mpi"; }
  void ReduceScatter(Dtype* buffer, const Blocks& blocks) override;
  void Allgather(Dtype* buffer, const Blocks& blocks) override;

 private:
  std::vector<int> counts_, displacements_;
  std::vector<Dtype> result_;  // MPI_Reduce_scatter leaves the block at the start of its output
  MPI_Op compressed_sum_ = MPI_OP_NULL;  // with compression: the 16-bit values' sum
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_MPI_COMMUNICATOR_HPP_
