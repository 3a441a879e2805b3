// The model zoo in models/: every folder has its deploy net, train_val net, solver and readme;
// every net builds (train_val in both phases, its data layers replaced by Input layers of a small
// batch); our nets keep the published layer names and weight shapes; the generated prototxts are
// what models/generate_models.py writes; scripts/download_model_binary.py verifies what it
// downloads; and the 3-D U-Net learns on synthetic volumes.
// Legend for volumes: N volumes, C channels, D/H/W depth/height/width.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/net.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/test/caffe_tool_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = SourceDir();
const fs::path kModelsDir = kSourceDir / "models";
const char* const kModelFiles[] = {"deploy.prototxt", "train_val.prototxt", "solver.prototxt",
                                   "readme.md"};
// The models we ship; the BVLC ones come with released weights.
const std::set<std::string> kExpectedModels = {"bvlc_alexnet",
                                               "bvlc_reference_caffenet",
                                               "bvlc_googlenet",
                                               "resnet50",
                                               "vgg16",
                                               "squeezenet_v1.1",
                                               "unet3d",
                                               "bvlc_reference_rcnn_ilsvrc13",
                                               "finetune_flickr_style"};
const std::set<std::string> kModelsWithWeights = {"bvlc_alexnet", "bvlc_reference_caffenet",
                                                  "bvlc_googlenet", "bvlc_reference_rcnn_ilsvrc13",
                                                  "finetune_flickr_style"};
// Released as a deploy net only (R-CNN was fine-tuned outside Caffe's solvers).
const std::set<std::string> kDeployOnlyModels = {"bvlc_reference_rcnn_ilsvrc13"};
const std::set<std::string> kDataLayerTypes = {"Data", "ImageData", "HDF5Data"};
constexpr int kBatch = 2;

std::vector<std::string> ModelFolders() {
  std::vector<std::string> folders;
  for (const auto& entry : fs::directory_iterator(kModelsDir)) {
    if (entry.is_directory()) folders.push_back(entry.path().filename().string());
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

std::string ModelFile(const std::string& model, const std::string& file) {
  return (kModelsDir / model / file).string();
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

NetParameter ReadNet(const std::string& path) {
  NetParameter param;
  ReadNetParamsFromTextFile(path, &param);
  return param;
}

// The key: value lines between the first two '---' lines of a readme; empty if there is none.
std::map<std::string, std::string> FrontMatter(const std::string& readme) {
  std::map<std::string, std::string> fields;
  std::istringstream in(ReadText(readme));
  std::string line;
  if (!std::getline(in, line) || line != "---") return fields;
  while (std::getline(in, line) && line != "---") {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    fields[line.substr(0, colon)] = value;
  }
  return fields;
}

// The shape of the deploy net's Input layer ("data").
std::vector<int> DeployInputShape(const std::string& model) {
  const NetParameter deploy = ReadNet(ModelFile(model, "deploy.prototxt"));
  for (const LayerParameter& layer : deploy.layer()) {
    if (layer.type() == "Input") {
      const BlobShape& shape = layer.input_param().shape(0);
      return std::vector<int>(shape.dim().begin(), shape.dim().end());
    }
  }
  ADD_FAILURE() << model << "/deploy.prototxt has no Input layer";
  return {};
}

void SetShape(const std::vector<int>& dims, BlobShape* shape) {
  shape->clear_dim();
  for (int dim : dims) shape->add_dim(dim);
}

// The train_val net with each data layer replaced by an Input layer of the same name, tops and
// include rules, and `batch` rows: top 0 (the data) has the deploy net's input shape; top 1 (the
// labels) has one label per image for image data (Data, ImageData) and one per voxel (the data's
// shape with one channel) for HDF5 data, which here holds segmentation volumes.
NetParameter WithInputLayers(const NetParameter& train_val, std::vector<int> data_shape,
                             int batch) {
  data_shape[0] = batch;
  NetParameter param = train_val;
  for (LayerParameter& layer : *param.mutable_layer()) {
    if (!kDataLayerTypes.count(layer.type())) continue;
    if (layer.transform_param().has_crop_size()) {
      EXPECT_EQ(layer.transform_param().crop_size(), data_shape.back())
          << "layer " << layer.name() << " crops to another size than the deploy net's input";
    }
    std::vector<int> label_shape = {batch};
    if (layer.type() == "HDF5Data") {
      label_shape = data_shape;
      label_shape[1] = 1;
    }
    LayerParameter input;
    input.set_name(layer.name());
    input.set_type("Input");
    *input.mutable_top() = layer.top();
    *input.mutable_include() = layer.include();
    *input.mutable_exclude() = layer.exclude();
    for (int i = 0; i < layer.top_size(); ++i) {
      SetShape(i == 0 ? data_shape : label_shape, input.mutable_input_param()->add_shape());
    }
    layer = input;
  }
  return param;
}

// The deploy net with its input batch set to `batch`.
NetParameter DeployWithBatch(const std::string& model, int batch) {
  NetParameter param = ReadNet(ModelFile(model, "deploy.prototxt"));
  for (LayerParameter& layer : *param.mutable_layer()) {
    if (layer.type() == "Input") layer.mutable_input_param()->mutable_shape(0)->set_dim(0, batch);
  }
  return param;
}

NetParameter WithPhase(NetParameter param, Phase phase) {
  param.mutable_state()->set_phase(phase);
  return param;
}

// Layer name -> the shapes of its learned blobs, for the layers that have any.
std::map<std::string, std::vector<std::string>> LearnedShapes(const Net<float>& net) {
  std::map<std::string, std::vector<std::string>> shapes;
  for (size_t i = 0; i < net.layers().size(); ++i) {
    for (const auto& blob : net.layers()[i]->blobs()) {
      shapes[net.layer_names()[i]].push_back(blob->shape_string());
    }
  }
  return shapes;
}

bool HavePython3() { return RunCommand("python3 --version").exit_code == 0; }

}  // namespace

TEST(ModelsTest, EveryModelFolderHasItsFourFiles) {
  const std::vector<std::string> folders = ModelFolders();
  for (const std::string& expected : kExpectedModels) {
    EXPECT_TRUE(std::count(folders.begin(), folders.end(), expected)) << "models/" << expected;
  }
  for (const std::string& model : folders) {
    for (const char* file : kModelFiles) {
      const bool expected = !kDeployOnlyModels.count(model) ||
                            std::string(file) == "deploy.prototxt" ||
                            std::string(file) == "readme.md";
      EXPECT_EQ(fs::is_regular_file(ModelFile(model, file)), expected)
          << "models/" << model << "/" << file;
    }
  }
}

TEST(ModelsTest, EveryPrototxtParsesAndEverySolverNamesItsTrainVal) {
  for (const std::string& model : ModelFolders()) {
    for (const auto& entry : fs::directory_iterator(kModelsDir / model)) {
      const std::string path = entry.path().string();
      if (entry.path().extension() != ".prototxt") continue;
      if (entry.path().filename().string().find("solver") == std::string::npos) {
        NetParameter net;
        EXPECT_NO_THROW(ReadNetParamsFromTextFile(path, &net)) << path;
        continue;
      }
      SolverParameter solver;
      ASSERT_NO_THROW(ReadSolverParamsFromTextFile(path, &solver)) << path;
      // Solvers run from the repository root, as BVLC's.
      EXPECT_EQ(solver.net(), "models/" + model + "/train_val.prototxt") << path;
      EXPECT_TRUE(fs::is_regular_file(kSourceDir / solver.net())) << path;
      EXPECT_EQ(solver.snapshot_prefix().rfind("models/" + model + "/", 0), 0u) << path;
    }
  }
}

TEST(ModelsTest, ReadmesHaveTheirFrontMatter) {
  const std::regex sha1(R"([0-9a-f]{40})");
  for (const std::string& model : ModelFolders()) {
    const std::string readme = ModelFile(model, "readme.md");
    const std::map<std::string, std::string> fields = FrontMatter(readme);
    ASSERT_FALSE(fields.empty()) << readme << " has no front matter block";
    EXPECT_FALSE(fields.count("name") == 0 || fields.at("name").empty()) << readme;
    EXPECT_FALSE(fields.count("license") == 0 || fields.at("license").empty()) << readme;
    const bool has_weights = fields.count("caffemodel_url") > 0;
    EXPECT_EQ(has_weights, kModelsWithWeights.count(model) > 0) << readme;
    if (!has_weights) continue;
    EXPECT_EQ(fields.count("caffemodel") ? fields.at("caffemodel") : "", model + ".caffemodel")
        << readme;
    EXPECT_TRUE(fields.count("sha1") && std::regex_match(fields.at("sha1"), sha1)) << readme;
    EXPECT_EQ(fields.at("caffemodel_url"),
              "http://dl.caffe.berkeleyvision.org/" + model + ".caffemodel")
        << readme;
  }
}

// The URLs and SHA-1s are the ones in the reference README's table of BVLC's readmes.
TEST(ModelsTest, BvlcWeightsMatchTheReferenceTable) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::string table = ReadText(SharedDir() + "/reference/README.md");
  for (const std::string& model : kModelsWithWeights) {
    const std::map<std::string, std::string> fields = FrontMatter(ModelFile(model, "readme.md"));
    const std::string row =
        "| " + model + " | " + fields.at("caffemodel_url") + " | " + fields.at("sha1") + " |";
    EXPECT_NE(table.find(row), std::string::npos) << "no row " << row;
  }
}

TEST(ModelsTest, BvlcPrototxtsAreBvlcsFiles) {
  CAFFE_REQUIRE_SHARED_DIR();
  for (const std::string& model : kModelsWithWeights) {
    for (const auto& entry : fs::directory_iterator(kModelsDir / model)) {
      if (entry.path().extension() != ".prototxt") continue;
      const std::string reference =
          SharedDir() + "/reference/bvlc/models/" + model + "/" + entry.path().filename().string();
      EXPECT_EQ(ReadText(entry.path().string()), ReadText(reference)) << entry.path();
    }
  }
}

TEST(ModelsTest, DeployNetsBuildAsTheyAre) {
  for (const std::string& model : ModelFolders()) {
    SCOPED_TRACE(model);
    NetParameter param = ReadNet(ModelFile(model, "deploy.prototxt"));
    std::unique_ptr<Net<float>> net;
    ASSERT_NO_THROW(net.reset(new Net<float>(WithPhase(param, TEST))));
    EXPECT_EQ(net->num_inputs(), 1);
    EXPECT_EQ(net->num_outputs(), 1);
    EXPECT_EQ(net->output_blobs()[0]->shape(0), DeployInputShape(model)[0]);
  }
}

// Built in both phases with Input layers for the data, and with the deploy net's learned layers,
// so that the weights it trains load into the deploy net by name.
TEST(ModelsTest, TrainValNetsBuildInBothPhasesWithTheDeployNetsWeights) {
  for (const std::string& model : ModelFolders()) {
    if (kDeployOnlyModels.count(model)) continue;
    SCOPED_TRACE(model);
    const NetParameter train_val = WithInputLayers(ReadNet(ModelFile(model, "train_val.prototxt")),
                                                   DeployInputShape(model), kBatch);
    for (Phase phase : {TRAIN, TEST}) {
      std::unique_ptr<Net<float>> net;
      ASSERT_NO_THROW(net.reset(new Net<float>(WithPhase(train_val, phase)))) << "phase " << phase;
      int losses = 0, accuracies = 0;
      for (const auto& layer : net->layers()) {
        const std::string type = layer->type();
        losses += type.size() >= 4 && type.compare(type.size() - 4, 4, "Loss") == 0;
        accuracies += type == "Accuracy";
      }
      EXPECT_GT(losses, 0) << "phase " << phase;
      // Accuracy is measured on the validation data only.
      EXPECT_EQ(accuracies > 0, phase == TEST) << "phase " << phase;
      if (phase == TRAIN) continue;
      // Every learned layer of the deploy net; the train_val may have more (GoogLeNet's
      // auxiliary classifiers).
      Net<float> deploy(WithPhase(DeployWithBatch(model, kBatch), TEST));
      const auto train_val_shapes = LearnedShapes(*net);
      for (const auto& [layer, shapes] : LearnedShapes(deploy)) {
        EXPECT_TRUE(train_val_shapes.count(layer)) << "layer " << layer;
        if (train_val_shapes.count(layer)) {
          EXPECT_EQ(train_val_shapes.at(layer), shapes) << "layer " << layer;
        }
      }
    }
  }
}

// Published weights load into our nets by layer name: the learned layers and their blob shapes
// are those of the authors' own Caffe definitions.
TEST(ModelsTest, OurNetsHaveThePublishedLayerNamesAndWeightShapes) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::map<std::string, std::string> published = {
      {"resnet50", "reference/published/resnet50/ResNet-50-deploy.prototxt"},
      {"squeezenet_v1.1", "reference/published/squeezenet_v1.1/deploy.batch1.prototxt"},
      {"vgg16", "reference/published/vgg16_v1/VGG_ILSVRC_16_layers_deploy.batch1.prototxt"}};
  for (const auto& [model, file] : published) {
    SCOPED_TRACE(model);
    Net<float> theirs(SharedDir() + "/" + file, TEST);
    Net<float> ours(WithPhase(DeployWithBatch(model, 1), TEST));
    EXPECT_EQ(LearnedShapes(ours), LearnedShapes(theirs));
    EXPECT_EQ(ours.output_blobs()[0]->shape(), theirs.output_blobs()[0]->shape());
  }
}

// Fine-tuning (`caffe train -weights bvlc_reference_caffenet.caffemodel`) fills every layer of
// the Flickr Style net but its new classifier from CaffeNet's weights, by name and shape.
TEST(ModelsTest, FlickrStyleFineTunesFromCaffeNetsLayers) {
  Net<float> caffenet(WithPhase(DeployWithBatch("bvlc_reference_caffenet", 1), TEST));
  Net<float> flickr(WithPhase(DeployWithBatch("finetune_flickr_style", 1), TEST));
  auto caffenet_shapes = LearnedShapes(caffenet);
  auto flickr_shapes = LearnedShapes(flickr);
  ASSERT_EQ(caffenet_shapes.erase("fc8"), 1u);
  ASSERT_EQ(flickr_shapes.at("fc8_flickr"),
            (std::vector<std::string>{"20 4096 (81920)", "20 (20)"}));
  flickr_shapes.erase("fc8_flickr");
  EXPECT_EQ(flickr_shapes, caffenet_shapes);
}

// Padded convolutions, and a Crop after each up-convolution: the scores have the input's size
// for sizes that do not halve evenly, too.
TEST(ModelsTest, UNetScoresHaveTheInputSizeForEvenAndOddSizes) {
  NetParameter param = WithPhase(ReadNet(ModelFile("unet3d", "deploy.prototxt")), TEST);
  Net<float> net(param);
  EXPECT_EQ(net.blob_by_name("prob")->shape(), std::vector<int>({1, 3, 64, 64, 64}));
  for (const std::vector<int>& shape :
       {std::vector<int>{1, 1, 8, 8, 8}, std::vector<int>{2, 1, 13, 17, 22}}) {
    net.input_blobs()[0]->Reshape(shape);
    net.Reshape();
    EXPECT_EQ(net.blob_by_name("prob")->shape(),
              std::vector<int>({shape[0], 3, shape[2], shape[3], shape[4]}));
  }
}

TEST(ModelsTest, GeneratedPrototxtsAreWhatTheGeneratorWrites) {
  if (!HavePython3()) GTEST_SKIP() << "python3 not found";
  const CommandResult result =
      RunCommand("python3 " + (kModelsDir / "generate_models.py").string() + " --check");
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

// The download script against a local file (file:// URL): a good download is kept, a second run
// skips it, a bad SHA-1 deletes the download and fails, an unreachable URL fails clearly.
TEST(ModelsTest, DownloadScriptVerifiesTheSha1) {
  if (!HavePython3()) GTEST_SKIP() << "python3 not found";
  const std::string dir = MakeTempDir("download_model");
  const std::string weights = dir + "/served.caffemodel";
  WriteText(weights, "not really weights\n");
  const std::string good_sha1 = "48eba30c5d2b63f8594dd0845d3d180c78c66fae";  // of that text
  const std::string model = dir + "/model";
  fs::create_directory(model);
  auto write_readme = [&](const std::string& url, const std::string& sha1) {
    std::string readme = "---\nname: test\ncaffemodel: test.caffemodel\n";
    readme += "caffemodel_url: " + url + "\n";
    readme += "license: unrestricted\nsha1: " + sha1 + "\n---\n";
    WriteText(model + "/readme.md", readme);
  };
  const std::string script =
      "python3 " + (kSourceDir / "scripts" / "download_model_binary.py").string() + " " + model;
  const std::string target = model + "/test.caffemodel";

  write_readme("file://" + weights, good_sha1);
  CommandResult result = RunCommand(script);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(ReadText(target), "not really weights\n");
  result = RunCommand(script);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("already present"), std::string::npos) << result.output;

  fs::remove(target);
  write_readme("file://" + weights, std::string(40, '0'));
  result = RunCommand(script);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(good_sha1), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(target));
  EXPECT_FALSE(fs::exists(target + ".part"));

  write_readme("file://" + dir + "/missing.caffemodel", good_sha1);
  result = RunCommand(script);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("missing.caffemodel"), std::string::npos) << result.output;
  EXPECT_FALSE(fs::exists(target));
}

namespace {

constexpr int kVolumeSize = 24;   // D = H = W; three poolings leave 3 at the bottom
constexpr int kUnlabelled = 255;  // the train_val's ignore_label

// `count` volumes (N, 1, D, H, W) of Gaussian noise holding a bright ball (class 1) and a dark
// box (class 2) at random places, background class 0. Only every other z-slice is labelled, the
// rest carry kUnlabelled, like the paper's sparsely annotated volumes.
void WriteVolumes(const std::string& path, int count, unsigned seed) {
  const int size = kVolumeSize;
  Blob<float> data({count, 1, size, size, size});
  Blob<float> label({count, 1, size, size, size});
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.3f);
  std::uniform_int_distribution<int> center(7, size - 8);
  std::uniform_int_distribution<int> radius(5, 7);
  std::uniform_int_distribution<int> corner(1, size - 11);
  std::uniform_int_distribution<int> side(8, 10);
  float* values = data.mutable_cpu_data();
  float* labels = label.mutable_cpu_data();
  for (int n = 0; n < count; ++n) {
    const int cz = center(rng), cy = center(rng), cx = center(rng), r = radius(rng);
    const int bz = corner(rng), by = corner(rng), bx = corner(rng), s = side(rng);
    for (int z = 0; z < size; ++z) {
      for (int y = 0; y < size; ++y) {
        for (int x = 0; x < size; ++x) {
          const int i = (((n * size) + z) * size + y) * size + x;
          int cls = 0;
          if ((z - cz) * (z - cz) + (y - cy) * (y - cy) + (x - cx) * (x - cx) <= r * r) cls = 1;
          if (z >= bz && z < bz + s && y >= by && y < by + s && x >= bx && x < bx + s) cls = 2;
          values[i] = noise(rng) + (cls == 1 ? 1.f : cls == 2 ? -1.f : 0.f);
          labels[i] = z % 2 == 0 ? cls : kUnlabelled;
        }
      }
    }
  }
  Hdf5File file(path, H5F_ACC_TRUNC);
  hdf5_save_nd_dataset(file.id(), "data", data);
  hdf5_save_nd_dataset(file.id(), "label", label);
}

float Mean(const std::vector<float>& values, size_t begin, size_t end) {
  float sum = 0;
  for (size_t i = begin; i < end; ++i) sum += values[i];
  return sum / (end - begin);
}

}  // namespace

// models/unet3d/train_val.prototxt as it is but with an eighth of the channels (so that it runs
// in seconds), reading generated volumes from HDF5 files: its loss falls within 30 SGD steps, and
// the test phase then tells objects from the background.
TEST(ModelsTest, UNetLossFallsOnSyntheticVolumes) {
  Caffe::set_mode(Caffe::CPU);
  Caffe::set_random_seed(1701);
  const std::string dir = MakeTempDir("unet3d");
  WriteVolumes(dir + "/train.h5", 16, 1);
  WriteVolumes(dir + "/test.h5", 2, 2);
  WriteText(dir + "/train.txt", dir + "/train.h5\n");
  WriteText(dir + "/test.txt", dir + "/test.h5\n");

  NetParameter net_param = ReadNet(ModelFile("unet3d", "train_val.prototxt"));
  for (LayerParameter& layer : *net_param.mutable_layer()) {
    if (layer.type() == "HDF5Data") {
      const bool train = layer.include(0).phase() == TRAIN;
      layer.mutable_hdf5_data_param()->set_source(dir + (train ? "/train.txt" : "/test.txt"));
      if (!train) layer.mutable_hdf5_data_param()->set_batch_size(2);  // both test volumes
    }
    if (layer.type() == "Convolution" || layer.type() == "Deconvolution") {
      ConvolutionParameter* conv = layer.mutable_convolution_param();
      if (conv->num_output() % 8 == 0) conv->set_num_output(conv->num_output() / 8);
    }
    // With the default running averages (0.999) the TEST phase would normalise with statistics
    // still dominated by the first, untrained steps.
    if (layer.type() == "BatchNorm") {
      layer.mutable_batch_norm_param()->set_moving_average_fraction(0.5f);
    }
  }
  constexpr int kSteps = 30;
  SolverParameter solver_param;
  *solver_param.mutable_net_param() = net_param;
  solver_param.set_type("SGD");
  solver_param.set_base_lr(0.05f);
  solver_param.set_momentum(0.9f);
  solver_param.set_lr_policy("fixed");
  solver_param.set_max_iter(kSteps);
  solver_param.set_display(0);
  solver_param.set_random_seed(1701);
  solver_param.set_snapshot_after_train(false);
  std::unique_ptr<Solver<float>> solver(SolverRegistry<float>::CreateSolver(solver_param));
  ASSERT_EQ(solver->net()->blob_by_name("enc0_conv1")->shape(1), 4);
  ASSERT_EQ(solver->net()->blob_by_name("data")->shape(),
            std::vector<int>({1, 1, kVolumeSize, kVolumeSize, kVolumeSize}));

  std::vector<float> losses;
  for (int i = 0; i < kSteps; ++i) {
    solver->Step(1);
    losses.push_back(solver->net()->blob_by_name("loss")->cpu_data()[0]);
    ASSERT_TRUE(std::isfinite(losses.back())) << "step " << i;
  }
  EXPECT_LT(Mean(losses, kSteps - 5, kSteps), 0.5f * Mean(losses, 0, 5))
      << "losses: " << ::testing::PrintToString(losses);

  // After so few steps one of the two objects may still be missed; together they must not be.
  Net<float> test_net(WithPhase(net_param, TEST));
  test_net.ShareTrainedLayersWith(solver->net().get());
  test_net.Forward();
  const Blob<float>& label = *test_net.blob_by_name("label");
  std::array<int, 3> voxels = {0, 0, 0};
  for (int i = 0; i < label.count(); ++i) {
    const int cls = static_cast<int>(label.cpu_data()[i]);
    if (cls != kUnlabelled) ++voxels[cls];
  }
  const float* class_accuracy = test_net.blob_by_name("class_accuracy")->cpu_data();
  const float objects_found =
      (class_accuracy[1] * voxels[1] + class_accuracy[2] * voxels[2]) / (voxels[1] + voxels[2]);
  EXPECT_GT(class_accuracy[0], 0.9f) << "background";
  EXPECT_GT(objects_found, 0.3f) << "ball " << class_accuracy[1] << ", box " << class_accuracy[2];
}

}  // namespace caffe
