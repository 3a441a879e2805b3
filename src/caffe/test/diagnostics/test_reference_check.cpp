#include <cmath>
#include <string>

#include "caffe/diagnostics/reference_check.hpp"
#include "caffe/io/io.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

const char kNet[] = R"(
  layer { name: "in" type: "Input" top: "x" top: "t" input_param { shape { dim: 2 dim: 3 } } }
  layer { name: "ip/1" type: "InnerProduct" bottom: "x" top: "y/out"
    inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "y/out" bottom: "t" top: "loss" })";

std::unique_ptr<Net<float>> MakeNet() {
  NetParameter param;
  ParseProtoFromText(kNet, "net", &param);
  param.mutable_state()->set_phase(TEST);
  Caffe::set_random_seed(3);
  return std::make_unique<Net<float>>(param);
}

// Writes inputs, forward data, diffs and param diffs of `net` as the golden fixtures do.
void WriteReference(Net<float>* net, const std::string& path) {
  for (int i = 0; i < 6; ++i) {
    net->blob_by_name("x")->mutable_cpu_data()[i] = 0.1f * i;
    net->blob_by_name("t")->mutable_cpu_data()[i] = 1 - 0.2f * i;
  }
  net->Forward();
  net->Backward();
  Hdf5File file(path, H5F_ACC_TRUNC);
  for (const char* group : {"input", "forward", "backward", "param_diff/ip%2F1"}) {
    H5Gclose(hdf5_create_group(file.id(), group));
  }
  for (const char* input : {"x", "t"}) {
    hdf5_save_nd_dataset(file.id(), std::string("input/") + input, *net->blob_by_name(input));
  }
  for (size_t i = 0; i < net->blobs().size(); ++i) {
    const std::string name = ReferenceData::Encode(net->blob_names()[i]);
    hdf5_save_nd_dataset(file.id(), "forward/" + name, *net->blobs()[i]);
    hdf5_save_nd_dataset(file.id(), "backward/" + name, *net->blobs()[i], true);
  }
  const auto& params = net->layer_by_name("ip/1")->blobs();
  for (size_t j = 0; j < params.size(); ++j) {
    hdf5_save_nd_dataset(file.id(), "param_diff/ip%2F1/" + std::to_string(j), *params[j], true);
  }
}

}  // namespace

TEST(ReferenceCheckTest, EncodesSlashAndPercentAsTheFixturesDo) {
  EXPECT_EQ(ReferenceData::Encode("inception_3a/1x1"), "inception_3a%2F1x1");
  EXPECT_EQ(ReferenceData::Encode("a%b"), "a%25b");
}

TEST(ReferenceCheckTest, RelativeErrorAndTolerance) {
  BlobComparison same;
  EXPECT_EQ(same.relative(), 0);
  EXPECT_TRUE(same.Within(0));
  BlobComparison off;
  off.max_abs_diff = 1e-3;
  off.max_abs_reference = 2;
  EXPECT_DOUBLE_EQ(off.relative(), 5e-4);
  EXPECT_FALSE(off.Within(1e-4));
  EXPECT_TRUE(off.Within(1e-3));
  BlobComparison zero_reference;
  zero_reference.max_abs_diff = 1e-9;
  EXPECT_TRUE(std::isinf(zero_reference.relative()));
  BlobComparison absent;
  absent.present = false;
  EXPECT_FALSE(absent.Within(1));
}

TEST(ReferenceCheckTest, ANetMatchesItsOwnStoredResultsAndADifferentOneDoesNot) {
  const std::string path = MakeTempDir("reference_check") + "/reference.h5";
  auto original = MakeNet();
  WriteReference(original.get(), path);
  ReferenceData reference(path);
  EXPECT_TRUE(reference.HasGroup("backward"));

  auto same = MakeNet();  // same seed, so the same weights
  const auto comparisons = CompareNetWithReference(same.get(), reference);
  int forward = 0, backward = 0, param = 0;
  for (const BlobComparison& c : comparisons) {
    EXPECT_TRUE(c.Within(1e-6)) << c.what << " " << c.max_abs_diff;
    forward += c.what.rfind("forward/", 0) == 0;
    backward += c.what.rfind("backward/", 0) == 0;
    param += c.what.rfind("param_diff/", 0) == 0;
  }
  EXPECT_EQ(forward, 4);
  EXPECT_EQ(backward, 4);
  EXPECT_EQ(param, 2);

  NetParameter param_text;
  ParseProtoFromText(kNet, "net", &param_text);
  Caffe::set_random_seed(4);  // other weights: y, the loss and every diff differ
  Net<float> other(param_text);
  bool any_drift = false;
  for (const BlobComparison& c : CompareNetWithReference(&other, reference)) {
    if (c.what == "forward/y/out") {
      EXPECT_FALSE(c.Within(1e-4));
    }
    any_drift |= !c.Within(1e-4);
  }
  EXPECT_TRUE(any_drift);
}

TEST(ReferenceCheckTest, MissingInputsAndWrongShapesAreClearErrors) {
  const std::string dir = MakeTempDir("reference_check");
  { Hdf5File file(dir + "/no_forward.h5", H5F_ACC_TRUNC); }
  ReferenceData empty(dir + "/no_forward.h5");
  auto net = MakeNet();
  EXPECT_THROW(CompareNetWithReference(net.get(), empty), Error);
  EXPECT_THROW(ReferenceData(dir + "/absent.h5"), Error);
  EXPECT_THROW(empty.ListAttribute("blob_names"), Error);
}

}  // namespace caffe
