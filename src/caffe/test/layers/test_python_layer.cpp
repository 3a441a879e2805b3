// The Python layer type from C++: this process has no interpreter until the first Python layer
// starts one (as in the caffe tool), which then imports the caffe package from the build tree and
// the layer modules written below. Without pycaffe (CAFFE_PYTHON off or Python missing) the type is
// not registered, and asking for it is the registry's usual error.
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/net.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

#ifdef WITH_PYTHON_LAYER
#include <cstdlib>

#include "caffe/layers/python_layer.hpp"
#endif

namespace caffe {

#ifdef WITH_PYTHON_LAYER

namespace {

// Layers used below, in the module caffe_test_python_layers.
const char kLayerModule[] = R"(import caffe
import numpy as np


class Times(caffe.Layer):
    """top = factor * bottom, factor from param_str."""

    def setup(self, bottom, top):
        if len(bottom) != 1:
            raise Exception('Times takes one bottom')
        self.factor = float(self.param_str)

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].shape)

    def forward(self, bottom, top):
        top[0].data[...] = self.factor * bottom[0].data

    def backward(self, top, propagate_down, bottom):
        if propagate_down[0]:
            bottom[0].diff[...] = self.factor * top[0].diff


class Phase(caffe.Layer):
    """top: one value, the phase the layer was given."""

    def reshape(self, bottom, top):
        top[0].reshape(1)

    def forward(self, bottom, top):
        top[0].data[0] = int(self.phase)

    def backward(self, top, propagate_down, bottom):
        pass


class Scaled(caffe.Layer):
    """top = w * bottom with a learned scalar w (a blob the layer adds)."""

    def setup(self, bottom, top):
        self.blobs.add_blob(1)
        self.blobs[0].data[...] = 0.5

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].shape)

    def forward(self, bottom, top):
        top[0].data[...] = self.blobs[0].data[0] * bottom[0].data

    def backward(self, top, propagate_down, bottom):
        self.blobs[0].diff[0] += np.sum(top[0].diff * bottom[0].data)
        if propagate_down[0]:
            bottom[0].diff[...] = self.blobs[0].data[0] * top[0].diff


class FailsInForward(caffe.Layer):
    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].shape)

    def forward(self, bottom, top):
        raise ValueError('forward failed on purpose')


class NotALayer(object):
    pass
)";

string NetText(const string& layer, const string& param_str, bool force_backward = true) {
  return string(force_backward ? "force_backward: true\n" : "") +
         "layer { name: 'in' type: 'Input' top: 'x' input_param { shape { dim: 2 dim: 3 } } }\n"
         "layer { name: 'py' type: 'Python' bottom: 'x' top: 'y' python_param { module: '"
         "caffe_test_python_layers' layer: '" +
         layer + "' param_str: '" + param_str + "' } }\n";
}

template <typename Dtype>
shared_ptr<Net<Dtype>> MakeNet(const string& text, Phase phase = TEST) {
  NetParameter param;
  ParseProtoFromText(text, "test net", &param);
  param.mutable_state()->set_phase(phase);
  return std::make_shared<Net<Dtype>>(param);
}

}  // namespace

class PythonLayerTest : public ::testing::Test {
 protected:
  // The interpreter starts with the first Python layer and reads PYTHONPATH then: the caffe
  // package of this build, and the folder with the layer module.
  static void SetUpTestSuite() {
    module_dir_ = new ScopedTempDir(MakeTempDir("python_layer_test"));
    std::ofstream(module_dir_->path() + "/caffe_test_python_layers.py") << kLayerModule;
    const string path = BuildDir() + "/python:" + module_dir_->path();
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  static void TearDownTestSuite() {
    delete module_dir_;
    module_dir_ = nullptr;
  }
  static ScopedTempDir* module_dir_;
};
ScopedTempDir* PythonLayerTest::module_dir_ = nullptr;

TEST_F(PythonLayerTest, TypeIsRegistered) {
  const vector<string> types = LayerRegistry<float>::LayerTypeList();
  EXPECT_NE(std::find(types.begin(), types.end(), "Python"), types.end());
}

TEST_F(PythonLayerTest, ForwardAndBackwardRunThePythonMethods) {
  auto net = MakeNet<float>(NetText("Times", "3"));
  Blob<float>* x = net->blob_by_name("x").get();
  Blob<float>* y = net->blob_by_name("y").get();
  ASSERT_EQ(y->shape(), x->shape());  // reshape() ran at setup
  for (int i = 0; i < x->count(); ++i) x->mutable_cpu_data()[i] = i - 2.5f;
  net->Forward();
  for (int i = 0; i < y->count(); ++i) EXPECT_FLOAT_EQ(y->cpu_data()[i], 3 * (i - 2.5f)) << i;
  for (int i = 0; i < y->count(); ++i) y->mutable_cpu_diff()[i] = 1.0f + i;
  net->Backward();
  for (int i = 0; i < x->count(); ++i) EXPECT_FLOAT_EQ(x->cpu_diff()[i], 3 * (1.0f + i)) << i;
}

TEST_F(PythonLayerTest, ThePhaseIsTheNets) {
  for (Phase phase : {TRAIN, TEST}) {
    auto net = MakeNet<float>(NetText("Phase", ""), phase);
    net->Forward();
    EXPECT_EQ(net->blob_by_name("y")->cpu_data()[0], static_cast<float>(phase));
  }
}

TEST_F(PythonLayerTest, BlobsAddedInPythonAreLearnedParams) {
  auto net = MakeNet<float>(NetText("Scaled", ""));
  ASSERT_EQ(net->learnable_params().size(), 1u);
  EXPECT_FLOAT_EQ(net->learnable_params()[0]->cpu_data()[0], 0.5f);
  Blob<float>* x = net->blob_by_name("x").get();
  Blob<float>* y = net->blob_by_name("y").get();
  for (int i = 0; i < x->count(); ++i) x->mutable_cpu_data()[i] = 1.0f;
  net->Forward();
  EXPECT_FLOAT_EQ(y->cpu_data()[0], 0.5f);
  for (int i = 0; i < y->count(); ++i) y->mutable_cpu_diff()[i] = 2.0f;
  net->ClearParamDiffs();
  net->Backward();
  EXPECT_FLOAT_EQ(net->learnable_params()[0]->cpu_diff()[0], 12.0f);  // sum(2 * 1) over 6 values
  NetParameter saved;
  net->ToProto(&saved);
  ASSERT_EQ(saved.layer(1).blobs_size(), 1);  // saved with the weights
}

TEST_F(PythonLayerTest, RunsInAThreadPythonDidNotStart) {
  auto net = MakeNet<float>(NetText("Times", "2"));
  net->blob_by_name("x")->mutable_cpu_data()[0] = 4.0f;
  std::thread worker([&net] { net->Forward(); });
  worker.join();
  EXPECT_FLOAT_EQ(net->blob_by_name("y")->cpu_data()[0], 8.0f);
}

TEST_F(PythonLayerTest, PythonExceptionIsACaffeErrorWithTraceback) {
  auto net = MakeNet<float>(NetText("FailsInForward", ""));
  try {
    net->Forward();
    FAIL() << "expected a caffe::Error";
  } catch (const Error& error) {
    const string message = error.what();
    EXPECT_EQ(message.rfind("Python layer 'py': ", 0), 0u) << message;
    EXPECT_NE(message.find("caffe_test_python_layers.FailsInForward.forward() raised"),
              string::npos)
        << message;
    EXPECT_NE(message.find("Traceback (most recent call last)"), string::npos) << message;
    EXPECT_NE(message.find("ValueError: forward failed on purpose"), string::npos) << message;
  }
  // The interpreter and the net survive it.
  auto other = MakeNet<float>(NetText("Times", "2"));
  EXPECT_NO_THROW(other->Forward());
}

TEST_F(PythonLayerTest, SetupErrorsNameTheModuleOrClass) {
  auto expect_error = [](const string& text, const string& expected) {
    try {
      MakeNet<float>(text);
      ADD_FAILURE() << "expected a caffe::Error containing: " << expected;
    } catch (const Error& error) {
      EXPECT_NE(string(error.what()).find(expected), string::npos) << error.what();
    }
  };
  string no_module = NetText("Times", "2");
  no_module.replace(no_module.find("caffe_test_python_layers"), 24, "no_such_module_anywhere");
  expect_error(no_module, "cannot import python_param.module 'no_such_module_anywhere'");
  expect_error(NetText("Missing", ""), "has no class 'Missing'");
  expect_error(NetText("NotALayer", ""), "is not a subclass of caffe.Layer");
  expect_error(NetText("Times", "not a number"), "Times.setup() raised");
}

TEST_F(PythonLayerTest, DoubleNetsAreRejected) {
  EXPECT_THROW(MakeNet<double>(NetText("Times", "2")), Error);
}

#else  // !WITH_PYTHON_LAYER

TEST(PythonLayerTest, TypeIsUnknownWithoutPython) {
  LayerParameter param =
      ParseLayerParam("name: 'py' type: 'Python' python_param { module: 'm' layer: 'L' }");
  try {
    LayerRegistry<float>::CreateLayer(param);
    FAIL() << "the Python type exists in a build without Python";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("unknown layer type \"Python\""), string::npos)
        << error.what();
  }
}

#endif  // WITH_PYTHON_LAYER

}  // namespace caffe
