// The timeline's recorder (caffe/timeline/timeline.hpp): nothing kept unless started and inside
// the iteration window; slices nested as their scopes with their args; tracks named after their
// threads; the buffer bounded; an unwritable file named at Start; and a data layer whose
// prefetch thread cannot keep up shows the net's wait for it.
#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/layers/base_data_layer.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/timeline/timeline.hpp"

namespace caffe {
namespace {

namespace tl = timeline;

/// How often `what` occurs in `text`.
int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

/// The value of number field `key` in the event of `text` named `name`, or -1.
double Field(const std::string& text, const std::string& name, const std::string& key) {
  std::smatch match;
  const std::regex event("\\{[^{}]*\"name\":\"" + name + "\"[^{}]*\"" + key + "\":([0-9.]+)");
  return std::regex_search(text, match, event) ? std::stod(match[1]) : -1;
}

class TimelineTest : public ::testing::Test {
 protected:
  TimelineTest() : dir_(MakeTempDir("timeline")), path_(dir_.path() + "/trace.json") {}
  ~TimelineTest() override { tl::Finish(); }

  tl::Options Options(int first = 0, int end = 100) const {
    tl::Options options;
    options.path = path_;
    options.first_iteration = first;
    options.end_iteration = end;
    return options;
  }

  ScopedTempDir dir_;
  std::string path_;
};

TEST_F(TimelineTest, NothingIsKeptBeforeStartOrBeforeTheFirstIteration) {
  EXPECT_FALSE(tl::Recording());
  { tl::Slice slice("test", "before start"); }
  tl::Start(Options());
  EXPECT_TRUE(tl::Started());
  EXPECT_FALSE(tl::Recording());  // set-up, before the first step, is not recorded
  { tl::Slice slice("test", "set-up"); }
  tl::SetIteration(0);
  EXPECT_TRUE(tl::Recording());
  { tl::Slice slice("test", "step work"); }
  EXPECT_GT(tl::Finish(), 0);
  EXPECT_FALSE(tl::Started());
  EXPECT_FALSE(tl::Recording());
  const std::string trace = ReadWholeFile(path_);
  EXPECT_EQ(Count(trace, "\"step work\""), 1) << trace;
  EXPECT_EQ(Count(trace, "before start"), 0) << trace;
  EXPECT_EQ(Count(trace, "set-up"), 0) << trace;
}

TEST_F(TimelineTest, OnlyTheIterationsOfTheWindowAreKept) {
  tl::Start(Options(2, 4));
  for (int iteration = 0; iteration < 6; ++iteration) {
    tl::SetIteration(iteration);
    tl::Slice slice("step", "iteration " + std::to_string(iteration));
  }
  tl::Finish();
  const std::string trace = ReadWholeFile(path_);
  for (int iteration = 0; iteration < 6; ++iteration) {
    EXPECT_EQ(Count(trace, "\"iteration " + std::to_string(iteration) + "\""),
              iteration >= 2 && iteration < 4 ? 1 : 0)
        << iteration << "\n"
        << trace;
  }
  EXPECT_NE(trace.find("\"first_iteration\":2,\"end_iteration\":4"), std::string::npos) << trace;
}

TEST_F(TimelineTest, SlicesNestAsTheirScopesWithTheirArgs) {
  tl::Start(Options());
  tl::SetIteration(0);
  {
    tl::Slice outer("step", "outer");
    outer.Arg("iteration", 0).Arg("type", "Convolution");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    {
      tl::Slice inner("forward", "inner \"quoted\"");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  tl::Finish();
  const std::string trace = ReadWholeFile(path_);
  const double outer_start = Field(trace, "outer", "ts"),
               outer_duration = Field(trace, "outer", "dur");
  const double inner_start = Field(trace, "inner \\\\\"quoted\\\\\"", "ts");
  const double inner_duration = Field(trace, "inner \\\\\"quoted\\\\\"", "dur");
  ASSERT_GE(outer_start, 0) << trace;
  ASSERT_GE(inner_start, 0) << trace;
  EXPECT_GE(outer_duration, 6000 * 0.9);
  EXPECT_GE(inner_duration, 2000 * 0.9);
  EXPECT_GE(inner_start, outer_start + 2000 * 0.9);
  EXPECT_LE(inner_start + inner_duration, outer_start + outer_duration);
  EXPECT_NE(trace.find("\"args\":{\"iteration\":0.000,\"type\":\"Convolution\"}"),
            std::string::npos)
      << trace;
}

TEST_F(TimelineTest, EachThreadHasATrackOfItsName) {
  tl::Start(Options());
  tl::SetIteration(0);
  tl::NameThread("solver");
  { tl::Slice slice("step", "on the solver"); }
  std::thread worker([] {
    tl::NameThread("prefetch data");
    tl::Slice slice("data", "on the worker");
  });
  worker.join();
  const int copies = tl::Track("copies");
  tl::Complete(copies, "copy", "swap in", tl::Now(), 5.0, "bytes", 1024);
  tl::Counter("host memory (MB)", 12.5);
  tl::Finish();
  const std::string trace = ReadWholeFile(path_);
  const std::regex solver_track("\"tid\":([0-9]+),\"args\":\\{\"name\":\"solver\"\\}");
  const std::regex worker_track("\"tid\":([0-9]+),\"args\":\\{\"name\":\"prefetch data\"\\}");
  std::smatch solver, worker_match;
  ASSERT_TRUE(std::regex_search(trace, solver, solver_track)) << trace;
  ASSERT_TRUE(std::regex_search(trace, worker_match, worker_track)) << trace;
  EXPECT_NE(solver[1], worker_match[1]);
  EXPECT_EQ(Field(trace, "on the worker", "tid"), std::stod(worker_match[1]));
  EXPECT_EQ(Field(trace, "swap in", "tid"), copies);
  EXPECT_NE(trace.find("\"args\":{\"bytes\":1024.000}"), std::string::npos) << trace;
  EXPECT_NE(trace.find("\"ph\":\"C\""), std::string::npos) << trace;
  EXPECT_NE(trace.find("\"name\":\"copies\""), std::string::npos) << trace;
}

TEST_F(TimelineTest, TheBufferIsBoundedAndCountsWhatItDropped) {
  tl::Options options = Options();
  options.max_events = 5;
  tl::Start(options);
  tl::SetIteration(0);  // an event: the host memory counter
  for (int i = 0; i < 12; ++i) tl::Slice slice("test", "slice");
  EXPECT_EQ(tl::Finish(), 5);
  const std::string trace = ReadWholeFile(path_);
  EXPECT_EQ(Count(trace, "\"ph\":\"X\""), 4) << trace;
  EXPECT_NE(trace.find("\"dropped_events\":8"), std::string::npos) << trace;
}

TEST_F(TimelineTest, NothingRecordedWritesNoFile) {
  tl::Start(Options(50, 60));
  tl::SetIteration(0);
  { tl::Slice slice("step", "outside"); }
  EXPECT_EQ(tl::Finish(), 0);
  EXPECT_FALSE(FileExists(path_));
}

TEST_F(TimelineTest, AFileThatCannotBeWrittenIsNamedAtStart) {
  tl::Options options = Options();
  options.path = dir_.path() + "/no/such/folder/trace.json";
  try {
    tl::Start(options);
    FAIL() << "Start accepted " << options.path;
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot write the timeline file '" + options.path),
              std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(tl::Started());
  options = Options(5, 5);
  try {
    tl::Start(options);
    FAIL() << "Start accepted iterations 5:5";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("timeline iterations 5:5"), std::string::npos)
        << error.what();
  }
}

// A data layer whose prefetch thread takes kLoad per batch: a net that asks for batches faster
// waits for each.
constexpr auto kLoad = std::chrono::milliseconds(30);

class SlowDataLayer : public BasePrefetchingDataLayer<float> {
 public:
  explicit SlowDataLayer(const LayerParameter& param) : BasePrefetchingDataLayer<float>(param) {}
  ~SlowDataLayer() override { StopInternalThread(); }
  const char* type() const override { return "SlowData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 1; }
  void DataLayerSetUp(const Blobs<float>& bottom, const Blobs<float>& top) override {
    top[0]->Reshape({2, 3});
    for (auto& batch : prefetch_) batch->data_.Reshape({2, 3});
  }

 protected:
  void load_batch(Batch<float>* batch) override {
    std::this_thread::sleep_for(kLoad);
    batch->data_.mutable_cpu_data()[0] = 1;
  }
};

TEST_F(TimelineTest, AStarvedNetWaitsForData) {
  Caffe::set_mode(Caffe::CPU);
  SlowDataLayer layer(ParseLayerParam("name: 'slow' type: 'SlowData' data_param { prefetch: 1 }"));
  Blob<float> data;
  const Blobs<float> bottom, top = {&data};
  layer.SetUp(bottom, top);
  tl::Start(Options());
  for (int iteration = 0; iteration < 4; ++iteration) {
    tl::SetIteration(iteration);
    layer.Forward(bottom, top);
  }
  tl::Finish();
  const std::string trace = ReadWholeFile(path_);
  EXPECT_GE(Count(trace, "\"wait for data\""), 3) << trace;
  EXPECT_GE(Count(trace, "\"load batch\""), 3) << trace;
  EXPECT_GE(Field(trace, "wait for data", "dur"), 1000 * 0.5 * kLoad.count()) << trace;
  EXPECT_NE(trace.find("\"name\":\"prefetch slow\""), std::string::npos) << trace;
}

}  // namespace
}  // namespace caffe
