#include "caffe/solver.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "caffe/diagnostics/nonfinite_origin.hpp"
#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/kernels/denormals.hpp"
#include "caffe/resumable_layer.hpp"
#include "caffe/timeline/timeline.hpp"

namespace caffe {

template <typename Dtype>
void LoadNetWeights(Net<Dtype>* net, const string& model_list) {
  std::istringstream models(model_list);
  string model;
  while (std::getline(models, model, ',')) {
    if (model.empty()) continue;
    LOG_IF(INFO, Caffe::root_solver()) << "Finetuning from " << model;
    net->CopyTrainedLayersFrom(model);
  }
}
template void LoadNetWeights<float>(Net<float>*, const string&);
template void LoadNetWeights<double>(Net<double>*, const string&);

template <typename Dtype>
Solver<Dtype>::Solver(const SolverParameter& param) {
  Init(param);
}

template <typename Dtype>
Solver<Dtype>::Solver(const string& param_file) {
  SolverParameter param;
  ReadSolverParamsFromTextFile(param_file, &param);
  Init(param);
}

template <typename Dtype>
void Solver<Dtype>::Init(const SolverParameter& param) {
  LOG_IF(INFO, Caffe::root_solver()) << "Initializing solver from parameters: " << std::endl
                                     << param.DebugString();
  param_ = param;
  CAFFE_CHECK_GE(param_.average_loss(), 1) << "solver: average_loss must be at least 1";
  CAFFE_CHECK_GE(param_.iter_size(), 1) << "solver: iter_size must be at least 1";
  CAFFE_CHECK_GE(param_.max_iter(), 0) << "solver: max_iter must not be negative";
  CheckSnapshotWritePermissions();
  if (param_.random_seed() >= 0) {
    Caffe::set_random_seed(param_.random_seed() + Caffe::solver_rank());
  }
  InitTrainNet();
  InitTestNets();
  LOG_IF(INFO, Caffe::root_solver()) << "Solver scaffolding done.";
  iter_ = 0;
  current_step_ = 0;
}

template <typename Dtype>
void Solver<Dtype>::InitTrainNet() {
  const int num_train_nets = param_.has_net() + param_.has_net_param() + param_.has_train_net() +
                             param_.has_train_net_param();
  const string field_names = "net, net_param, train_net, train_net_param";
  CAFFE_CHECK_GE(num_train_nets, 1)
      << "the solver must name a train net with one of these fields: " << field_names;
  CAFFE_CHECK_LE(num_train_nets, 1)
      << "the solver names more than one train net; use only one of: " << field_names;
  NetParameter net_param;
  if (param_.has_train_net_param()) {
    LOG_IF(INFO, Caffe::root_solver()) << "Creating training net specified in train_net_param.";
    net_param.CopyFrom(param_.train_net_param());
  } else if (param_.has_train_net()) {
    LOG_IF(INFO, Caffe::root_solver())
        << "Creating training net from train_net file: " << param_.train_net();
    ReadNetParamsFromTextFile(param_.train_net(), &net_param);
  }
  if (param_.has_net_param()) {
    LOG_IF(INFO, Caffe::root_solver()) << "Creating training net specified in net_param.";
    net_param.CopyFrom(param_.net_param());
  }
  if (param_.has_net()) {
    LOG_IF(INFO, Caffe::root_solver()) << "Creating training net from net file: " << param_.net();
    ReadNetParamsFromTextFile(param_.net(), &net_param);
  }
  // NetState precedence: solver defaults, then the net's own state, then train_state.
  NetState net_state;
  net_state.set_phase(TRAIN);
  net_state.MergeFrom(net_param.state());
  net_state.MergeFrom(param_.train_state());
  net_param.mutable_state()->CopyFrom(net_state);
  net_ = std::make_shared<Net<Dtype>>(net_param);
  loss_scaler_ = std::make_unique<LossScaler>(param_, net_param);
  for (const string& weights : param_.weights()) LoadNetWeights(net_.get(), weights);
}

template <typename Dtype>
void Solver<Dtype>::InitTestNets() {
  const bool has_net_param = param_.has_net_param();
  const bool has_net_file = param_.has_net();
  const int num_generic_nets = has_net_param + has_net_file;
  CAFFE_CHECK_LE(num_generic_nets, 1) << "the solver sets both net_param and net; use one";
  const int num_test_net_params = param_.test_net_param_size();
  const int num_test_net_files = param_.test_net_size();
  const int num_test_nets = num_test_net_params + num_test_net_files;
  if (num_generic_nets) {
    CAFFE_CHECK_GE(param_.test_iter_size(), num_test_nets)
        << "the solver must give a test_iter for each test net";
  } else {
    CAFFE_CHECK_EQ(param_.test_iter_size(), num_test_nets)
        << "the solver must give a test_iter for each test net";
  }
  // A generic net (net / net_param) serves as the test net for each remaining test_iter.
  const int num_generic_net_instances = param_.test_iter_size() - num_test_nets;
  const int num_test_net_instances = num_test_nets + num_generic_net_instances;
  if (param_.test_state_size()) {
    CAFFE_CHECK_EQ(param_.test_state_size(), num_test_net_instances)
        << "test_state must be unspecified or given once per test net";
  }
  if (num_test_net_instances) {
    CAFFE_CHECK_GT(param_.test_interval(), 0)
        << "the solver has test nets (test_iter), so test_interval must be positive";
  }
  int test_net_id = 0;
  vector<string> sources(num_test_net_instances);
  vector<NetParameter> net_params(num_test_net_instances);
  for (int i = 0; i < num_test_net_params; ++i, ++test_net_id) {
    sources[test_net_id] = "test_net_param";
    net_params[test_net_id].CopyFrom(param_.test_net_param(i));
  }
  for (int i = 0; i < num_test_net_files; ++i, ++test_net_id) {
    sources[test_net_id] = "test_net file: " + param_.test_net(i);
    ReadNetParamsFromTextFile(param_.test_net(i), &net_params[test_net_id]);
  }
  const int remaining_test_nets = param_.test_iter_size() - test_net_id;
  if (has_net_param) {
    for (int i = 0; i < remaining_test_nets; ++i, ++test_net_id) {
      sources[test_net_id] = "net_param";
      net_params[test_net_id].CopyFrom(param_.net_param());
    }
  }
  if (has_net_file) {
    for (int i = 0; i < remaining_test_nets; ++i, ++test_net_id) {
      sources[test_net_id] = "net file: " + param_.net();
      ReadNetParamsFromTextFile(param_.net(), &net_params[test_net_id]);
    }
  }
  test_nets_.resize(num_test_net_instances);
  for (int i = 0; i < num_test_net_instances; ++i) {
    NetState net_state;
    net_state.set_phase(TEST);
    net_state.MergeFrom(net_params[i].state());
    if (param_.test_state_size()) net_state.MergeFrom(param_.test_state(i));
    net_params[i].mutable_state()->CopyFrom(net_state);
    LOG_IF(INFO, Caffe::root_solver())
        << "Creating test net (#" << i << ") specified by " << sources[i];
    test_nets_[i] = std::make_shared<Net<Dtype>>(net_params[i]);
    // Each test shares the training net's weights: a mismatch is an error now, not at the
    // first test, which may come hours into training.
    test_nets_[i]->CheckCanShareTrainedLayersWith(*net_);
    test_nets_[i]->set_debug_info(param_.debug_info());
    for (const string& weights : param_.weights()) LoadNetWeights(test_nets_[i].get(), weights);
  }
}

template <typename Dtype>
SolverAction::Enum Solver<Dtype>::GetRequestedAction() {
  if (action_request_function_) return action_request_function_();
  return SolverAction::NONE;
}

template <typename Dtype>
void Solver<Dtype>::Step(int iters) {
  const int start_iter = iter_;
  const int stop_iter = iter_ + iters;
  const int average_loss = param_.average_loss();
  losses_.clear();
  smoothed_loss_ = 0;
  iteration_timer_.Start();
  timeline::NameThread(Caffe::solver_count() > 1 ? "solver " + std::to_string(Caffe::solver_rank())
                                                 : string("solver"));
  while (iter_ < stop_iter) {
    timeline::SetIteration(iter_);
    timeline::Slice step("step",
                         timeline::Recording() ? "iteration " + std::to_string(iter_) : string());
    step.Arg("iteration", iter_);
    ScopedFlushDenormals flush_denormals;  // the update's arithmetic too (momentum decays)
    {
      timeline::Slice clear("update", "clear gradients");
      net_->ClearParamDiffs();
    }
    if (param_.test_interval() && iter_ % param_.test_interval() == 0 &&
        (iter_ > 0 || param_.test_initialization())) {
      if (Caffe::root_solver()) TestAll();
      if (requested_early_exit_) break;
    }
    if (!callbacks_.empty()) {
      timeline::Slice sync("communication", "step start sync");
      for (Callback* callback : callbacks_) callback->on_start();
    }
    const bool display = param_.display() && iter_ % param_.display() == 0;
    net_->set_debug_info(display && param_.debug_info());
    if (loss_scaler_->scale() != net_loss_scale_) {
      net_loss_scale_ = loss_scaler_->scale();
      net_->SetLossScale(net_loss_scale_);
    }
    Dtype loss = 0;
    for (int i = 0; i < param_.iter_size(); ++i) {
      const Dtype pass_loss = net_->ForwardBackward();
      // Checked per pass, while the blobs still hold the pass that went wrong.
      if (!std::isfinite(pass_loss)) WarnOfNonFiniteLoss(pass_loss);
      loss += pass_loss;
    }
    loss /= param_.iter_size();
    if (std::isfinite(loss)) {
      last_finite_loss_iter_ = iter_;
      nonfinite_loss_warned_ = false;
    }
    if (!callbacks_.empty()) {
      timeline::Slice sync("communication", "loss sync");
      for (Callback* callback : callbacks_) callback->on_loss_ready(&loss);
    }
    UpdateSmoothedLoss(loss, start_iter, average_loss);
    if (display) {
      timeline::Slice log("log", "display");
      const float lapse = iteration_timer_.Seconds();
      const float per_s = (iter_ - iterations_last_) / (lapse ? lapse : 1);
      LOG_IF(INFO, Caffe::root_solver())
          << "Iteration " << iter_ << " (" << per_s << " iter/s, " << lapse << "s/"
          << param_.display() << " iters), loss = " << smoothed_loss_;
      iteration_timer_.Start();
      iterations_last_ = iter_;
      const Blobs<Dtype>& result = net_->output_blobs();
      int score_index = 0;
      for (size_t j = 0; j < result.size(); ++j) {
        const Dtype* result_vec = result[j]->cpu_data();
        const int blob_index = net_->output_blob_indices()[j];
        const string& output_name = net_->blob_names()[blob_index];
        const Dtype loss_weight = net_->blob_loss_weights()[blob_index];
        for (int k = 0; k < result[j]->count(); ++k) {
          std::ostringstream loss_msg_stream;
          if (loss_weight) {
            loss_msg_stream << " (* " << loss_weight << " = " << loss_weight * result_vec[k]
                            << " loss)";
          }
          LOG_IF(INFO, Caffe::root_solver())
              << "    Train net output #" << score_index++ << ": " << output_name << " = "
              << result_vec[k] << loss_msg_stream.str();
        }
      }
    }
    if (!callbacks_.empty()) {
      // Where a synchronizer averages the gradients (or waits for the average) with the others.
      timeline::Slice sync("communication", "gradient sync");
      for (Callback* callback : callbacks_) callback->on_gradients_ready();
    }
    if (!loss_scaler_->active() || UnscaleGradients()) {
      timeline::Slice update("update", "update");
      ApplyUpdate();
    }
    // iter_ counts the updates applied so far.
    ++iter_;
    SolverAction::Enum request = GetRequestedAction();
    if ((param_.snapshot() && iter_ % param_.snapshot() == 0 && Caffe::root_solver()) ||
        request == SolverAction::SNAPSHOT) {
      Snapshot();
    }
    if (request == SolverAction::STOP) {
      requested_early_exit_ = true;
      break;
    }
  }
}

template <typename Dtype>
void Solver<Dtype>::Solve(const char* resume_file) {
  CHECK(Caffe::root_solver());
  LOG(INFO) << "Solving " << net_->name();
  LOG(INFO) << "Learning Rate Policy: " << param_.lr_policy();
  requested_early_exit_ = false;
  if (resume_file != nullptr && *resume_file) {
    LOG(INFO) << "Restoring previous solver status from " << resume_file;
    Restore(resume_file);
  }
  const int start_iter = iter_;
  Step(param_.max_iter() - iter_);
  timeline::SetIteration(iter_);
  // A final snapshot unless the schedule just wrote one (or the user asked for none).
  if (param_.snapshot_after_train() && (!param_.snapshot() || iter_ % param_.snapshot() != 0)) {
    Snapshot();
  }
  if (requested_early_exit_) {
    LOG(INFO) << "Optimization stopped early.";
    return;
  }
  // One more forward pass to show the final loss, and a final test, on the usual schedule.
  if (param_.display() && iter_ % param_.display() == 0) {
    Dtype loss;
    net_->Forward(&loss);
    UpdateSmoothedLoss(loss, start_iter, param_.average_loss());
    LOG(INFO) << "Iteration " << iter_ << ", loss = " << smoothed_loss_;
  }
  if (param_.test_interval() && iter_ % param_.test_interval() == 0) TestAll();
  LOG(INFO) << "Optimization Done.";
}

template <typename Dtype>
bool Solver<Dtype>::UnscaleGradients() {
  timeline::Slice unscale("update", "loss scaling");
  const Blobs<Dtype>& params = net_->learnable_params();
  bool finite = true;
  // A sum of absolute values is not finite exactly where some value is not (or where the
  // gradients are within a factor of the count of fp32's largest, as good as an overflow).
  for (size_t i = 0; i < params.size() && finite; ++i)
    finite = std::isfinite(params[i]->asum_diff());
  if (!loss_scaler_->AfterGradients(finite, iter_)) return false;
  if (net_loss_scale_ != Dtype(1)) {
    for (Blob<Dtype>* param : params) param->scale_diff(Dtype(1) / net_loss_scale_);
  }
  return true;
}

template <typename Dtype>
void Solver<Dtype>::WarnOfNonFiniteLoss(Dtype loss) {
  if (nonfinite_loss_warned_) return;
  nonfinite_loss_warned_ = true;
  const NonFiniteOrigin origin = FindNonFiniteOrigin(*net_);
  // Weights are the same on every learner: the root alone says so.
  if (origin.source == NonFiniteSource::kWeights && !Caffe::root_solver()) return;
  std::ostringstream text;
  if (Caffe::solver_count() > 1) text << "learner " << Caffe::solver_rank() << ": ";
  // Worded so that log parsers matching "Iteration N" and "loss = " do not take it for a row.
  text << "the training loss at iteration " << iter_ << " is " << NonFiniteName(loss);
  if (last_finite_loss_iter_ >= 0) {
    text << " (finite at iteration " << last_finite_loss_iter_ << ")";
  }
  text << "; " << ExplainNonFiniteOrigin(origin, param_.base_lr());
  LOG(WARNING) << text.str();
}

template <typename Dtype>
void Solver<Dtype>::TestAll() {
  timeline::Slice slice("test", "test");
  for (size_t test_net_id = 0; test_net_id < test_nets_.size() && !requested_early_exit_;
       ++test_net_id) {
    Test(static_cast<int>(test_net_id));
  }
}

template <typename Dtype>
void Solver<Dtype>::Test(int test_net_id) {
  CHECK(Caffe::root_solver());
  LOG(INFO) << "Iteration " << iter_ << ", Testing net (#" << test_net_id << ")";
  const shared_ptr<Net<Dtype>>& test_net = test_nets_[test_net_id];
  test_net->ShareTrainedLayersWith(net_.get());
  vector<Dtype> test_score;
  vector<int> test_score_output_id;
  Dtype loss = 0;
  for (int i = 0; i < param_.test_iter(test_net_id); ++i) {
    // Honour stop/snapshot requests during long test passes too.
    for (SolverAction::Enum request = GetRequestedAction(); request != SolverAction::NONE;
         request = GetRequestedAction()) {
      if (request == SolverAction::SNAPSHOT) {
        Snapshot();
      } else if (request == SolverAction::STOP) {
        requested_early_exit_ = true;
      }
    }
    if (requested_early_exit_) break;
    Dtype iter_loss;
    const Blobs<Dtype>& result = test_net->Forward(&iter_loss);
    if (!std::isfinite(iter_loss) && !test_nonfinite_loss_warned_) {
      test_nonfinite_loss_warned_ = true;
      LOG(WARNING) << "the loss of test net #" << test_net_id << " at iteration " << iter_
                   << " (test batch " << i << ") is " << NonFiniteName(iter_loss) << "; "
                   << ExplainNonFiniteOrigin(FindNonFiniteOrigin(*test_net), param_.base_lr());
    }
    if (param_.test_compute_loss()) loss += iter_loss;
    int idx = 0;
    for (size_t j = 0; j < result.size(); ++j) {
      const Dtype* result_vec = result[j]->cpu_data();
      for (int k = 0; k < result[j]->count(); ++k, ++idx) {
        if (i == 0) {
          test_score.push_back(result_vec[k]);
          test_score_output_id.push_back(static_cast<int>(j));
        } else {
          test_score[idx] += result_vec[k];
        }
      }
    }
  }
  if (requested_early_exit_) {
    LOG(INFO) << "Test interrupted.";
    return;
  }
  if (param_.test_compute_loss()) {
    loss /= param_.test_iter(test_net_id);
    LOG(INFO) << "Test loss: " << loss;
  }
  for (size_t i = 0; i < test_score.size(); ++i) {
    const int output_blob_index = test_net->output_blob_indices()[test_score_output_id[i]];
    const string& output_name = test_net->blob_names()[output_blob_index];
    const Dtype loss_weight = test_net->blob_loss_weights()[output_blob_index];
    const Dtype mean_score = test_score[i] / param_.test_iter(test_net_id);
    std::ostringstream loss_msg_stream;
    if (loss_weight) {
      loss_msg_stream << " (* " << loss_weight << " = " << loss_weight * mean_score << " loss)";
    }
    LOG(INFO) << "    Test net output #" << i << ": " << output_name << " = " << mean_score
              << loss_msg_stream.str();
  }
}

template <typename Dtype>
void Solver<Dtype>::Snapshot() {
  CHECK(Caffe::root_solver());
  timeline::Slice slice("snapshot", "snapshot");
  string model_filename;
  switch (param_.snapshot_format()) {
    case SolverParameter_SnapshotFormat_BINARYPROTO:
      model_filename = SnapshotToBinaryProto();
      break;
    case SolverParameter_SnapshotFormat_HDF5:
      model_filename = SnapshotToHDF5();
      break;
  }
  SnapshotSolverState(model_filename);
}

template <typename Dtype>
void Solver<Dtype>::CheckSnapshotWritePermissions() {
  if (!Caffe::root_solver() || !param_.snapshot()) return;
  CAFFE_CHECK(param_.has_snapshot_prefix()) << "the solver snapshots every " << param_.snapshot()
                                            << " iterations but has no snapshot_prefix";
  const string probe_filename = SnapshotFilename(".tempfile");
  FILE* probe = std::fopen(probe_filename.c_str(), "w");
  CAFFE_CHECK(probe != nullptr) << "cannot write snapshots with prefix '"
                                << param_.snapshot_prefix() << "' (tried " << probe_filename
                                << "); check that the folder exists and is writable";
  std::fclose(probe);
  std::remove(probe_filename.c_str());
}

template <typename Dtype>
string Solver<Dtype>::SnapshotFilename(const string& extension) const {
  return param_.snapshot_prefix() + "_iter_" + std::to_string(iter_) + extension;
}

template <typename Dtype>
string Solver<Dtype>::SnapshotToBinaryProto() {
  const string model_filename = SnapshotFilename(".caffemodel");
  LOG(INFO) << "Snapshotting to binary proto file " << model_filename;
  NetParameter net_param;
  net_->ToProto(&net_param, param_.snapshot_diff());
  WriteProtoToBinaryFile(net_param, model_filename);
  return model_filename;
}

template <typename Dtype>
string Solver<Dtype>::SnapshotToHDF5() {
  const string model_filename = SnapshotFilename(".caffemodel.h5");
  LOG(INFO) << "Snapshotting to HDF5 file " << model_filename;
  AtomicWrite(model_filename,
              [&](const string& temporary) { net_->ToHDF5(temporary, param_.snapshot_diff()); });
  return model_filename;
}

template <typename Dtype>
void Solver<Dtype>::Restore(const char* state_file) {
  const string state_filename(state_file);
  CAFFE_CHECK(FileExists(state_filename))
      << "cannot resume: solver state file '" << state_filename << "' not found";
  CAFFE_CHECK(!EndsWith(state_filename, ".caffemodel") &&
              !EndsWith(state_filename, ".caffemodel.h5"))
      << "cannot resume from '" << state_filename << "': that is a weights file; pass the "
      << ".solverstate to -snapshot, or the weights to -weights to fine-tune from them";
  if (EndsWith(state_filename, ".h5")) {
    RestoreSolverStateFromHDF5(state_filename);
  } else {
    RestoreSolverStateFromBinaryProto(state_filename);
  }
}

template <typename Dtype>
void Solver<Dtype>::UpdateSmoothedLoss(Dtype loss, int start_iter, int average_loss) {
  if (static_cast<int>(losses_.size()) < average_loss) {
    losses_.push_back(loss);
    const int size = static_cast<int>(losses_.size());
    smoothed_loss_ = (smoothed_loss_ * (size - 1) + loss) / size;
  } else {
    const int idx = (iter_ - start_iter) % average_loss;
    smoothed_loss_ += (loss - losses_[idx]) / average_loss;
    losses_[idx] = loss;
  }
}

template <typename Dtype>
void Solver<Dtype>::SaveCommonState(const string& model_filename, SolverState* state) const {
  state->set_iter(iter_);
  state->set_learned_net(model_filename);
  state->set_current_step(current_step_);
  state->set_rng_state(Caffe::rng().SaveState());
  state->set_learners(Caffe::solver_count());
  for (const auto& layer : net_->layers()) {
    if (auto* resumable = dynamic_cast<const ResumableLayer*>(layer.get())) {
      DataCursor* cursor = state->add_data_cursor();
      *cursor = resumable->SaveCursor();
      cursor->set_layer(layer->layer_param().name());
    }
  }
}

template <typename Dtype>
void Solver<Dtype>::RestoreCommonState(const SolverState& state) {
  iter_ = state.iter();
  if (state.has_learned_net()) {
    CAFFE_CHECK(FileExists(state.learned_net()))
        << "the solver state refers to weights '" << state.learned_net()
        << "', which do not exist (resume from the folder the snapshot was taken in)";
    net_->CopyTrainedLayersFrom(state.learned_net());
  }
  current_step_ = state.current_step();
  if (state.has_rng_state()) {
    CAFFE_CHECK(Caffe::rng().LoadState(state.rng_state()))
        << "the solver state's random generator state is corrupt";
  }
  for (const DataCursor& cursor : state.data_cursor()) {
    if (!net_->has_layer(cursor.layer())) {
      LOG(WARNING) << "The snapshot has a data position for layer '" << cursor.layer()
                   << "', which this net lacks; ignoring it.";
      continue;
    }
    auto layer = net_->layer_by_name(cursor.layer());
    if (auto* resumable = dynamic_cast<ResumableLayer*>(layer.get())) {
      resumable->RestoreCursor(cursor);
    }
  }
}

INSTANTIATE_CLASS(Solver);

}  // namespace caffe
