#include "caffe/parallel/mpi_communicator.hpp"

#include <algorithm>

namespace caffe {

namespace {

// MPI's reduction of 16-bit values (-compress): each pair is added in fp32 and the sum rounded
// back, as the point-to-point algorithms add a received value to their own.
template <Compression kCompression>
void AddCompressed(void* in, void* inout, int* count, MPI_Datatype*) {
  const uint16_t* source = static_cast<const uint16_t*>(in);
  uint16_t* target = static_cast<uint16_t*>(inout);
  constexpr int kChunk = 1024;
  float sum[kChunk];
  for (int begin = 0; begin < *count; begin += kChunk) {
    const int n = std::min(kChunk, *count - begin);
    Decompress(kCompression, target + begin, n, sum);
    DecompressAdd(kCompression, source + begin, n, sum);
    Compress(kCompression, sum, n, target + begin);
  }
}

}  // namespace

template <typename Dtype>
MpiCommunicator<Dtype>::MpiCommunicator(std::shared_ptr<MpiGroup> group, Compression compression)
    : MpiGroupCommunicator<Dtype>(std::move(group), compression) {
  if (compression == Compression::kFp16) {
    MPI_CHECK(MPI_Op_create(&AddCompressed<Compression::kFp16>, 1, &compressed_sum_));
  } else if (compression == Compression::kBf16) {
    MPI_CHECK(MPI_Op_create(&AddCompressed<Compression::kBf16>, 1, &compressed_sum_));
  }
}

template <typename Dtype>
MpiCommunicator<Dtype>::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (compressed_sum_ != MPI_OP_NULL && !finalized) MPI_Op_free(&compressed_sum_);
}

template <typename Dtype>
void MpiCommunicator<Dtype>::ReduceScatter(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  counts_.assign(blocks.count.begin(), blocks.count.end());
  const int rank = this->rank();
  Dtype* start = buffer + blocks.offset[0];
  // Blocks are contiguous and in member order, as MPI_Reduce_scatter lays them out; a buffer that
  // starts at a later block is passed from that block on.
  if (!this->compressed()) {
    result_.resize(std::max<size_t>(blocks.count[rank], 1));
    MPI_CHECK(MPI_Reduce_scatter(start, result_.data(), counts_.data(), MpiType<Dtype>(), MPI_SUM,
                                 this->group_->comm()));
    std::copy(result_.begin(), result_.begin() + blocks.count[rank], buffer + blocks.offset[rank]);
    return;
  }
  const size_t total = blocks.total() - blocks.offset[0];
  this->wire_out_.resize(std::max<size_t>(total, 1));
  this->wire_in_.resize(std::max<size_t>(blocks.count[rank], 1));
  Compress(this->compression_, start, total, this->wire_out_.data());
  MPI_CHECK(MPI_Reduce_scatter(this->wire_out_.data(), this->wire_in_.data(), counts_.data(),
                               MPI_UINT16_T, compressed_sum_, this->group_->comm()));
  Decompress(this->compression_, this->wire_in_.data(), blocks.count[rank],
             buffer + blocks.offset[rank]);
}

template <typename Dtype>
void MpiCommunicator<Dtype>::Allgather(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  const size_t total = blocks.total() - blocks.offset[0];
  CAFFE_CHECK_LE(total, kMaxMpiCount)
      << "mpi: a buffer of " << blocks.total() << " elements is larger than MPI_Allgatherv takes";
  counts_.assign(blocks.count.begin(), blocks.count.end());
  displacements_.resize(blocks.parts());
  for (int i = 0; i < blocks.parts(); ++i) {
    displacements_[i] = static_cast<int>(blocks.offset[i] - blocks.offset[0]);
  }
  Dtype* start = buffer + blocks.offset[0];
  if (!this->compressed()) {
    MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, start, counts_.data(),
                             displacements_.data(), MpiType<Dtype>(), this->group_->comm()));
    return;
  }
  const int rank = this->rank();
  this->wire_out_.resize(std::max<size_t>(total, 1));
  Compress(this->compression_, buffer + blocks.offset[rank], blocks.count[rank],
           this->wire_out_.data() + displacements_[rank]);
  MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, this->wire_out_.data(),
                           counts_.data(), displacements_.data(), MPI_UINT16_T,
                           this->group_->comm()));
  // This member's own block comes back as the others received it.
  Decompress(this->compression_, this->wire_out_.data(), total, start);
}

template class MpiCommunicator<float>;
template class MpiCommunicator<double>;

}  // namespace caffe
