#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <typeinfo>
#include <vector>

#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/snapshot_files.hpp"
#include "caffe/solvers/gpu_updates.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

// Plain SGD's whole CPU update of one parameter in one pass over memory: L2 decay, momentum,
// the step, and the step left in the diff as BVLC leaves it. Apart (BVLC's Regularize,
// ComputeUpdateValue and Net::Update) the same arithmetic takes 4 passes that read 8 and write 4
// parameter-sized arrays; here 3 and 3. CaffeNet's 61 million weights: 2.9 -> 1.5 GB a step.
template <typename Dtype, bool kDecay>
void SgdUpdateInOnePass(int count, Dtype decay, Dtype rate, Dtype momentum, Dtype* data,
                        Dtype* diff, Dtype* history) {
  caffe_parallel_for(count, [=](int i) {
    const Dtype gradient = kDecay ? decay * data[i] + diff[i] : diff[i];
    const Dtype step = rate * gradient + momentum * history[i];
    history[i] = step;
    diff[i] = step;
    data[i] -= step;
  });
}

}  // namespace

// The learning-rate policy, checked before any net is built rather than at the first iteration
// (after the nets' setup and, with test_initialization, a whole test pass): SGDSolver's
// constructors pass the parameters through this to Solver's, which builds the nets.
const SolverParameter& CheckLrPolicy(const SolverParameter& param) {
  static const vector<string> known = {"fixed",     "step", "exp",    "inv",
                                       "multistep", "poly", "sigmoid"};
  const string& policy = param.lr_policy();
  CAFFE_CHECK(std::find(known.begin(), known.end(), policy) != known.end())
      << "solver: "
      << (policy.empty() ? "no lr_policy given" : "unknown lr_policy \"" + policy + "\"")
      << "; known: " << Join(known, ", ");
  CAFFE_CHECK(policy != "step" || param.stepsize() > 0)
      << "solver: lr_policy \"step\" needs a positive stepsize (" << param.stepsize() << ")";
  CAFFE_CHECK(policy != "poly" || param.max_iter() > 0)
      << "solver: lr_policy \"poly\" needs a positive max_iter (" << param.max_iter() << ")";
  return param;
}

SolverParameter ReadSolverParamsWithLrPolicy(const string& param_file) {
  SolverParameter param;
  ReadSolverParamsFromTextFile(param_file, &param);
  CheckLrPolicy(param);
  return param;
}

template <typename Dtype>
Dtype SGDSolver<Dtype>::GetLearningRate() {
  const string& lr_policy = this->param_.lr_policy();
  const Dtype base_lr = this->param_.base_lr();
  const Dtype gamma = this->param_.gamma();
  const Dtype power = this->param_.power();
  const int iter = this->iter_;
  if (lr_policy == "fixed") return base_lr;
  if (lr_policy == "step") {
    this->current_step_ = iter / this->param_.stepsize();
    return base_lr * std::pow(gamma, Dtype(this->current_step_));
  }
  if (lr_policy == "exp") return base_lr * std::pow(gamma, Dtype(iter));
  if (lr_policy == "inv") return base_lr * std::pow(Dtype(1) + gamma * iter, -power);
  if (lr_policy == "multistep") {
    if (this->current_step_ < this->param_.stepvalue_size() &&
        iter >= this->param_.stepvalue(this->current_step_)) {
      this->current_step_++;
      LOG(INFO) << "MultiStep Status: Iteration " << iter << ", step = " << this->current_step_;
    }
    return base_lr * std::pow(gamma, Dtype(this->current_step_));
  }
  if (lr_policy == "poly") {
    return base_lr * std::pow(Dtype(1) - Dtype(iter) / Dtype(this->param_.max_iter()), power);
  }
  if (lr_policy == "sigmoid") {
    return base_lr *
           (Dtype(1) /
            (Dtype(1) + std::exp(-gamma * (Dtype(iter) - Dtype(this->param_.stepsize())))));
  }
  CAFFE_THROW() << "lr_policy \"" << lr_policy << "\" passed CheckLrPolicy but has no rule here";
}

template <typename Dtype>
void SGDSolver<Dtype>::PreSolve() {
  const Blobs<Dtype>& net_params = this->net_->learnable_params();
  history_.clear();
  update_.clear();
  temp_.clear();
  for (Blob<Dtype>* param : net_params) {
    history_.push_back(std::make_shared<Blob<Dtype>>(param->shape()));
    update_.push_back(std::make_shared<Blob<Dtype>>(param->shape()));
    temp_.push_back(std::make_shared<Blob<Dtype>>(param->shape()));
  }
  // Settings the update needs are checked now, not at the first update.
  const string& type = this->param_.regularization_type();
  CAFFE_CHECK(type == "L2" || type == "L1")
      << "unknown regularization_type \"" << type << "\"; known: L2, L1";
}

template <typename Dtype>
void SGDSolver<Dtype>::ClipGradients() {
  const Dtype clip_gradients = this->param_.clip_gradients();
  if (clip_gradients < 0) return;
  const Blobs<Dtype>& net_params = this->net_->learnable_params();
  Dtype sumsq_diff = 0;
  for (Blob<Dtype>* param : net_params) sumsq_diff += param->sumsq_diff();
  const Dtype l2norm_diff = std::sqrt(sumsq_diff);
  if (l2norm_diff > clip_gradients) {
    const Dtype scale_factor = clip_gradients / l2norm_diff;
    LOG(INFO) << "Gradient clipping: scaling down gradients (L2 norm " << l2norm_diff << " > "
              << clip_gradients << ") by scale factor " << scale_factor;
    for (Blob<Dtype>* param : net_params) param->scale_diff(scale_factor);
  }
}

template <typename Dtype>
void SGDSolver<Dtype>::ApplyUpdate() {
  const Dtype rate = GetLearningRate();
  if (this->param_.display() && this->iter_ % this->param_.display() == 0) {
    LOG_IF(INFO, Caffe::root_solver()) << "Iteration " << this->iter_ << ", lr = " << rate;
  }
  ClipGradients();
  // SGD itself (not a subclass with its own rule), on the CPU, with L2 decay and without the
  // debug output that shows each step between the passes: one pass per parameter.
  const bool one_pass = Caffe::mode() == Caffe::CPU && typeid(*this) == typeid(SGDSolver) &&
                        this->param_.regularization_type() == "L2" && !this->param_.debug_info();
  const auto& params = this->net_->learnable_params();
  for (size_t param_id = 0; param_id < params.size(); ++param_id) {
    Normalize(static_cast<int>(param_id));
    if (one_pass) {
      Blob<Dtype>* param = params[param_id];
      const Dtype decay = this->param_.weight_decay() * this->net_->params_weight_decay()[param_id];
      const Dtype local_rate = rate * this->net_->params_lr()[param_id];
      const auto update =
          decay ? SgdUpdateInOnePass<Dtype, true> : SgdUpdateInOnePass<Dtype, false>;
      update(param->count(), decay, local_rate, this->param_.momentum(), param->mutable_cpu_data(),
             param->mutable_cpu_diff(), history_[param_id]->mutable_cpu_data());
      continue;
    }
    Regularize(static_cast<int>(param_id));
    ComputeUpdateValue(static_cast<int>(param_id), rate);
  }
  if (!one_pass) this->net_->Update();
}

template <typename Dtype>
void SGDSolver<Dtype>::Normalize(int param_id) {
  if (this->param_.iter_size() == 1) return;
  // The diffs summed over iter_size passes become their mean.
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    if (param->count() > 0) {
      caffe_gpu_scal(param->count(), Dtype(1) / this->param_.iter_size(),
                     param->mutable_gpu_diff());
    }
    return;
  }
#endif
  caffe_scal(param->count(), Dtype(1) / this->param_.iter_size(), param->mutable_cpu_diff());
}

template <typename Dtype>
void SGDSolver<Dtype>::Regularize(int param_id) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype local_decay =
      this->param_.weight_decay() * this->net_->params_weight_decay()[param_id];
  if (!local_decay) return;
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    if (param->count() == 0) return;
    if (this->param_.regularization_type() == "L2") {
      caffe_gpu_axpy(param->count(), local_decay, param->gpu_data(), param->mutable_gpu_diff());
    } else {
      caffe_gpu_sign(param->count(), param->gpu_data(), temp_[param_id]->mutable_gpu_data());
      caffe_gpu_axpy(param->count(), local_decay, temp_[param_id]->gpu_data(),
                     param->mutable_gpu_diff());
    }
    return;
  }
#endif
  if (this->param_.regularization_type() == "L2") {
    caffe_axpy(param->count(), local_decay, param->cpu_data(), param->mutable_cpu_diff());
  } else {
    caffe_cpu_sign(param->count(), param->cpu_data(), temp_[param_id]->mutable_cpu_data());
    caffe_axpy(param->count(), local_decay, temp_[param_id]->cpu_data(), param->mutable_cpu_diff());
  }
}

template <typename Dtype>
void SGDSolver<Dtype>::ComputeUpdateValue(int param_id, Dtype rate) {
  Blob<Dtype>* param = this->net_->learnable_params()[param_id];
  const Dtype momentum = this->param_.momentum();
  const Dtype local_rate = rate * this->net_->params_lr()[param_id];
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    sgd_update_gpu(param->count(), param->mutable_gpu_diff(),
                   history_[param_id]->mutable_gpu_data(), momentum, local_rate);
    return;
  }
#endif
  caffe_cpu_axpby(param->count(), local_rate, param->cpu_diff(), momentum,
                  history_[param_id]->mutable_cpu_data());
  caffe_copy(param->count(), history_[param_id]->cpu_data(), param->mutable_cpu_diff());
}

template <typename Dtype>
void SGDSolver<Dtype>::SnapshotSolverState(const string& model_filename) {
  switch (this->param_.snapshot_format()) {
    case SolverParameter_SnapshotFormat_BINARYPROTO:
      SnapshotSolverStateToBinaryProto(model_filename);
      break;
    case SolverParameter_SnapshotFormat_HDF5:
      SnapshotSolverStateToHDF5(model_filename);
      break;
  }
}

template <typename Dtype>
void SGDSolver<Dtype>::SnapshotSolverStateToBinaryProto(const string& model_filename) {
  SolverState state;
  this->SaveCommonState(model_filename, &state);
  for (const auto& history : history_) history->ToProto(state.add_history());
  const string snapshot_filename = this->SnapshotFilename(".solverstate");
  LOG(INFO) << "Snapshotting solver state to binary proto file " << snapshot_filename;
  WriteProtoToBinaryFile(state, snapshot_filename);
}

template <typename Dtype>
void SGDSolver<Dtype>::SnapshotSolverStateToHDF5(const string& model_filename) {
  const string snapshot_filename = this->SnapshotFilename(".solverstate.h5");
  LOG(INFO) << "Snapshotting solver state to HDF5 file " << snapshot_filename;
  SolverState state;
  this->SaveCommonState(model_filename, &state);
  SolverState extensions;
  extensions.set_rng_state(state.rng_state());
  extensions.set_learners(state.learners());
  *extensions.mutable_data_cursor() = state.data_cursor();
  string extensions_text;
  google::protobuf::TextFormat::PrintToString(extensions, &extensions_text);
  AtomicWrite(snapshot_filename, [&](const string& temporary) {
    Hdf5File file(temporary, H5F_ACC_TRUNC);
    hdf5_save_int(file.id(), "iter", this->iter_);
    hdf5_save_string(file.id(), "learned_net", model_filename);
    hdf5_save_int(file.id(), "current_step", this->current_step_);
    hdf5_save_string(file.id(), kResumeStateDataset, extensions_text);
    hid_t history_hid = hdf5_create_group(file.id(), "history");
    for (size_t i = 0; i < history_.size(); ++i) {
      hdf5_save_nd_dataset<Dtype>(history_hid, std::to_string(i), *history_[i]);
    }
    H5Gclose(history_hid);
  });
}

template <typename Dtype>
void SGDSolver<Dtype>::RestoreSolverStateFromBinaryProto(const string& state_file) {
  SolverState state;
  ReadProtoFromBinaryFile(state_file, &state);
  CAFFE_CHECK_EQ(state.history_size(), static_cast<int>(history_.size()))
      << "solver state '" << state_file << "' has the wrong number of history blobs for this "
      << this->type() << " solver and net";
  this->RestoreCommonState(state);
  for (size_t i = 0; i < history_.size(); ++i) history_[i]->FromProto(state.history(i));
}

template <typename Dtype>
void SGDSolver<Dtype>::RestoreSolverStateFromHDF5(const string& state_file) {
  Hdf5File file(state_file, H5F_ACC_RDONLY);
  SolverState state;
  ReadHdf5SolverStateHeader(file.id(), state_file, &state);
  CAFFE_CHECK(hdf5_path_exists(file.id(), "history"))
      << "solver state '" << state_file << "' has no history group";
  hid_t history_hid = H5Gopen2(file.id(), "history", H5P_DEFAULT);
  const int state_history_size = hdf5_get_num_links(history_hid);
  H5Gclose(history_hid);
  CAFFE_CHECK_EQ(state_history_size, static_cast<int>(history_.size()))
      << "solver state '" << state_file << "' has the wrong number of history blobs for this "
      << this->type() << " solver and net";
  this->RestoreCommonState(state);
  for (size_t i = 0; i < history_.size(); ++i) {
    const string name = "history/" + std::to_string(i);
    hdf5_load_nd_dataset<Dtype>(file.id(), name.c_str(), 0, kMaxBlobAxes, history_[i].get());
  }
}

INSTANTIATE_CLASS(SGDSolver);
REGISTER_SOLVER_CLASS(SGD);

}  // namespace caffe
