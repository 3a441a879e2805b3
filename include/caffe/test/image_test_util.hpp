// Helpers for tests that need image files (built with OpenCV only): deterministic test pictures,
// writing a folder of them with a "path label" list, and the values Caffe should read from them
// (C x H x W bytes in OpenCV's B, G, R order), computed here with OpenCV directly.
#ifndef CAFFE_TEST_IMAGE_TEST_UTIL_HPP_
#define CAFFE_TEST_IMAGE_TEST_UTIL_HPP_

#ifdef USE_OPENCV

#include <fstream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

namespace caffe {

/// A smooth H x W picture with 1 or 3 channels (gradients plus a few edges, so JPEG keeps it
/// close), different for each `seed`.
inline cv::Mat PatternImage(int height, int width, int channels, int seed) {
  cv::Mat image(height, width, channels == 3 ? CV_8UC3 : CV_8UC1);
  for (int h = 0; h < height; ++h) {
    for (int w = 0; w < width; ++w) {
      for (int c = 0; c < channels; ++c) {
        const int value = (seed * 37 + c * 70 + h * 5 + w * 3 + ((h / 4 + w / 4 + seed) % 2) * 40);
        image.ptr<uint8_t>(h)[w * channels + c] = static_cast<uint8_t>(value % 256);
      }
    }
  }
  return image;
}

/// The image's values as Caffe stores them: C x H x W.
inline std::vector<int> ImageValues(const cv::Mat& image) {
  const int channels = image.channels();
  std::vector<int> values(static_cast<size_t>(channels) * image.rows * image.cols);
  for (int c = 0; c < channels; ++c) {
    for (int h = 0; h < image.rows; ++h) {
      for (int w = 0; w < image.cols; ++w) {
        values[(static_cast<size_t>(c) * image.rows + h) * image.cols + w] =
            image.ptr<uint8_t>(h)[w * channels + c];
      }
    }
  }
  return values;
}

/// One image of a test folder: its file name (the extension picks PNG or JPEG), label, picture.
struct TestImage {
  std::string name;
  int label = 0;
  cv::Mat image;
};

/// Writes every image into `folder` and a list file of "name label" lines at `list_path`.
inline void WriteImageFolder(const std::string& folder, const std::vector<TestImage>& images,
                             const std::string& list_path) {
  std::ofstream list(list_path);
  for (const TestImage& image : images) {
    cv::imwrite(folder + "/" + image.name, image.image);
    list << image.name << " " << image.label << "\n";
  }
}

/// What Caffe reads from an image file: decoded by OpenCV in colour or gray, then resized to
/// height x width (bilinear) when both are > 0.
inline cv::Mat ExpectedImage(const std::string& path, bool is_color, int height = 0,
                             int width = 0) {
  cv::Mat image = cv::imread(path, is_color ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
  if (height > 0 && width > 0) {
    cv::Mat resized;
    cv::resize(image, resized, cv::Size(width, height));
    return resized;
  }
  return image;
}

}  // namespace caffe

#endif  // USE_OPENCV

#endif  // CAFFE_TEST_IMAGE_TEST_UTIL_HPP_
