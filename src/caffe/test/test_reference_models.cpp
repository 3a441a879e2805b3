// The files Caffe users already have: every prototxt of BVLC's examples and models must parse, the
// nets whose layers we provide must build, and the setup log BVLC printed for a net ("Top shape",
// "Memory required for data") must be the one we print.
#include <glog/logging.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/net.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

std::vector<std::string> PrototxtsUnder(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".prototxt") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool IsSolverFile(const std::string& path) {
  return std::filesystem::path(path).filename().string().find("solver") != std::string::npos;
}

// Captures the messages Net logs while it is set up.
class SetupLogSink : public google::LogSink {
 public:
  void send(google::LogSeverity, const char*, const char*, int, const struct ::tm*,
            const char* message, size_t message_len) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string line(message, message_len);
    if (line.rfind("Top shape:", 0) == 0 || line.rfind("Memory required for data:", 0) == 0) {
      lines_.push_back(line);
    }
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

// The "Top shape" and "Memory required" lines of a BVLC glog file, up to the first "Network
// initialization done." (the fixtures' logs end there).
std::vector<std::string> BvlcSetupLines(const std::string& log_file) {
  std::vector<std::string> lines;
  std::ifstream in(log_file);
  const std::regex pattern(R"(\] ((Top shape|Memory required for data):.*)$)");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_search(line, match, pattern)) lines.push_back(match[1]);
    if (line.find("Network initialization done.") != std::string::npos) break;
  }
  return lines;
}

std::vector<std::string> OurSetupLines(const std::string& prototxt, Phase phase) {
  SetupLogSink sink;
  const int saved_level = FLAGS_minloglevel;
  FLAGS_minloglevel = 0;
  google::AddLogSink(&sink);
  { Net<float> net(prototxt, phase); }
  google::RemoveLogSink(&sink);
  FLAGS_minloglevel = saved_level;
  return sink.lines();
}

}  // namespace

TEST(ReferenceModelsTest, EveryReferencePrototxtParses) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::vector<std::string> files = PrototxtsUnder(SharedDir() + "/reference");
  ASSERT_GT(files.size(), 50u);
  for (const std::string& file : files) {
    if (IsSolverFile(file)) {
      SolverParameter solver;
      EXPECT_NO_THROW(ReadSolverParamsFromTextFile(file, &solver)) << file;
    } else {
      NetParameter net;
      EXPECT_NO_THROW(ReadNetParamsFromTextFile(file, &net)) << file;
    }
  }
}

// A net builds when its layer types are all registered; a data layer whose dataset (or mean
// file) is not on this machine may stop it, but only with an error naming that file.
TEST(ReferenceModelsTest, EveryReferenceNetBuilds) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::vector<std::string> known = LayerRegistry<float>::LayerTypeList();
  int built = 0;
  for (const std::string& file : PrototxtsUnder(SharedDir() + "/reference")) {
    if (IsSolverFile(file)) continue;
    NetParameter param;
    ReadNetParamsFromTextFile(file, &param);
    bool all_known = true;  // every type is now known: an unknown one fails the build below
    std::vector<std::string> sources;
    for (const LayerParameter& layer : param.layer()) {
      all_known &= std::find(known.begin(), known.end(), layer.type()) != known.end();
      if (layer.has_data_param()) sources.push_back(layer.data_param().source());
      if (layer.has_image_data_param()) sources.push_back(layer.image_data_param().source());
      if (layer.transform_param().has_mean_file()) {
        sources.push_back(layer.transform_param().mean_file());
      }
    }
    EXPECT_TRUE(all_known) << file << " uses a layer type this build lacks";
    // A net whose layers are included by stage is built as its solver would build it: once per
    // stage (e.g. mnist_autoencoder's test-on-train and test-on-test).
    std::vector<std::string> stages;
    for (const LayerParameter& layer : param.layer()) {
      for (const NetStateRule& rule : layer.include()) {
        for (const std::string& stage : rule.stage()) {
          if (std::find(stages.begin(), stages.end(), stage) == stages.end()) {
            stages.push_back(stage);
          }
        }
      }
    }
    std::vector<std::pair<Phase, std::vector<std::string>>> states = {{TRAIN, {}}};
    if (stages.empty()) states.push_back({TEST, {}});
    for (const std::string& stage : stages) states.push_back({TEST, {stage}});
    for (const auto& [phase, state_stages] : states) {
      try {
        Net<float> net(file, phase, 0, &state_stages);
        ++built;
      } catch (const Error& e) {
        bool names_a_source = false;
        for (const std::string& source : sources) {
          names_a_source |= std::string(e.what()).find(source) != std::string::npos;
        }
        EXPECT_TRUE(names_a_source) << file << " (phase " << phase << "): " << e.what();
      }
    }
  }
  EXPECT_GT(built, 40);
}

struct SetupLogCase {
  std::string log;       // under fixtures/setup_logs
  std::string prototxt;  // under the shared folder
  Phase phase;
  // The log ends where a recurrent layer's inner net finished setting up, before the outer net
  // did: ours must start with it.
  bool log_ends_inside = false;
};

class SetupLogTest : public ::testing::TestWithParam<SetupLogCase> {};

TEST_P(SetupLogTest, TopShapesAndMemoryMatchBvlcsLog) {
  CAFFE_REQUIRE_SHARED_DIR();
  const SetupLogCase& c = GetParam();
  const std::vector<std::string> expected =
      BvlcSetupLines(SharedDir() + "/fixtures/setup_logs/" + c.log);
  ASSERT_GT(expected.size(), 4u) << c.log;
  const std::vector<std::string> ours = OurSetupLines(SharedDir() + "/" + c.prototxt, c.phase);
  for (size_t i = 0; i < std::min(ours.size(), expected.size()); ++i) {
    ASSERT_EQ(ours[i], expected[i]) << c.log << ": first difference at setup line " << i;
  }
  if (c.log_ends_inside) {
    EXPECT_GT(ours.size(), expected.size()) << c.log;
  } else {
    EXPECT_EQ(ours.size(), expected.size()) << c.log;
  }
}

INSTANTIATE_TEST_SUITE_P(
    BvlcLogs, SetupLogTest,
    ::testing::Values(
        SetupLogCase{"bvlc_alexnet_deploy.log",
                     "reference/bvlc/models/bvlc_alexnet/deploy.prototxt", TRAIN},
        SetupLogCase{"bvlc_reference_caffenet_deploy.log",
                     "reference/bvlc/models/bvlc_reference_caffenet/deploy.prototxt", TRAIN},
        SetupLogCase{"bvlc_googlenet_deploy.log",
                     "reference/bvlc/models/bvlc_googlenet/deploy.prototxt", TRAIN},
        SetupLogCase{"lenet_train_test_input.log",
                     "fixtures/setup_logs/lenet_train_test_input.prototxt", TRAIN},
        SetupLogCase{"golden_lenet.log", "fixtures/golden/lenet/net.prototxt", TEST},
        SetupLogCase{"golden_cifar10_quick.log", "fixtures/golden/cifar10_quick/net.prototxt",
                     TEST},
        SetupLogCase{"golden_caffenet_small.log", "fixtures/golden/caffenet_small/net.prototxt",
                     TEST},
        SetupLogCase{"golden_googlenet_small.log", "fixtures/golden/googlenet_small/net.prototxt",
                     TEST},
        SetupLogCase{"golden_layerzoo.log", "fixtures/golden/layerzoo/net.prototxt", TEST, true},
        // Published nets, run as BVLC ran them (reference/published/INDEX.md).
        SetupLogCase{"../../reference/published/resnet50/bvlc_setup.log",
                     "reference/published/resnet50/ResNet-50-deploy.prototxt", TRAIN},
        SetupLogCase{"../../reference/published/squeezenet_v1.0/bvlc_setup.log",
                     "reference/published/squeezenet_v1.0/deploy.batch1.prototxt", TRAIN},
        SetupLogCase{"../../reference/published/squeezenet_v1.1/bvlc_setup.log",
                     "reference/published/squeezenet_v1.1/deploy.batch1.prototxt", TRAIN},
        SetupLogCase{"../../reference/published/mobilenet_v1/bvlc_setup.log",
                     "reference/published/mobilenet_v1/mobilenet_deploy.prototxt", TRAIN},
        SetupLogCase{"../../reference/published/vgg16_v1/bvlc_setup.log",
                     "reference/published/vgg16_v1/VGG_ILSVRC_16_layers_deploy.batch1.prototxt",
                     TRAIN},
        SetupLogCase{"../../reference/published/caffenet_v0/bvlc_setup.log",
                     "reference/published/caffenet_v0/imagenet_deploy.batch1.prototxt", TRAIN},
        SetupLogCase{"../../reference/published/agenet_v1/bvlc_setup.log",
                     "reference/published/agenet_v1/train_val_test_fold_is_0.input.prototxt",
                     TRAIN},
        SetupLogCase{"../../reference/published/agenet_v1/bvlc_setup.deploy.log",
                     "reference/published/agenet_v1/deploy.prototxt", TRAIN},
        SetupLogCase{"../../reference/published/fcn8s/bvlc_setup.log",
                     "reference/published/fcn8s/deploy.prototxt", TRAIN},
        SetupLogCase{"../../reference/published/inception_v3/bvlc_setup.log",
                     "reference/published/inception_v3/deploy_inception-v3.prototxt", TRAIN}),
    [](const ::testing::TestParamInfo<SetupLogCase>& info) {
      // The prototxt's folder and file name, as a test name.
      std::string name = info.param.prototxt;
      name = name.substr(0, name.rfind('.'));
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

}  // namespace caffe
