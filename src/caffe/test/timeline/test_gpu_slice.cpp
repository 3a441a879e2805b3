// GpuSlice: in GPU mode, while the timeline records, each layer's forward and backward also go on
// the track "GPU 0 compute" as the GPU ran them (CUDA events on the compute stream): one GPU
// slice per host slice of a layer, in order and without overlap, each starting no earlier than
// the host issued it and ending before the iteration's step is over; only inside the recorded
// iterations; and no GPU track in CPU mode. Skips, saying so, without a GPU (the CUDA emulator runs
// it in CI).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/net.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/timeline/gpu_slice.hpp"
#include "caffe/timeline/timeline.hpp"

namespace caffe {

namespace {

namespace tl = timeline;

// data -> conv -> relu -> ip -> loss: 5 layers with a forward step, 4 with a backward one (3 where
// conv and relu run fused).
const char kNet[] = R"(
  name: "GpuSliceNet"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 4 dim: 3 dim: 16 dim: 16 } shape { dim: 4 }
      data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
  layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
    convolution_param { num_output: 8 kernel_size: 3 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
  layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
    inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

struct TraceSlice {
  std::string name, category;
  double start, duration;
  int track;
};

// The complete ("X") slices of a timeline file, in file order.
std::vector<TraceSlice> Slices(const std::string& trace) {
  const std::regex event(
      "\\{\"ph\":\"X\",\"cat\":\"([^\"]*)\",\"name\":\"([^\"]*)\",\"pid\":[0-9]+,"
      "\"tid\":([0-9]+),\"ts\":([0-9.]+),\"dur\":([0-9.]+)");
  std::vector<TraceSlice> slices;
  for (std::sregex_iterator it(trace.begin(), trace.end(), event), end; it != end; ++it) {
    slices.push_back(
        {(*it)[2], (*it)[1], std::stod((*it)[4]), std::stod((*it)[5]), std::stoi((*it)[3])});
  }
  return slices;
}

// The id of the track named `name`, or -1.
int TrackId(const std::string& trace, const std::string& name) {
  std::smatch match;
  const std::regex track("\"tid\":([0-9]+),\"args\":\\{\"name\":\"" + name + "\"\\}");
  return std::regex_search(trace, match, track) ? std::stoi(match[1]) : -1;
}

class GpuSliceTest : public ::testing::Test {
 protected:
  GpuSliceTest() : dir_(MakeTempDir("gpu_slice")), path_(dir_.path() + "/trace.json") {}
  ~GpuSliceTest() override {
    tl::Finish();
    Caffe::set_mode(Caffe::CPU);
  }

  // Two forward-backward passes of kNet in `mode`, the timeline recording iterations `first`
  // to `end`; returns the file ("" if none was written).
  std::string Record(Caffe::Brew mode, int first, int end) {
    Caffe::set_mode(mode);
    if (mode == Caffe::GPU) Caffe::SetDevice(0);
    NetParameter param;
    ParseProtoFromText(kNet, "gpu slice net", &param);
    Net<float> net(param);
    tl::Options options;
    options.path = path_;
    options.first_iteration = first;
    options.end_iteration = end;
    tl::Start(options);
    for (int iteration = 0; iteration < 2; ++iteration) {
      tl::SetIteration(iteration);
      tl::Slice step("step", "iteration " + std::to_string(iteration));
      net.ForwardBackward();
    }
    tl::SetIteration(2);
    return tl::Finish() > 0 ? ReadWholeFile(path_) : std::string();
  }

  ScopedTempDir dir_;
  std::string path_;
};

}  // namespace

// How late a device slice may be placed (microseconds; see below).
constexpr double kAnchorSlack = 500;

TEST_F(GpuSliceTest, EachLayerStepHasAGpuSliceAsTheGpuRanIt) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  const std::string trace = Record(Caffe::GPU, 0, 100);
  const int gpu_track = TrackId(trace, "GPU 0 compute");
  ASSERT_GE(gpu_track, 0) << trace;
  std::vector<TraceSlice> host, gpu, steps;
  for (const TraceSlice& slice : Slices(trace)) {
    if (slice.category == "step") steps.push_back(slice);
    if (slice.category != "forward" && slice.category != "backward") continue;
    (slice.track == gpu_track ? gpu : host).push_back(slice);
  }
  ASSERT_EQ(steps.size(), 2u);
  // 2 iterations x (5 forward + up to 4 backward: the data layer has none, and on a GPU conv and
  // relu may run as one fused group, in one backward step).
  ASSERT_GE(host.size(), 16u) << trace;
  ASSERT_EQ(gpu.size(), host.size()) << trace;
  for (size_t i = 0; i < gpu.size(); ++i) {
    SCOPED_TRACE(gpu[i].category + " " + gpu[i].name);
    EXPECT_EQ(gpu[i].name, host[i].name);
    EXPECT_EQ(gpu[i].category, host[i].category);
    EXPECT_GE(gpu[i].duration, 0);
    // Clocks are placed to about a microsecond; the trace rounds to a thousandth of one.
    EXPECT_GE(gpu[i].start, host[i].start - 2);
    if (i > 0) {
      EXPECT_GE(gpu[i].start, gpu[i - 1].start + gpu[i - 1].duration - 2);
    }
    // Device slices are placed through an anchor: the host reads its clock when the wait for a
    // reference event returns, which is after the event by the thread's wake-up time, and a
    // loaded machine (ctest -j 2 on two cores) stretches that to tens of microseconds. So device
    // slices may sit that much late (never early: the bounds above hold), and the end of the
    // step is checked to within half a millisecond, a hundredth of a step here.
    const TraceSlice& step = steps[i < host.size() / 2 ? 0 : 1];
    EXPECT_LE(gpu[i].start + gpu[i].duration, step.start + step.duration + kAnchorSlack);
  }
}

TEST_F(GpuSliceTest, OnlyTheIterationsOfTheWindow) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  const std::string trace = Record(Caffe::GPU, 1, 2);  // iteration 1: half the slices
  const int gpu_track = TrackId(trace, "GPU 0 compute");
  ASSERT_GE(gpu_track, 0) << trace;
  int on_gpu = 0, on_host = 0;
  for (const TraceSlice& slice : Slices(trace)) {
    if (slice.category != "forward" && slice.category != "backward") continue;
    ++(slice.track == gpu_track ? on_gpu : on_host);
  }
  EXPECT_GE(on_host, 8) << trace;
  EXPECT_LE(on_host, 9) << trace;
  EXPECT_EQ(on_gpu, on_host) << trace;
}

TEST_F(GpuSliceTest, InCpuModeThereIsNoGpuTrack) {
  const std::string trace = Record(Caffe::CPU, 0, 100);
  int layer_steps = 0;
  for (const TraceSlice& slice : Slices(trace)) {
    layer_steps += slice.category == "forward" || slice.category == "backward";
  }
  EXPECT_EQ(layer_steps, 18) << trace;
  EXPECT_EQ(trace.find("GPU 0 compute"), std::string::npos) << trace;
}

}  // namespace caffe
