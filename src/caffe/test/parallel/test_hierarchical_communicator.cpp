// The allreduce each -mode builds (CreateDdlCommunicator), over every topology the world size
// allows: r, m, c, b, p (and n, which is the ring on CPU learners) for 4 = 4, 2x2, 2x1x2, 1x4,
// 1x2x2 and 4x1x1 (for 2 and 3 processes the like): the exact sum for every test length (odd and
// prime ones included), bitwise-identical results everywhere, the stages the mode promises, and
// per-stage timings for -dump_iter.
#include <string>
#include <vector>

#include "caffe/parallel/hierarchical_communicator.hpp"
#include "caffe/test/communicator_test_util.hpp"

namespace caffe {

namespace {

std::vector<std::string> Topologies(int size) {
  switch (size) {
    case 1:
      return {"1"};
    case 2:
      return {"2", "2x1", "1x2", "1x1x2"};
    case 3:
      return {"3", "3x1x1", "1x3", "1x1x3"};
    case 4:
      return {"4", "2x2", "2x1x2", "1x4", "1x2x2", "4x1x1"};
    default:
      return {std::to_string(size)};
  }
}

template <typename Dtype>
std::unique_ptr<HierarchicalCommunicator<Dtype>> Create(const std::string& mode) {
  const DdlOptions options = ParseDdlOptions("-mode " + mode);
  return CreateDdlCommunicator<Dtype>(options, ResolveDdlTopology(options, WorldSize()), false,
                                      4096);
}

}  // namespace

template <typename Dtype>
class HierarchicalCommunicatorTest : public MpiTest {};
TYPED_TEST_SUITE(HierarchicalCommunicatorTest, MpiTestDtypes);

TYPED_TEST(HierarchicalCommunicatorTest, EveryModeAndTopologyGivesTheExactSum) {
  for (const char* letter : {"r", "m", "c", "b", "p", "n"}) {
    for (const std::string& topology : Topologies(WorldSize())) {
      const std::string mode = std::string(letter) + ":" + topology;
      SCOPED_TRACE("-mode " + mode);
      auto comm = Create<TypeParam>(mode);
      EXPECT_EQ(comm->size(), WorldSize());
      ExpectExactAllreduce(comm.get(), WorldRank(), WorldSize());
      ExpectBitwiseIdenticalResults(comm.get(), MPI_COMM_WORLD, 30011);
    }
  }
}

// Each stage's algorithm checks its segments and blocks over every length (their own suites):
// here a few lengths (one segment boundary, shards smaller than a segment) per mode and topology.
TYPED_TEST(HierarchicalCommunicatorTest, CompressionReachesEveryStage) {
  for (const char* letter : {"r", "m", "c", "b"}) {
    for (const std::string& topology : Topologies(WorldSize())) {
      for (const char* compression : {"fp16", "bf16"}) {
        const std::string text =
            "-mode " + std::string(letter) + ":" + topology + " -compress " + compression;
        SCOPED_TRACE(text);
        const DdlOptions options = ParseDdlOptions(text);
        auto comm = CreateDdlCommunicator<TypeParam>(
            options, ResolveDdlTopology(options, WorldSize()), false, 4096);
        ExpectCompressedAllreduceWithinRounding(comm.get(), WorldRank(), WorldSize(),
                                                MPI_COMM_WORLD, options.compression,
                                                {0, 5, 1000, 65537});
      }
    }
  }
}

TYPED_TEST(HierarchicalCommunicatorTest, NoModeIsOneRingOverEveryone) {
  const DdlOptions options = ParseDdlOptions("-dump_iter 0");
  auto comm = CreateDdlCommunicator<TypeParam>(options, ResolveDdlTopology(options, WorldSize()),
                                               false, 4096);
  ASSERT_EQ(comm->stages().size(), WorldSize() > 1 ? 1u : 0u);
  if (WorldSize() > 1) {
    EXPECT_EQ(comm->name(), "ring");
  }
  ExpectExactAllreduce(comm.get(), WorldRank(), WorldSize());
}

TYPED_TEST(HierarchicalCommunicatorTest, StagesFollowTheModeAndSkipDimensionsOfOne) {
  if (WorldSize() != 4) GTEST_SKIP() << "needs 4 processes";
  auto ring = Create<TypeParam>("r:2x2");
  ASSERT_EQ(ring->stages().size(), 2u);
  EXPECT_EQ(ring->name(), "ring|ring");
  EXPECT_EQ(ring->stages()[0].dim, 0);
  EXPECT_EQ(ring->stages()[1].dim, 1);
  EXPECT_EQ(Create<TypeParam>("m:2x1x2")->name(), "mpi|mpi");
  EXPECT_EQ(Create<TypeParam>("m:2x1x2")->stages()[1].dim, 2);
  EXPECT_EQ(Create<TypeParam>("c:1x4")->name(), "rcs");
  // b on CPU learners: the ring inside a host, a measured choice across hosts.
  auto enhanced = Create<TypeParam>("b:2x2");
  ASSERT_EQ(enhanced->stages().size(), 2u);
  EXPECT_EQ(enhanced->stages()[0].comm->name(), "ring");
  EXPECT_NE(enhanced->stages()[1].why.find("measured"), std::string::npos)
      << enhanced->stages()[1].why;
  auto explored = Create<TypeParam>("p:2x2");
  for (const auto& stage : explored->stages()) {
    EXPECT_NE(stage.why.find("ring"), std::string::npos) << stage.why;
    EXPECT_NE(stage.why.find("rcs"), std::string::npos) << stage.why;
    EXPECT_NE(stage.why.find("mpi"), std::string::npos) << stage.why;
  }
}

TYPED_TEST(HierarchicalCommunicatorTest, KeepsTimePerStageUntilReset) {
  if (WorldSize() != 4) GTEST_SKIP() << "needs 4 processes";
  auto comm = Create<TypeParam>("r:2x2");
  std::vector<TypeParam> buffer(100000, TypeParam(1));
  comm->Allreduce(buffer.data(), buffer.size());
  ASSERT_EQ(comm->stage_seconds().size(), 2u);
  EXPECT_GT(comm->stage_seconds()[0], 0);
  EXPECT_GT(comm->stage_seconds()[1], 0);
  EXPECT_EQ(buffer[99999], 4);
  comm->ResetTimes();
  EXPECT_EQ(comm->stage_seconds()[0], 0);
}

}  // namespace caffe
