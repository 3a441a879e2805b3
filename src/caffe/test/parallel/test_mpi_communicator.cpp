// MpiCommunicator (MPI_Reduce_scatter + MPI_Allgatherv) over all ranks: exact sums for every
// test length, reduce-scatter and allgather with uneven and empty blocks, bitwise-identical
// results on every member, and blocks that do not match the group are an error.
#include "caffe/parallel/mpi_communicator.hpp"
#include "caffe/test/communicator_test_util.hpp"

namespace caffe {

template <typename Dtype>
class MpiCommunicatorTest : public MpiTest {
 protected:
  MpiCommunicatorTest() : comm_(MpiGroup::Duplicate(MPI_COMM_WORLD)) {}
  MpiCommunicator<Dtype> comm_;
};
TYPED_TEST_SUITE(MpiCommunicatorTest, MpiTestDtypes);

TYPED_TEST(MpiCommunicatorTest, AllreduceGivesTheExactSumForEveryLength) {
  EXPECT_EQ(this->comm_.name(), "mpi");
  ExpectExactAllreduce(&this->comm_, WorldRank(), WorldSize());
}

TYPED_TEST(MpiCommunicatorTest, ReduceScatterAndAllgatherHandleUnevenAndEmptyBlocks) {
  ExpectUnevenAndEmptyBlocksWork(&this->comm_);
}

TYPED_TEST(MpiCommunicatorTest, EveryMemberGetsBitwiseTheSameResult) {
  ExpectBitwiseIdenticalResults(&this->comm_, MPI_COMM_WORLD, 100003);
}

TYPED_TEST(MpiCommunicatorTest, RejectsBlocksThatDoNotMatchTheGroup) {
  ExpectBlocksForAnotherGroupSizeRejected(&this->comm_);
}

TYPED_TEST(MpiCommunicatorTest, CompressedAllreduceSendsSixteenBitsAndSumsWithinRounding) {
  for (Compression compression : {Compression::kFp16, Compression::kBf16}) {
    MpiCommunicator<TypeParam> comm(MpiGroup::Duplicate(MPI_COMM_WORLD), compression);
    EXPECT_EQ(comm.compression(), compression);
    ExpectCompressedAllreduceWithinRounding(&comm, WorldRank(), WorldSize(), MPI_COMM_WORLD,
                                            compression, CommunicatorTestLengths());
  }
}

}  // namespace caffe
