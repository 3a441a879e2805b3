// What every communicator shares: Blocks::Even (contiguous, sizes within one, empty blocks when
// there are fewer elements than members), AddInto, and TwoPhaseCommunicator's allreduce as a
// reduce-scatter then an allgather over even blocks, also on groups split off the world.
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/ring_communicator.hpp"
#include "caffe/test/communicator_test_util.hpp"

namespace caffe {

namespace {

// Records what the base class's Allreduce asks of the two phases.
class RecordingCommunicator : public RingCommunicator<float> {
 public:
  using RingCommunicator<float>::RingCommunicator;
  void ReduceScatter(float* buffer, const Blocks& blocks) override {
    calls += "r";
    last = blocks;
    RingCommunicator<float>::ReduceScatter(buffer, blocks);
  }
  void Allgather(float* buffer, const Blocks& blocks) override {
    calls += "g";
    RingCommunicator<float>::Allgather(buffer, blocks);
  }
  std::string calls;
  Blocks last;
};

}  // namespace

class CommunicatorTest : public MpiTest {};

TEST_F(CommunicatorTest, EvenBlocksAreContiguousAndDifferByAtMostOne) {
  for (size_t total : {0, 1, 2, 7, 64, 1001}) {
    for (int parts : {1, 2, 3, 4, 7}) {
      const Blocks blocks = Blocks::Even(total, parts);
      ASSERT_EQ(blocks.parts(), parts);
      EXPECT_EQ(blocks.total(), total);
      EXPECT_EQ(blocks.offset[0], 0u);
      for (int i = 0; i < parts; ++i) {
        EXPECT_LE(blocks.largest() - blocks.count[i], 1u);
        if (i == 0) continue;
        EXPECT_EQ(blocks.offset[i], blocks.offset[i - 1] + blocks.count[i - 1]);
        EXPECT_LE(blocks.count[i], blocks.count[i - 1]) << "larger blocks first";
      }
    }
  }
  EXPECT_THROW(Blocks::Even(10, 0), Error);
}

TEST_F(CommunicatorTest, AddIntoAddsElementwise) {
  std::vector<double> target = {1, 2, 3}, source = {10, 20, 30};
  AddInto(target.data(), source.data(), 2);
  EXPECT_EQ(target, (std::vector<double>{11, 22, 3}));
}

TEST_F(CommunicatorTest, AllreduceIsReduceScatterThenAllgatherOverEvenBlocks) {
  RecordingCommunicator comm(MpiGroup::Duplicate(MPI_COMM_WORLD));
  std::vector<float> buffer = Contributions<float>(WorldRank(), 1001);
  comm.Allreduce(buffer.data(), buffer.size());
  EXPECT_EQ(comm.calls, "rg");
  EXPECT_EQ(comm.last.count, Blocks::Even(1001, WorldSize()).count);
  EXPECT_EQ(FirstWrongSum(buffer, WorldSize(), 0, buffer.size()), buffer.size());
  comm.calls.clear();
  comm.Allreduce(buffer.data(), 0);
  EXPECT_EQ(comm.calls, "") << "nothing to reduce, nothing sent";
}

TEST_F(CommunicatorTest, SplitGroupsReduceAmongTheirOwnMembers) {
  // Ranks of equal parity form a group; each group sums its own members' contributions.
  std::shared_ptr<MpiGroup> group = MpiGroup::Split(MPI_COMM_WORLD, WorldRank() % 2, WorldRank());
  RingCommunicator<double> comm(group);
  EXPECT_EQ(comm.size(), (WorldSize() + 1 - WorldRank() % 2) / 2);
  ExpectExactAllreduce(&comm, comm.rank(), comm.size());
}

}  // namespace caffe
