// RcsCommunicator (recursive halving / doubling) over all ranks, power of two or not (the ctest
// runs use 2, 3, 4 and 6 processes): exact sums for every test length, reduce-scatter and
// allgather with uneven and empty blocks, bitwise-identical results on every member, and blocks
// that do not match the group are an error.
#include "caffe/parallel/rcs_communicator.hpp"
#include "caffe/test/communicator_test_util.hpp"

namespace caffe {

template <typename Dtype>
class RcsCommunicatorTest : public MpiTest {
 protected:
  RcsCommunicatorTest() : comm_(MpiGroup::Duplicate(MPI_COMM_WORLD)) {}
  RcsCommunicator<Dtype> comm_;
};
TYPED_TEST_SUITE(RcsCommunicatorTest, MpiTestDtypes);

TYPED_TEST(RcsCommunicatorTest, AllreduceGivesTheExactSumForEveryLength) {
  EXPECT_EQ(this->comm_.name(), "rcs");
  ExpectExactAllreduce(&this->comm_, WorldRank(), WorldSize());
}

TYPED_TEST(RcsCommunicatorTest, ReduceScatterAndAllgatherHandleUnevenAndEmptyBlocks) {
  ExpectUnevenAndEmptyBlocksWork(&this->comm_);
}

TYPED_TEST(RcsCommunicatorTest, EveryMemberGetsBitwiseTheSameResult) {
  ExpectBitwiseIdenticalResults(&this->comm_, MPI_COMM_WORLD, 100003);
}

TYPED_TEST(RcsCommunicatorTest, RejectsBlocksThatDoNotMatchTheGroup) {
  ExpectBlocksForAnotherGroupSizeRejected(&this->comm_);
}

TYPED_TEST(RcsCommunicatorTest, CompressedAllreduceSendsSixteenBitsAndSumsWithinRounding) {
  for (Compression compression : {Compression::kFp16, Compression::kBf16}) {
    RcsCommunicator<TypeParam> comm(MpiGroup::Duplicate(MPI_COMM_WORLD), compression);
    EXPECT_EQ(comm.compression(), compression);
    ExpectCompressedAllreduceWithinRounding(&comm, WorldRank(), WorldSize(), MPI_COMM_WORLD,
                                            compression, CommunicatorTestLengths());
  }
}

}  // namespace caffe
