// lms::Session, what `caffe train|test|time` and caffe.set_lms use: it installs a memory manager
// only when LMS or a budget is asked for on a GPU run (here over the fake device), plans nets only
// with LMS on, says once that the options do nothing on a CPU run, and uninstalls its manager at
// the end unless another session has replaced it.
#include <google/protobuf/text_format.h>

#include <memory>
#include <string>

#include "caffe/lms/session.hpp"
#include "caffe/test/log_counter.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace lms {

namespace {

constexpr size_t kCapacity = size_t(1) << 20;

std::unique_ptr<Net<float>> SmallNet() {
  NetParameter param;
  CHECK(google::protobuf::TextFormat::ParseFromString(
      "name: 'session' "
      "layer { name: 'data' type: 'Input' top: 'data' "
      "        input_param { shape { dim: 2 dim: 3 } } } "
      "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip' "
      "        inner_product_param { num_output: 4 } }",
      &param));
  return std::make_unique<Net<float>>(param);
}

Options LmsEveryBuffer() {
  Options options;
  options.threshold_kb = 0;
  return options;
}

}  // namespace

TEST(LmsSessionTest, NothingAskedForInstallsNothing) {
  std::unique_ptr<Net<float>> net = SmallNet();
  for (int gpu : {-1, 0}) {
    Session session = gpu < 0 ? Session(Options(), -1)
                              : Session(Options(), std::make_unique<FakeDevice>(kCapacity));
    EXPECT_FALSE(session.installed());
    EXPECT_FALSE(session.planning());
    EXPECT_EQ(MemoryManager::Current(), nullptr);
    EXPECT_EQ(session.Plan(net.get(), /*attach=*/false), nullptr);
    EXPECT_EQ(session.StatsLine(), "");
  }
}

TEST(LmsSessionTest, OnACpuRunTheOptionsAreSaidToDoNothingOnce) {
  LogCounter said("apply to GPU runs (-gpu); this run is on the CPU");
  Session session(LmsEveryBuffer(), -1);
  EXPECT_FALSE(session.installed());
  EXPECT_EQ(MemoryManager::Current(), nullptr);
  EXPECT_EQ(said.count, 1);
}

TEST(LmsSessionTest, InstallsItsManagerPlansNetsAndUninstallsAtTheEnd) {
  std::unique_ptr<Net<float>> net = SmallNet();
  {
    Session session(LmsEveryBuffer(), std::make_unique<FakeDevice>(kCapacity));
    ASSERT_TRUE(session.installed());
    EXPECT_TRUE(session.planning());
    ASSERT_NE(MemoryManager::Current(), nullptr);
    std::shared_ptr<Planner<float>> planner = session.Plan(net.get(), /*attach=*/false);
    ASSERT_NE(planner, nullptr);
    EXPECT_EQ(planner->steps().size(), 2 * net->layers().size());
    EXPECT_EQ(session.StatsLine().rfind("[LMS] swapped in 0 bytes", 0), 0u) << session.StatsLine();
  }
  EXPECT_EQ(MemoryManager::Current(), nullptr);
}

TEST(LmsSessionTest, ABudgetAloneInstallsAManagerButPlansNothing) {
  std::unique_ptr<Net<float>> net = SmallNet();
  Options budget_only;
  budget_only.budget = kCapacity / 2;
  Session session(budget_only, std::make_unique<FakeDevice>(kCapacity));
  EXPECT_TRUE(session.installed());
  EXPECT_FALSE(session.planning());
  EXPECT_EQ(MemoryManager::Current()->allocator().budget(), kCapacity / 2);
  EXPECT_EQ(session.Plan(net.get(), /*attach=*/true), nullptr);
}

TEST(LmsSessionTest, ALaterSessionKeepsItsManagerWhenAnEarlierOneEnds) {
  auto first = std::make_unique<Session>(LmsEveryBuffer(), std::make_unique<FakeDevice>(kCapacity));
  const std::shared_ptr<MemoryManager> first_manager = MemoryManager::Current();
  auto second =
      std::make_unique<Session>(LmsEveryBuffer(), std::make_unique<FakeDevice>(kCapacity));
  const std::shared_ptr<MemoryManager> second_manager = MemoryManager::Current();
  EXPECT_NE(first_manager, second_manager);
  first.reset();
  EXPECT_EQ(MemoryManager::Current(), second_manager);
  second.reset();
  EXPECT_EQ(MemoryManager::Current(), nullptr);
}

}  // namespace lms
}  // namespace caffe
