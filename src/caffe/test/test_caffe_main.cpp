#include "caffe/test/test_caffe_main.hpp"

#include <google/protobuf/text_format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include "caffe/util/blas_core.hpp"

namespace caffe {

// Only this file is compiled with the checkout's paths (src/caffe/test/CMakeLists.txt), so the
// test programs themselves compile the same wherever the checkout is, and ccache finds them.
#if !defined(CAFFE_DEFAULT_SHARED_DIR) || !defined(CAFFE_BUILD_SOURCE_DIR) || \
    !defined(CAFFE_BUILD_BINARY_DIR)
#error "CAFFE_DEFAULT_SHARED_DIR, CAFFE_BUILD_SOURCE_DIR and CAFFE_BUILD_BINARY_DIR must be defined"
#endif

std::string SourceDir() { return CAFFE_BUILD_SOURCE_DIR; }
std::string BuildDir() { return CAFFE_BUILD_BINARY_DIR; }

std::string SharedDir() {
  const char* from_env = std::getenv("CAFFE_SHARED_DIR");
  std::string dir = from_env && *from_env ? from_env : CAFFE_DEFAULT_SHARED_DIR;
  struct stat info;
  if (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return "";
  return dir;
}

LayerParameter ParseLayerParam(const std::string& text) {
  LayerParameter param;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &param)) << text;
  return param;
}

template <typename Dtype>
void FillGaussian(Blob<Dtype>* blob, unsigned int seed, Dtype std) {
  std::mt19937 generator(seed);
  std::normal_distribution<Dtype> distribution(0, std);
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) data[i] = distribution(generator);
}

template <typename Dtype>
void FillUniform(Blob<Dtype>* blob, unsigned int seed, Dtype low, Dtype high) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<Dtype> distribution(low, high);
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) data[i] = distribution(generator);
}

std::vector<float> UniformValues(size_t count, unsigned int seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.f, 1.f);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

template void FillGaussian<float>(Blob<float>*, unsigned int, float);
template void FillGaussian<double>(Blob<double>*, unsigned int, double);
template void FillUniform<float>(Blob<float>*, unsigned int, float, float);
template void FillUniform<double>(Blob<double>*, unsigned int, double, double);

namespace {
std::vector<std::string>& TempDirs() {
  static std::vector<std::string> dirs;
  return dirs;
}
}  // namespace

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  char* dir = mkdtemp(buffer.data());
  EXPECT_NE(dir, nullptr) << "mkdtemp failed for " << pattern;
  if (dir) TempDirs().push_back(dir);
  return dir ? std::string(dir) : std::string();
}

}  // namespace caffe

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = false;
  FLAGS_minloglevel = 2;  // tests keep quiet unless something breaks
  caffe::FitBlasCoreToCpu();
  caffe::Caffe::set_random_seed(1701);
  const int result = RUN_ALL_TESTS();
  // Temporary folders go, unless the run failed and they may help to see why.
  if (result == 0) {
    for (const std::string& dir : caffe::TempDirs()) std::filesystem::remove_all(dir);
  }
  return result;
}
