// The explorer: times each candidate on the group and picks the fastest; every member picks the
// same one even when they measure differently (the slowest member's time counts); one
// candidate needs no timing. The rings really reduce, but time is a virtual clock they advance,
// so the outcome does not hang on how loaded the test machine is.
#include <string>
#include <vector>

#include "caffe/parallel/explorer.hpp"
#include "caffe/parallel/ring_communicator.hpp"
#include "caffe/test/mpi_test_main.hpp"

namespace caffe {

namespace {

// This process's virtual time in seconds, read by the explorer through VirtualClock.
double virtual_seconds = 0;
double VirtualClock() { return virtual_seconds; }

// A ring whose allreduce takes 1 ms of virtual time, and 15 ms more on the ranks listed, so it
// is slow wherever one of them takes part; it counts its allreduces.
class SlowRing : public RingCommunicator<float> {
 public:
  SlowRing(std::shared_ptr<MpiGroup> group, std::vector<int> slow_ranks, std::string name)
      : RingCommunicator<float>(std::move(group)), slow_(std::move(slow_ranks)), name_(name) {}
  std::string name() const override { return name_; }
  void Allreduce(float* buffer, size_t count) override {
    ++calls_;
    virtual_seconds += 0.001;
    for (int rank : slow_) {
      if (rank == this->rank()) virtual_seconds += 0.015;
    }
    RingCommunicator<float>::Allreduce(buffer, count);
  }
  int calls() const { return calls_; }

 private:
  std::vector<int> slow_;
  std::string name_;
  int calls_ = 0;
};

}  // namespace

class ExplorerTest : public MpiTest {};

TEST_F(ExplorerTest, PicksTheFastestCandidateOnEveryMember) {
  std::shared_ptr<MpiGroup> group = MpiGroup::Duplicate(MPI_COMM_WORLD);
  SlowRing slow(group, {0}, "slow"), fast(group, {}, "fast");
  for (bool fast_first : {false, true}) {
    std::vector<TwoPhaseCommunicator<float>*> candidates = {&slow, &fast};
    if (fast_first) std::swap(candidates[0], candidates[1]);
    const Explorer<float>::Choice choice =
        Explorer<float>::Pick(candidates, *group, 1000, 3, VirtualClock);
    EXPECT_EQ(candidates[choice.chosen]->name(), "fast");
    EXPECT_EQ(slow.calls(), fast.calls());  // one warm-up run and 3 timed, each
    ASSERT_EQ(choice.seconds.size(), 2u);
    // Every member reports the slowest member's time: rank 0's 16 ms and everyone's 1 ms.
    EXPECT_NEAR(choice.seconds[fast_first ? 1 : 0], 0.016, 1e-9);
    EXPECT_NEAR(choice.seconds[fast_first ? 0 : 1], 0.001, 1e-9);
    const std::string description = Explorer<float>::Describe(candidates, choice);
    EXPECT_NE(description.find("slow "), std::string::npos) << description;
    EXPECT_NE(description.find(" ms"), std::string::npos) << description;
    EXPECT_NE(description.find("fast 1.000 ms"), std::string::npos) << description;
  }
}

TEST_F(ExplorerTest, MembersAgreeWhenOnlyOneOfThemIsSlow) {
  // "a" is slow on the last rank only, "b" on none: every member must pick b, although all but
  // the last measure a and b alike.
  std::shared_ptr<MpiGroup> group = MpiGroup::Duplicate(MPI_COMM_WORLD);
  SlowRing a(group, {WorldSize() - 1}, "a"), b(group, {}, "b");
  const Explorer<float>::Choice choice =
      Explorer<float>::Pick({&a, &b}, *group, 100, 3, VirtualClock);
  EXPECT_EQ(choice.chosen, 1);
  int chosen_on_root = choice.chosen;
  MPI_Bcast(&chosen_on_root, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(choice.chosen, chosen_on_root);
}

TEST_F(ExplorerTest, ATieGoesToTheEarlierCandidate) {
  std::shared_ptr<MpiGroup> group = MpiGroup::Duplicate(MPI_COMM_WORLD);
  SlowRing first(group, {}, "first"), second(group, {}, "second");
  const Explorer<float>::Choice choice =
      Explorer<float>::Pick({&second, &first}, *group, 100, 3, VirtualClock);
  EXPECT_EQ(choice.chosen, 0);
  EXPECT_EQ(choice.seconds[0], choice.seconds[1]);
}

TEST_F(ExplorerTest, ASingleCandidateIsTakenWithoutTiming) {
  std::shared_ptr<MpiGroup> group = MpiGroup::Duplicate(MPI_COMM_WORLD);
  SlowRing only(group, {0}, "only");
  const Explorer<float>::Choice choice =
      Explorer<float>::Pick({&only}, *group, 100, 5, VirtualClock);
  EXPECT_EQ(choice.chosen, 0);
  EXPECT_EQ(only.calls(), 0);
}

}  // namespace caffe
