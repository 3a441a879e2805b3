#include "caffe/parallel/mpi_communicator.hpp"

#include <algorithm>

namespace caffe {

template <typename Dtype>
void MpiCommunicator<Dtype>::ReduceScatter(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  counts_.assign(blocks.count.begin(), blocks.count.end());
  const int rank = this->rank();
  result_.resize(std::max<size_t>(blocks.count[rank], 1));
  // Blocks are contiguous and in member order, as MPI_Reduce_scatter lays them out; a buffer that
  // starts at a later block is passed from that block on.
  MPI_CHECK(MPI_Reduce_scatter(buffer + blocks.offset[0], result_.data(), counts_.data(),
                               MpiType<Dtype>(), MPI_SUM, this->group_->comm()));
  std::copy(result_.begin(), result_.begin() + blocks.count[rank], buffer + blocks.offset[rank]);
}

template <typename Dtype>
void MpiCommunicator<Dtype>::Allgather(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  CAFFE_CHECK_LE(blocks.total() - blocks.offset[0], kMaxMpiCount)
      << "mpi: a buffer of " << blocks.total() << " elements is larger than MPI_Allgatherv takes";
  counts_.assign(blocks.count.begin(), blocks.count.end());
  displacements_.resize(blocks.parts());
  for (int i = 0; i < blocks.parts(); ++i) {
    displacements_[i] = static_cast<int>(blocks.offset[i] - blocks.offset[0]);
  }
  MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer + blocks.offset[0],
                           counts_.data(), displacements_.data(), MpiType<Dtype>(),
                           this->group_->comm()));
}

template class MpiCommunicator<float>;
template class MpiCommunicator<double>;

}  // namespace caffe
