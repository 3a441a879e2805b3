// Which CPU engine a layer gets: its own engine enum first, then Intel Caffe's layer-level engine
// string, then the default (oneDNN where built) unless CAFFE_CPU_ENGINE=caffe; an unknown name is
// an error naming the layer.
#include <cstdlib>
#include <string>

#include "caffe/layer_engine.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/error.hpp"

namespace caffe {

namespace {

// A Convolution layer named 'conv' with Intel Caffe's layer-level engine string, if any.
LayerParameter ConvWithEngine(const std::string& engine) {
  LayerParameter param;
  param.set_name("conv");
  param.set_type("Convolution");
  if (!engine.empty()) param.set_engine(engine);
  return param;
}

// Sets (or, with null, unsets) CAFFE_CPU_ENGINE for one scope.
class ScopedEngineEnv : public ScopedEnv {
 public:
  explicit ScopedEngineEnv(const char* value) : ScopedEnv("CAFFE_CPU_ENGINE", value) {}
};

const CpuEngine kDnnlIfBuilt = DnnlBuilt() ? CpuEngine::kDnnl : CpuEngine::kCaffe;
const CpuEngine kDefaultIfBuilt = DnnlBuilt() ? CpuEngine::kDefault : CpuEngine::kCaffe;

}  // namespace

TEST(CpuEngineTest, TheLayersOwnEngineDecidesFirst) {
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine("MKLDNN"), "CAFFE"), CpuEngine::kCaffe);
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine(""), "CUDNN"), CpuEngine::kCaffe);
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine("CAFFE"), "MKLDNN"), kDnnlIfBuilt);
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine(""), "MKL2017"), kDnnlIfBuilt);
}

TEST(CpuEngineTest, IntelCaffesEngineStringIsHonoured) {
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine("MKLDNN"), "DEFAULT"), kDnnlIfBuilt);
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine("mkldnn:DLCP"), "DEFAULT"), kDnnlIfBuilt);
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine("CAFFE"), "DEFAULT"), CpuEngine::kCaffe);
}

TEST(CpuEngineTest, DefaultIsOneDnnWhereBuiltUnlessTheEnvironmentSaysOtherwise) {
  const ScopedEngineEnv unset(nullptr);  // whatever the user running the tests exported
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine(""), "DEFAULT"), kDefaultIfBuilt);
  {
    ScopedEngineEnv env("dnnl");
    EXPECT_EQ(ChooseCpuEngine(ConvWithEngine(""), "DEFAULT"), kDnnlIfBuilt);
  }
  ScopedEngineEnv env("caffe");
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine(""), "DEFAULT"), CpuEngine::kCaffe);
  // An explicit request still wins over the environment.
  EXPECT_EQ(ChooseCpuEngine(ConvWithEngine("MKLDNN"), "DEFAULT"), kDnnlIfBuilt);
}

TEST(CpuEngineTest, AnUnknownEngineNameIsAnErrorNamingLayerAndEngine) {
  try {
    ChooseCpuEngine(ConvWithEngine("TURBO"), "DEFAULT");
    FAIL() << "no error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'conv'"), std::string::npos) << message;
    EXPECT_NE(message.find("\"TURBO\""), std::string::npos) << message;
    EXPECT_NE(message.find("MKLDNN"), std::string::npos) << message;
  }
}

}  // namespace caffe
