// RingCommunicator over all ranks: exact sums for every test length (segment boundaries
// included), reduce-scatter and allgather with uneven and empty blocks, bitwise-identical
// results on every member, and blocks that do not match the group are an error.
#include "caffe/parallel/ring_communicator.hpp"
#include "caffe/test/communicator_test_util.hpp"

namespace caffe {

template <typename Dtype>
class RingCommunicatorTest : public MpiTest {
 protected:
  RingCommunicatorTest() : comm_(MpiGroup::Duplicate(MPI_COMM_WORLD)) {}
  RingCommunicator<Dtype> comm_;
};
TYPED_TEST_SUITE(RingCommunicatorTest, MpiTestDtypes);

TYPED_TEST(RingCommunicatorTest, AllreduceGivesTheExactSumForEveryLength) {
  EXPECT_EQ(this->comm_.name(), "ring");
  ExpectExactAllreduce(&this->comm_, WorldRank(), WorldSize());
}

TYPED_TEST(RingCommunicatorTest, ReduceScatterAndAllgatherHandleUnevenAndEmptyBlocks) {
  ExpectUnevenAndEmptyBlocksWork(&this->comm_);
}

TYPED_TEST(RingCommunicatorTest, EveryMemberGetsBitwiseTheSameResult) {
  ExpectBitwiseIdenticalResults(&this->comm_, MPI_COMM_WORLD, 100003);
}

TYPED_TEST(RingCommunicatorTest, RejectsBlocksThatDoNotMatchTheGroup) {
  ExpectBlocksForAnotherGroupSizeRejected(&this->comm_);
}

TYPED_TEST(RingCommunicatorTest, CompressedAllreduceSendsSixteenBitsAndSumsWithinRounding) {
  for (Compression compression : {Compression::kFp16, Compression::kBf16}) {
    RingCommunicator<TypeParam> comm(MpiGroup::Duplicate(MPI_COMM_WORLD), compression);
    EXPECT_EQ(comm.compression(), compression);
    ExpectCompressedAllreduceWithinRounding(&comm, WorldRank(), WorldSize(), MPI_COMM_WORLD,
                                            compression, CommunicatorTestLengths());
  }
}

}  // namespace caffe
