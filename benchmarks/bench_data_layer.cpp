// Images per second the Data layer delivers from an LMDB of encoded JPEG images, as ImageNet
// training reads them: 256 x 256 colour images, TRAIN phase, random 227 x 227 crop, mirror and a
// mean file; one line per thread count (data_param.threads). The LMDB and mean file are generated
// in a temporary folder first (pictures with smooth gradients, edges and noise, so their JPEG size
// and decoding cost resemble photographs: about 25 KB each at quality 90).
//   bench_data_layer [-n images] [-b batch] [-k timed batches] [-t threads,threads,...]
// Defaults: 512 images, batch 256 (CaffeNet's), 8 timed batches, threads 1,2. The queue of
// prefetched batches is drained before timing, so the figure is the rate batches are produced.
// "images per CPU-second" divides by the process's CPU time instead of the wall time: what one
// fully available core delivers, independent of other load on a shared machine.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layers/data_layer.hpp"

#ifdef USE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#endif

namespace {

constexpr int kSide = 256;
constexpr int kCrop = 227;

#ifdef USE_OPENCV
/// A photograph-like picture: smooth colour gradients, a few edges and sensor-like noise.
cv::Mat Picture(int index, std::mt19937* generator) {
  std::normal_distribution<float> noise(0.f, 6.f);
  cv::Mat image(kSide, kSide, CV_8UC3);
  const int cx = (index * 37) % kSide, cy = (index * 91) % kSide;
  for (int h = 0; h < kSide; ++h) {
    for (int w = 0; w < kSide; ++w) {
      const float distance = std::sqrt(float((h - cy) * (h - cy) + (w - cx) * (w - cx)));
      for (int c = 0; c < 3; ++c) {
        float value = 128 + 90 * std::sin(0.02f * (c + 1) * w + 0.013f * h + index) *
                                std::cos(0.017f * h - 0.01f * c * w);
        if (distance < 40 + 10 * c) value = 255 - value;
        value += noise(*generator);
        image.ptr<uint8_t>(h)[w * 3 + c] =
            static_cast<uint8_t>(std::min(255.f, std::max(0.f, value)));
      }
    }
  }
  return image;
}
#endif

/// CPU time used by this process so far (all threads).
double CpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec * 1e-9;
}

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) values.push_back(std::atoi(item.c_str()));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
#ifndef USE_OPENCV
  std::fprintf(stderr, "bench_data_layer needs OpenCV (JPEG encoding and decoding)\n");
  return 1;
#else
  int images = 512, batch = 256, timed = 8;
  std::vector<int> thread_counts = {1, 2};
  int option;
  while ((option = getopt(argc, argv, "n:b:k:t:")) != -1) {
    switch (option) {
      case 'n':
        images = std::atoi(optarg);
        break;
      case 'b':
        batch = std::atoi(optarg);
        break;
      case 'k':
        timed = std::atoi(optarg);
        break;
      case 't':
        thread_counts = ParseList(optarg);
        break;
      default:
        std::fprintf(stderr, "usage: %s [-n images] [-b batch] [-k timed batches] [-t 1,2]\n",
                     argv[0]);
        return 1;
    }
  }
  FLAGS_minloglevel = 1;  // no per-layer setup log lines
  google::InitGoogleLogging(argv[0]);
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("caffe_bench_data_layer_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string source = dir + "/jpeg_lmdb";
  const std::string mean_file = dir + "/mean.binaryproto";

  // The encoded database and a mean file of 3 x 256 x 256 values.
  size_t total_bytes = 0;
  {
    std::mt19937 generator(1701);
    std::unique_ptr<caffe::db::DB> database = caffe::db::GetDB("lmdb");
    database->Open(source, caffe::db::NEW);
    auto txn = database->NewTransaction();
    for (int i = 0; i < images; ++i) {
      std::vector<uchar> jpeg;
      cv::imencode(".jpg", Picture(i, &generator), jpeg, {cv::IMWRITE_JPEG_QUALITY, 90});
      caffe::Datum datum;
      datum.set_encoded(true);
      datum.set_data(jpeg.data(), jpeg.size());
      datum.set_label(i % 1000);
      total_bytes += jpeg.size();
      char key[16];
      std::snprintf(key, sizeof(key), "%08d", i);
      txn->Put(key, datum.SerializeAsString());
    }
    txn->Commit();
    caffe::Blob<float> mean(1, 3, kSide, kSide);
    for (int i = 0; i < mean.count(); ++i) mean.mutable_cpu_data()[i] = 110.f + i % 30;
    caffe::BlobProto proto;
    mean.ToProto(&proto);
    caffe::WriteProtoToBinaryFile(proto, mean_file);
  }
  std::printf(
      "%d JPEG images of %dx%d (%.1f KB on average), batch %d, crop %d, mirror, mean "
      "file, TRAIN; %d batches timed after draining the prefetch queue\n",
      images, kSide, kSide, total_bytes / 1024.0 / images, batch, kCrop, timed);
  std::printf("| threads | images/s | ms per batch | images per CPU-second |\n|---|---|---|---|\n");
  for (int threads : thread_counts) {
    caffe::LayerParameter param;
    param.set_name("data");
    param.set_type("Data");
    param.set_phase(caffe::TRAIN);
    param.add_top("data");
    param.add_top("label");
    caffe::DataParameter* data_param = param.mutable_data_param();
    data_param->set_source(source);
    data_param->set_backend(caffe::DataParameter::LMDB);
    data_param->set_batch_size(batch);
    data_param->set_threads(threads);
    caffe::TransformationParameter* transform = param.mutable_transform_param();
    transform->set_crop_size(kCrop);
    transform->set_mirror(true);
    transform->set_mean_file(mean_file);
    caffe::Blob<float> data, label;
    const caffe::Blobs<float> top = {&data, &label};
    caffe::DataLayer<float> layer(param);
    layer.SetUp({}, top);
    // Drain the batches prefetched during setup, so the timing sees the production rate.
    for (uint32_t i = 0; i <= data_param->prefetch(); ++i) layer.Forward({}, top);
    const double cpu_start = CpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < timed; ++i) layer.Forward({}, top);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu_seconds = CpuSeconds() - cpu_start;
    std::printf("| %d | %.0f | %.1f | %.0f |\n", threads, timed * batch / seconds,
                1000.0 * seconds / timed, timed * batch / cpu_seconds);
    std::fflush(stdout);
  }
  std::filesystem::remove_all(dir);
  return 0;
#endif
}
