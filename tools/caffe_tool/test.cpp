// `caffe test -model M -weights W [-iterations N]`: scores a model, as BVLC's does: each batch's
// outputs, the mean loss, and each output's mean (with its contribution to the loss).
#include <glog/logging.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/diagnostics/nonfinite_origin.hpp"
#include "caffe/net.hpp"
#include "caffe/solver.hpp"
#include "caffe_tool/command_registry.hpp"
#include "caffe_tool/flag_values.hpp"
#include "caffe_tool/flags.hpp"
#include "caffe_tool/lms_session.hpp"

namespace caffe_tool {
namespace {

using caffe::Blob;
using caffe::Net;
using std::string;
using std::vector;

/// The outputs' values summed over the batches run so far, each with the output it belongs to,
/// and the summed loss.
struct Scores {
  vector<int> output_id;
  vector<float> score;
  float loss = 0;
};

/// Runs batch `i` forward, logging each output value, and adds it to `scores`.
void ScoreBatch(Net<float>* net, int i, Scores* scores) {
  float iter_loss;
  const vector<Blob<float>*>& result = net->Forward(&iter_loss);
  if (!std::isfinite(iter_loss) && std::isfinite(scores->loss)) {  // the first such batch
    LOG(WARNING) << "the loss of batch " << i << " is " << caffe::NonFiniteName(iter_loss) << "; "
                 << caffe::ExplainNonFiniteOrigin(caffe::FindNonFiniteOrigin(*net),
                                                  /*base_lr=*/0);
  }
  scores->loss += iter_loss;
  int idx = 0;
  for (size_t j = 0; j < result.size(); ++j) {
    const float* result_vec = result[j]->cpu_data();
    const string& output_name = net->blob_names()[net->output_blob_indices()[j]];
    for (int k = 0; k < result[j]->count(); ++k, ++idx) {
      const float score = result_vec[k];
      if (i == 0) {
        scores->score.push_back(score);
        scores->output_id.push_back(static_cast<int>(j));
      } else {
        scores->score[idx] += score;
      }
      LOG(INFO) << "Batch " << i << ", " << output_name << " = " << score;
    }
  }
}

/// The mean loss, then each output's mean over the batches.
void LogMeans(const Net<float>& net, const Scores& scores) {
  LOG(INFO) << "Loss: " << scores.loss / FLAGS_iterations;
  for (size_t i = 0; i < scores.score.size(); ++i) {
    const int blob_index = net.output_blob_indices()[scores.output_id[i]];
    const string& output_name = net.blob_names()[blob_index];
    const float loss_weight = net.blob_loss_weights()[blob_index];
    const float mean_score = scores.score[i] / FLAGS_iterations;
    std::ostringstream loss_msg_stream;
    if (loss_weight) {
      loss_msg_stream << " (* " << loss_weight << " = " << loss_weight * mean_score << " loss)";
    }
    LOG(INFO) << output_name << " = " << mean_score << loss_msg_stream.str();
  }
}

int test() {
  CAFFE_CHECK(!FLAGS_model.empty()) << "test needs a model definition: -model FILE";
  CAFFE_CHECK(!FLAGS_weights.empty()) << "test needs model weights: -weights FILE";
  CheckIterations();
  WarnOfTrainOnlyFlags("test");
  const vector<string> stages = SplitList(FLAGS_stage);
  const vector<int> gpus = GetGpus();
  SetModeFromGpus(gpus);
  LmsSession lms(gpus);
  Net<float> caffe_net(FLAGS_model, caffe::TEST, FLAGS_level, &stages);
  caffe::LoadNetWeights(&caffe_net, FLAGS_weights);
  lms.Plan(&caffe_net, /*attach=*/true);
  LOG(INFO) << "Running for " << FLAGS_iterations << " iterations.";
  Scores scores;
  for (int i = 0; i < FLAGS_iterations; ++i) ScoreBatch(&caffe_net, i, &scores);
  LogMeans(caffe_net, scores);
  return 0;
}
REGISTER_CAFFE_COMMAND(test, "score a model");

}  // namespace
}  // namespace caffe_tool
