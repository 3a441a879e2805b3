// BVLC's C++ classification example: classifies one image with a trained net and prints the
// five most probable labels, as BVLC's classification.bin does:
//
//   build/examples/cpp_classification/classification.bin DEPLOY WEIGHTS MEAN LABELS IMAGE
//
// It is built with the rest of Caffe, and also on its own against an installed Caffe with the
// CMakeLists.txt beside it (find_package(Caffe), Caffe::caffe), as a user's own program would be.
//
// with, for BVLC's CaffeNet, DEPLOY models/bvlc_reference_caffenet/deploy.prototxt, WEIGHTS
// models/bvlc_reference_caffenet/bvlc_reference_caffenet.caffemodel, MEAN
// data/ilsvrc12/imagenet_mean.binaryproto, LABELS data/ilsvrc12/synset_words.txt, IMAGE cat.jpg:
//
//   ---------- Prediction for cat.jpg ----------
//   0.3134 - "n02123045 tabby, tabby cat"
//   ...
//
// The image is read in the net input's channels (3: BGR, 1: gray), resized bilinearly to its
// height and width, and less the mean: like BVLC's example, one value per channel, the average of
// that channel of the mean file. The net's first output holds the probabilities, one per line of
// the labels file. Runs on the GPU where one can be used, else on the CPU.
#include <algorithm>
#include <caffe/caffe.hpp>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace caffe {
namespace {

using Prediction = std::pair<std::string, float>;  // label, probability

class Classifier {
 public:
  Classifier(const std::string& model_file, const std::string& trained_file,
             const std::string& mean_file, const std::string& label_file);
  /// The `count` most probable labels for the image file, most probable first.
  std::vector<Prediction> Classify(const std::string& image_file, int count);

 private:
  void LoadMean(const std::string& mean_file);
  void LoadLabels(const std::string& label_file);

  std::unique_ptr<Net<float>> net_;
  Blob<float>* input_ = nullptr;
  std::vector<float> channel_mean_;
  std::vector<std::string> labels_;
};

Classifier::Classifier(const std::string& model_file, const std::string& trained_file,
                       const std::string& mean_file, const std::string& label_file) {
  net_ = std::make_unique<Net<float>>(model_file, TEST);
  net_->CopyTrainedLayersFrom(trained_file);
  CAFFE_CHECK(net_->num_inputs() == 1)
      << model_file << ": the net should have exactly one input, it has " << net_->num_inputs();
  CAFFE_CHECK(net_->num_outputs() == 1)
      << model_file << ": the net should have exactly one output, it has " << net_->num_outputs();
  input_ = net_->input_blobs()[0];
  CAFFE_CHECK(input_->num_axes() == 4 && (input_->channels() == 3 || input_->channels() == 1))
      << model_file << ": the input should be N x 1 or 3 x H x W (gray or BGR images), it is "
      << input_->shape_string();
  LoadMean(mean_file);
  LoadLabels(label_file);
  const Blob<float>& output = *net_->output_blobs()[0];
  CAFFE_CHECK(static_cast<int>(labels_.size()) == output.channels())
      << label_file << " has " << labels_.size() << " labels but the net's output has "
      << output.channels() << " channels";
}

void Classifier::LoadMean(const std::string& mean_file) {
  BlobProto proto;
  ReadProtoFromBinaryFile(mean_file, &proto);
  Blob<float> mean;
  mean.FromProto(proto);
  CAFFE_CHECK(mean.num_axes() == 4 && mean.channels() == input_->channels())
      << mean_file << ": the mean has shape " << mean.shape_string() << " but the net takes "
      << input_->channels() << " channels";
  const int spatial = mean.height() * mean.width();
  CAFFE_CHECK(spatial > 0) << mean_file << ": the mean image is empty";
  for (int c = 0; c < mean.channels(); ++c) {
    const float* plane = mean.cpu_data() + mean.offset(0, c);
    double sum = 0;
    for (int i = 0; i < spatial; ++i) sum += plane[i];
    channel_mean_.push_back(static_cast<float>(sum / spatial));
  }
}

void Classifier::LoadLabels(const std::string& label_file) {
  std::ifstream labels(label_file);
  CAFFE_CHECK(labels) << label_file << ": cannot open the labels file";
  std::string line;
  while (std::getline(labels, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels_.push_back(line);
  }
}

std::vector<Prediction> Classifier::Classify(const std::string& image_file, int count) {
  const int height = input_->height(), width = input_->width();
  Datum image;
  ReadImageToDatum(image_file, 0, height, width, input_->channels() == 3, "", &image);
  input_->Reshape({1, input_->channels(), height, width});
  net_->Reshape();
  float* input = input_->mutable_cpu_data();
  const std::string& pixels = image.data();
  for (int c = 0; c < input_->channels(); ++c) {
    for (int i = 0; i < height * width; ++i) {
      const int index = c * height * width + i;
      input[index] = static_cast<uint8_t>(pixels[index]) - channel_mean_[c];
    }
  }
  net_->Forward();
  const Blob<float>& output = *net_->output_blobs()[0];
  const float* probabilities = output.cpu_data();
  std::vector<Prediction> predictions;
  for (size_t i = 0; i < labels_.size(); ++i) {
    predictions.emplace_back(labels_[i], probabilities[i]);
  }
  count = std::min<int>(count, predictions.size());
  std::partial_sort(predictions.begin(), predictions.begin() + count, predictions.end(),
                    [](const Prediction& a, const Prediction& b) { return a.second > b.second; });
  predictions.resize(count);
  return predictions;
}

}  // namespace
}  // namespace caffe

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "Usage: " << argv[0]
              << " deploy.prototxt network.caffemodel mean.binaryproto labels.txt img.jpg"
              << std::endl;
    return 1;
  }
  FLAGS_logtostderr = 1;
  FLAGS_minloglevel = 1;  // warnings and errors only, as BVLC's example
  try {
    caffe::GlobalInit(&argc, &argv);
    if (caffe::Caffe::GpuAvailable()) {
      caffe::Caffe::SetDevice(0);
      caffe::Caffe::set_mode(caffe::Caffe::GPU);
    }
    caffe::Classifier classifier(argv[1], argv[2], argv[3], argv[4]);
    const std::string file = argv[5];
    const std::vector<caffe::Prediction> predictions = classifier.Classify(file, 5);
    std::cout << "---------- Prediction for " << file << " ----------" << std::endl;
    for (const caffe::Prediction& prediction : predictions) {
      std::cout << std::fixed << std::setprecision(4) << prediction.second << " - \""
                << prediction.first << "\"" << std::endl;
    }
  } catch (const caffe::Error& error) {
    std::cerr << "classification: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
