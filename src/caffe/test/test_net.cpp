#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "caffe/filler.hpp"
#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/net.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

NetParameter ParseNet(const std::string& text) {
  NetParameter param;
  ParseProtoFromText(text, "test net", &param);
  return param;
}

// data (2x3 gaussian) and label -> ip (4 outputs) -> loss, with an accuracy beside it.
const char kTinyNet[] = R"(
  name: "TinyNet"
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param {
      shape { dim: 5 dim: 3 } shape { dim: 5 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 1 } } }
  layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
    inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 0.5 }
                          bias_filler { type: "constant" value: 0.1 } } }
  layer { name: "relu" type: "ReLU" bottom: "ip" top: "ip" }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
  layer { name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy"
    include { phase: TEST } }
)";

// Passes its bottom through, and fails in the pass its name says with an error that does not
// know the layer (as one from device memory or a blob would), to see that the net names it.
template <typename Dtype>
class FailsInPassLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "FailsInPass"; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    top[0]->ReshapeLike(*bottom[0]);
  }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    if (this->layer_param().name() == "forward") CAFFE_THROW() << "out of device memory";
    top[0]->ShareData(*bottom[0]);
  }
  void Backward_cpu(const Blobs<Dtype>& top, const std::vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {
    CAFFE_THROW() << "out of device memory";
  }
};
REGISTER_LAYER_CLASS(FailsInPass);

}  // namespace

TEST(NetErrorTest, AFailureInsideALayerPassNamesTheLayer) {
  for (const std::string pass : {"forward", "backward"}) {
    NetParameter param = ParseNet(R"(
      layer { name: "data" type: "DummyData" top: "data"
              dummy_data_param { shape { dim: 2 dim: 3 } } }
      layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
              inner_product_param { num_output: 2 } }
      layer { name: ")" + pass + R"(" type: "FailsInPass" bottom: "ip" top: "out" }
      layer { name: "loss" type: "EuclideanLoss" bottom: "out" bottom: "ip" top: "loss" })");
    Net<float> net(param);
    try {
      net.ForwardBackward();
      ADD_FAILURE() << "the " << pass << " pass did not fail";
    } catch (const Error& error) {
      EXPECT_EQ(std::string(error.what()),
                pass + " pass of FailsInPass layer '" + pass + "': out of device memory");
    }
  }
}

template <typename TypeParam>
class NetTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  std::unique_ptr<Net<Dtype>> MakeNet(const std::string& text, Phase phase = TRAIN) {
    NetParameter param = ParseNet(text);
    param.mutable_state()->set_phase(phase);
    return std::make_unique<Net<Dtype>>(param);
  }
};
TYPED_TEST_SUITE(NetTest, TestDtypesAndDevices);

TYPED_TEST(NetTest, InsertsSplitsAndWiresInPlaceLayers) {
  auto net = this->MakeNet(kTinyNet, TEST);
  const std::vector<std::string> expected_layers = {
      "data", "label_data_1_split", "ip", "relu", "ip_relu_0_split", "loss", "accuracy"};
  EXPECT_EQ(net->layer_names(), expected_layers);
  // relu works in place: its top is the blob "ip", which the split then copies to two consumers.
  EXPECT_EQ(net->top_vecs()[3][0], net->bottom_vecs()[3][0]);
  EXPECT_TRUE(net->has_blob("ip_relu_0_split_1"));
  const std::vector<std::string> outputs = {"accuracy", "loss"};
  std::vector<std::string> output_names;
  for (int index : net->output_blob_indices()) output_names.push_back(net->blob_names()[index]);
  EXPECT_EQ(output_names, outputs);
}

TYPED_TEST(NetTest, PhaseRulesFilterLayers) {
  auto train = this->MakeNet(kTinyNet, TRAIN);
  EXPECT_FALSE(train->has_layer("accuracy"));
  EXPECT_FALSE(train->has_layer("ip_relu_0_split"));  // one consumer left: no split
  auto test = this->MakeNet(kTinyNet, TEST);
  EXPECT_TRUE(test->has_layer("accuracy"));
}

TYPED_TEST(NetTest, LevelAndStageRulesFilterLayers) {
  NetParameter param = ParseNet(R"(
    state { level: 2 stage: "deploy" }
    layer { name: "a" type: "Input" top: "a" input_param { shape { dim: 1 } } }
    layer { name: "low" type: "Silence" bottom: "a" include { max_level: 1 } }
    layer { name: "high" type: "Silence" bottom: "a" include { min_level: 2 stage: "deploy" } }
    layer { name: "not_deploy" type: "Silence" bottom: "a" exclude { stage: "deploy" } }
    layer { name: "other" type: "Silence" bottom: "a" include { not_stage: "deploy" } }
  )");
  NetParameter filtered;
  Net<typename TypeParam::Dtype>::FilterNet(param, &filtered);
  std::vector<std::string> names;
  for (const auto& layer : filtered.layer()) names.push_back(layer.name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "high"}));
}

TYPED_TEST(NetTest, LossWeightsScaleTheObjectiveAndGradients) {
  using Dtype = typename TypeParam::Dtype;
  Caffe::set_random_seed(7);
  auto net1 = this->MakeNet(kTinyNet);
  Dtype loss1 = net1->ForwardBackward();
  std::string weighted = kTinyNet;
  weighted.replace(weighted.find("top: \"loss\""), 11, "top: \"loss\" loss_weight: 2.5");
  Caffe::set_random_seed(7);
  auto net2 = this->MakeNet(weighted);
  Dtype loss2 = net2->ForwardBackward();
  EXPECT_NEAR(loss2, 2.5 * loss1, 1e-5);
  const Blob<Dtype>& w1 = *net1->layer_by_name("ip")->blobs()[0];
  const Blob<Dtype>& w2 = *net2->layer_by_name("ip")->blobs()[0];
  for (int i = 0; i < w1.count(); ++i) {
    EXPECT_NEAR(w2.cpu_diff()[i], 2.5 * w1.cpu_diff()[i], 1e-5);
  }
}

TYPED_TEST(NetTest, LayersOffTheLossPathSkipBackward) {
  auto net = this->MakeNet(kTinyNet, TEST);
  const auto& need = net->layer_need_backward();
  EXPECT_FALSE(need[0]);  // data
  EXPECT_TRUE(need[2]);   // ip
  EXPECT_TRUE(need[5]);   // loss
  EXPECT_FALSE(need[6]);  // accuracy feeds no loss
  // Labels never get a gradient.
  EXPECT_FALSE(net->bottom_need_backward()[5][1]);
}

TYPED_TEST(NetTest, PropagateDownFalseStopsGradientsIntoABottom) {
  using Dtype = typename TypeParam::Dtype;
  std::string text = kTinyNet;
  text.replace(text.find("bottom: \"ip\" bottom: \"label\" top: \"loss\""), 40,
               "bottom: \"ip\" bottom: \"label\" top: \"loss\" propagate_down: false "
               "propagate_down: false");
  auto net = this->MakeNet(text);
  net->ForwardBackward();
  const Blob<Dtype>& weights = *net->layer_by_name("ip")->blobs()[0];
  EXPECT_EQ(weights.asum_diff(), Dtype(0));
  // Nothing below the loss needs backward any more (BVLC's pruning).
  const int ip =
      static_cast<int>(std::find(net->layer_names().begin(), net->layer_names().end(), "ip") -
                       net->layer_names().begin());
  EXPECT_FALSE(net->layer_need_backward()[ip]);
}

TYPED_TEST(NetTest, ZeroLrMultMeansNoParamGradient) {
  using Dtype = typename TypeParam::Dtype;
  std::string text = kTinyNet;
  text.replace(text.find("inner_product_param"), 0, "param { lr_mult: 0 } param { lr_mult: 0 } ");
  auto net = this->MakeNet(text);
  net->ForwardBackward();
  EXPECT_EQ(net->layer_by_name("ip")->blobs()[0]->asum_diff(), Dtype(0));
  EXPECT_FALSE(net->layer_by_name("ip")->param_propagate_down(0));
  EXPECT_EQ(net->params_lr()[0], 0.f);
}

TYPED_TEST(NetTest, ForceBackwardGivesInputsGradients) {
  using Dtype = typename TypeParam::Dtype;
  auto plain = this->MakeNet(kTinyNet);
  plain->ForwardBackward();
  EXPECT_EQ(plain->blob_by_name("data")->asum_diff(), Dtype(0));
  auto forced = this->MakeNet(std::string("force_backward: true\n") + kTinyNet);
  forced->ForwardBackward();
  EXPECT_GT(forced->blob_by_name("data")->asum_diff(), Dtype(0));
  // Labels still get none: SoftmaxWithLoss does not allow forcing its label bottom.
  EXPECT_FALSE(forced->bottom_need_backward()[forced->layer_names().size() - 1][1]);
}

TYPED_TEST(NetTest, NamedParamsAreSharedAndLearnedOnce) {
  using Dtype = typename TypeParam::Dtype;
  auto net = this->MakeNet(R"(
    layer { name: "data" type: "DummyData" top: "data"
      dummy_data_param { shape { dim: 2 dim: 3 } data_filler { type: "gaussian" } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
      param { name: "shared_w" } param { name: "shared_b" }
      inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
    layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
      param { name: "shared_w" } param { name: "shared_b" }
      inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "ip1" bottom: "ip2" top: "loss" }
  )");
  EXPECT_EQ(net->params().size(), 4u);
  EXPECT_EQ(net->learnable_params().size(), 2u);
  EXPECT_EQ(net->param_owners()[2], 0);
  Blob<Dtype>* w1 = net->layer_by_name("ip1")->blobs()[0].get();
  Blob<Dtype>* w2 = net->layer_by_name("ip2")->blobs()[0].get();
  EXPECT_EQ(w1->cpu_data(), w2->cpu_data());
  EXPECT_EQ(w1->cpu_diff(), w2->cpu_diff());
}

TYPED_TEST(NetTest, SharingParamsOfDifferentShapesIsAClearError) {
  try {
    this->MakeNet(R"(
      layer { name: "data" type: "DummyData" top: "data"
        dummy_data_param { shape { dim: 2 dim: 3 } } }
      layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        param { name: "w" } inner_product_param { num_output: 3 } }
      layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
        param { name: "w" } inner_product_param { num_output: 4 } }
    )");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'w'"), std::string::npos) << message;
    EXPECT_NE(message.find("4 3"), std::string::npos) << message;
    EXPECT_NE(message.find("3 3"), std::string::npos) << message;
  }
}

TYPED_TEST(NetTest, UnknownLayerTypeNamesTypeAndLayer) {
  try {
    this->MakeNet(R"(
      layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 } } }
      layer { name: "relu1" type: "Relu" bottom: "data" top: "data" }
    )");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown layer type \"Relu\""), std::string::npos) << message;
    EXPECT_NE(message.find("'relu1'"), std::string::npos) << message;
    EXPECT_NE(message.find("ReLU"), std::string::npos) << "lists the known types: " << message;
  }
}

TYPED_TEST(NetTest, UnknownBottomBlobIsAClearError) {
  try {
    this->MakeNet(R"(
      layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 } } }
      layer { name: "relu1" type: "ReLU" bottom: "dat" top: "out" }
    )");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown bottom blob 'dat'"), std::string::npos) << message;
    EXPECT_NE(message.find("relu1"), std::string::npos) << message;
  }
}

TYPED_TEST(NetTest, ShapeMismatchNamesLayerAndBothShapes) {
  try {
    this->MakeNet(R"(
      layer { name: "a" type: "Input" top: "a" input_param { shape { dim: 2 dim: 3 } } }
      layer { name: "b" type: "Input" top: "b" input_param { shape { dim: 2 dim: 4 } } }
      layer { name: "sum" type: "Eltwise" bottom: "a" bottom: "b" top: "c" }
    )");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'sum'"), std::string::npos) << message;
    EXPECT_NE(message.find("2 3"), std::string::npos) << message;
    EXPECT_NE(message.find("2 4"), std::string::npos) << message;
  }
}

TYPED_TEST(NetTest, AParameterOfAnotherLayerTypeIsIgnoredWithAWarning) {
  // Published nets carry such left-overs (V-Net's Softmax has a loss_param): they still load.
  EXPECT_NO_THROW(this->MakeNet(R"(
      layer { name: "a" type: "Input" top: "a" input_param { shape { dim: 2 dim: 3 } } }
      layer { name: "act" type: "ReLU" bottom: "a" top: "a" dropout_param { dropout_ratio: 0.1 } }
    )"));
  // A loss layer's loss_param is its own, even though it builds an internal Softmax from it.
  std::string text = kTinyNet;
  text.replace(text.find("top: \"loss\""), 12, "top: \"loss\" loss_param { ignore_label: 3 }");
  EXPECT_NO_THROW(this->MakeNet(text));
}

TYPED_TEST(NetTest, DuplicateTopIsAClearError) {
  EXPECT_THROW(this->MakeNet(R"(
      layer { name: "a" type: "Input" top: "a" input_param { shape { dim: 1 } } }
      layer { name: "b" type: "Input" top: "a" input_param { shape { dim: 1 } } }
    )"),
               Error);
}

TYPED_TEST(NetTest, CopyTrainedLayersCopiesByNameAndIgnoresOthers) {
  using Dtype = typename TypeParam::Dtype;
  auto source = this->MakeNet(kTinyNet);
  NetParameter weights;
  source->ToProto(&weights);
  LayerParameter* stray = weights.add_layer();
  stray->set_name("not_in_net");
  stray->add_blobs()->add_data(1);
  Caffe::set_random_seed(99);
  auto target = this->MakeNet(kTinyNet);
  target->CopyTrainedLayersFrom(weights);
  const Blob<Dtype>& a = *source->layer_by_name("ip")->blobs()[0];
  const Blob<Dtype>& b = *target->layer_by_name("ip")->blobs()[0];
  for (int i = 0; i < a.count(); ++i) EXPECT_EQ(a.cpu_data()[i], b.cpu_data()[i]);
}

TYPED_TEST(NetTest, CopyTrainedLayersShapeMismatchNamesLayerIndexAndShapes) {
  auto source = this->MakeNet(kTinyNet);
  NetParameter weights;
  source->ToProto(&weights);
  std::string wider = kTinyNet;
  wider.replace(wider.find("num_output: 4"), 13, "num_output: 6");
  auto target = this->MakeNet(wider);
  try {
    target->CopyTrainedLayersFrom(weights);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("param 0"), std::string::npos) << message;
    EXPECT_NE(message.find("'ip'"), std::string::npos) << message;
    EXPECT_NE(message.find("4 3"), std::string::npos) << message;
    EXPECT_NE(message.find("6 3"), std::string::npos) << message;
  }
}

TYPED_TEST(NetTest, HDF5WeightsRoundTrip) {
  using Dtype = typename TypeParam::Dtype;
  auto source = this->MakeNet(kTinyNet);
  const std::string dir = MakeTempDir("net_hdf5");
  const std::string path = dir + "/weights.caffemodel.h5";
  source->ToHDF5(path);
  Caffe::set_random_seed(1234);
  auto target = this->MakeNet(kTinyNet);
  target->CopyTrainedLayersFrom(path);
  for (int j = 0; j < 2; ++j) {
    const Blob<Dtype>& a = *source->layer_by_name("ip")->blobs()[j];
    const Blob<Dtype>& b = *target->layer_by_name("ip")->blobs()[j];
    for (int i = 0; i < a.count(); ++i) EXPECT_EQ(a.cpu_data()[i], b.cpu_data()[i]);
  }
  std::remove(path.c_str());
}

TYPED_TEST(NetTest, MissingWeightsFileNamesThePath) {
  auto net = this->MakeNet(kTinyNet);
  try {
    net->CopyTrainedLayersFrom("/nonexistent/dir/w.caffemodel");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/w.caffemodel"), std::string::npos)
        << e.what();
  }
}

TYPED_TEST(NetTest, TruncatedWeightsFileIsAClearErrorNamingIt) {
  auto source = this->MakeNet(kTinyNet);
  NetParameter weights;
  source->ToProto(&weights);
  std::string bytes;
  weights.SerializeToString(&bytes);
  const std::string path = MakeTempDir("net_truncated") + "/cut.caffemodel";
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size() / 2);
  auto target = this->MakeNet(kTinyNet);
  try {
    target->CopyTrainedLayersFrom(path);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TYPED_TEST(NetTest, HDF5WeightsMissingADatasetNameTheLayerAndParam) {
  auto source = this->MakeNet(kTinyNet);
  const std::string path = MakeTempDir("net_hdf5_missing") + "/w.caffemodel.h5";
  source->ToHDF5(path);
  {
    Hdf5File file(path, H5F_ACC_RDWR);
    ASSERT_GE(H5Ldelete(file.id(), "data/ip/1", H5P_DEFAULT), 0);
  }
  auto target = this->MakeNet(kTinyNet);
  try {
    target->CopyTrainedLayersFrom(path);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("param 1 of layer 'ip'"), std::string::npos) << message;
  }
}

// A weights file that gives none of the net's weighted layers anything is a mistake (another
// net's file; an empty or foreign file protobuf reads as a NetParameter without layers), not a
// net left on its fillers with nothing said. Both formats; the error names both sides' layers.
TYPED_TEST(NetTest, WeightsFileMatchingNoLayerIsAnErrorNamingBothSides) {
  const std::string dir = MakeTempDir("net_no_match");
  std::string renamed = kTinyNet;
  renamed.replace(renamed.find("name: \"ip\""), 10, "name: \"fc\"");
  auto other = this->MakeNet(renamed);
  other->ToHDF5(dir + "/other.caffemodel.h5");
  NetParameter weights;
  other->ToProto(&weights);
  WriteProtoToBinaryFile(weights, dir + "/other.caffemodel");
  std::ofstream(dir + "/empty.caffemodel");
  auto net = this->MakeNet(kTinyNet);
  for (const std::string file : {"other.caffemodel", "other.caffemodel.h5", "empty.caffemodel"}) {
    const std::string error = ErrorOf([&] { net->CopyTrainedLayersFrom(dir + "/" + file); });
    const std::string file_layers = file == "empty.caffemodel" ? "none" : "fc";
    EXPECT_NE(error.find("weights file '" + dir + "/" + file +
                         "' matches no layer of net "
                         "'TinyNet': its layers with weights are " +
                         file_layers + ", the net's are ip (weights are copied by layer name)"),
              std::string::npos)
        << error;
  }
  // Some layer matching is enough (the rest keep their fillers, as in BVLC's fine-tuning), and a
  // net with no weights takes any file.
  net->ToHDF5(dir + "/tiny.caffemodel.h5");
  auto larger = this->MakeNet(std::string(kTinyNet) + R"(
    layer { name: "ip2" type: "InnerProduct" bottom: "ip" top: "ip2"
      inner_product_param { num_output: 2 } })");
  EXPECT_EQ(ErrorOf([&] { larger->CopyTrainedLayersFrom(dir + "/tiny.caffemodel.h5"); }), "");
  auto unweighted = this->MakeNet(R"(
    layer { name: "data" type: "DummyData" top: "data" dummy_data_param { shape { dim: 2 } } }
    layer { name: "relu" type: "ReLU" bottom: "data" top: "out" })");
  EXPECT_EQ(ErrorOf([&] { unweighted->CopyTrainedLayersFrom(dir + "/empty.caffemodel"); }), "");
}

TYPED_TEST(NetTest, InputFieldsInAFileAreUpgradedToAnInputLayer) {
  const std::string path = MakeTempDir("net_input") + "/deploy.prototxt";
  NetParameter param = ParseNet(R"(
    input: "data" input_dim: 2 input_dim: 3 input_dim: 4 input_dim: 5
    layer { name: "relu" type: "ReLU" bottom: "data" top: "out" }
  )");
  WriteProtoToTextFile(param, path);
  Net<typename TypeParam::Dtype> net(path, TEST);
  ASSERT_EQ(net.num_inputs(), 1);
  EXPECT_EQ(net.input_blobs()[0]->shape_string(), "2 3 4 5 (120)");
  EXPECT_EQ(net.layer_names()[0], "input");
  std::remove(path.c_str());
}

TYPED_TEST(NetTest, ParamGradientsPassTheNumericalCheck) {
  using Dtype = typename TypeParam::Dtype;
  auto net = this->MakeNet(R"(
    force_backward: true
    layer { name: "data" type: "DummyData" top: "data"
      dummy_data_param { shape { dim: 2 dim: 3 } data_filler { type: "gaussian" } } }
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
      inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
    layer { name: "sig" type: "Sigmoid" bottom: "ip" top: "sig" }
  )");
  net->Forward();
  GradientChecker<Dtype> checker(1e-2, 1e-2);
  checker.CheckGradientNet(*net, net->input_blobs());
}

}  // namespace caffe

namespace caffe {

// Weights files over 1 GB (VGG-scale models with big fully connected layers) load: protobuf's
// default 64 MB limit is lifted for weights. One float InnerProduct of 1.05 GB. Host code only:
// a GPU-scope build leaves it to the CPU variant (on the emulator's stage it took 36 s).
#ifndef CAFFE_TEST_GPU_DEVICES_ONLY
TEST(NetLargeWeightsTest, ACaffemodelOverOneGigabyteLoads) {
  const int outputs = 16, inputs = 1050 * 1000 * 1000 / 4 / 16;
  NetParameter param;
  ParseProtoFromText(R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: )" +
                         std::to_string(inputs) + R"( } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
      inner_product_param { num_output: 16 bias_term: false } })",
                     "large", &param);
  const std::string path = MakeTempDir("large_weights") + "/large.caffemodel";
  {
    NetParameter weights;
    LayerParameter* layer = weights.add_layer();
    layer->set_name("ip");
    BlobProto* blob = layer->add_blobs();
    blob->mutable_shape()->add_dim(outputs);
    blob->mutable_shape()->add_dim(inputs);
    blob->mutable_data()->Resize(outputs * inputs, 0.25f);
    blob->mutable_data()->Set(outputs * inputs - 1, 7.f);
    WriteProtoToBinaryFile(weights, path);
  }
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  ASSERT_GT(info.st_size, 1000L * 1000 * 1000);
  Net<float> net(param);
  net.CopyTrainedLayersFrom(path);
  const Blob<float>& weights = *net.layer_by_name("ip")->blobs()[0];
  EXPECT_EQ(weights.cpu_data()[0], 0.25f);
  EXPECT_EQ(weights.cpu_data()[weights.count() - 1], 7.f);
  std::remove(path.c_str());
}
#endif  // CAFFE_TEST_GPU_DEVICES_ONLY

}  // namespace caffe
