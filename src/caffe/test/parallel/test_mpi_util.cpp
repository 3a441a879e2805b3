// MPI helpers: MpiGroup duplicates and splits keep track of world ranks and return errors
// instead of aborting; MPI_CHECK turns an error into a CommError naming the call, the library's
// message, the rank and the host.
#include <string>
#include <vector>

#include "caffe/parallel/mpi_util.hpp"
#include "caffe/test/mpi_test_main.hpp"

namespace caffe {

class MpiUtilTest : public MpiTest {};

TEST_F(MpiUtilTest, DuplicateKeepsTheWorldsRanks) {
  std::shared_ptr<MpiGroup> group = MpiGroup::Duplicate(MPI_COMM_WORLD);
  EXPECT_EQ(group->rank(), WorldRank());
  EXPECT_EQ(group->size(), WorldSize());
  for (int r = 0; r < WorldSize(); ++r) EXPECT_EQ(group->world_ranks()[r], r);
}

TEST_F(MpiUtilTest, SplitOrdersMembersByKey) {
  // One group, ordered backwards.
  std::shared_ptr<MpiGroup> group = MpiGroup::Split(MPI_COMM_WORLD, 0, WorldSize() - WorldRank());
  EXPECT_EQ(group->rank(), WorldSize() - 1 - WorldRank());
  for (int r = 0; r < WorldSize(); ++r) EXPECT_EQ(group->world_ranks()[r], WorldSize() - 1 - r);
}

TEST_F(MpiUtilTest, AFailedCallIsACommErrorNamingCallRankAndHost) {
  std::shared_ptr<MpiGroup> group = MpiGroup::Duplicate(MPI_COMM_WORLD);
  int value = 0;
  try {
    MPI_CHECK(MPI_Send(&value, 1, MPI_INT, WorldSize() + 5, 0, group->comm()));
    FAIL() << "sending to a rank that does not exist succeeded";
  } catch (const CommError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("MPI_Send"), std::string::npos) << message;
    EXPECT_NE(
        message.find("rank " + std::to_string(WorldRank()) + " of " + std::to_string(WorldSize())),
        std::string::npos)
        << message;
    EXPECT_NE(message.find("on host " + HostName()), std::string::npos) << message;
    EXPECT_NE(message.find("rank"), std::string::npos) << message;
  }
}

TEST_F(MpiUtilTest, TypesAndHostName) {
  EXPECT_EQ(MpiType<float>(), MPI_FLOAT);
  EXPECT_EQ(MpiType<double>(), MPI_DOUBLE);
  EXPECT_FALSE(HostName().empty());
  EXPECT_FALSE(MpiErrorString(MPI_ERR_RANK).empty());
}

}  // namespace caffe
