// Checks a solver's updates against the update rules worked out by hand. The problem is linear
// least squares: an Input layer holds fixed data X (N x D) and targets t (N), an InnerProduct
// layer computes y = X w + b, and EuclideanLoss gives L = |y - t|^2 / (2N). Its gradient is known
// in closed form (dL/dw = X^T (y - t) / N, dL/db = sum(y - t) / N), so after each Step the test can
// recompute, in double precision and plain loops, what every rule should have produced: weight
// decay (L2 or L1, with decay_mult), gradient clipping, iter_size, lr_mult, and the solver's own
// history (momentum, AdaGrad/RMSProp/AdaDelta accumulators, Adam moments).
#ifndef CAFFE_TEST_SOLVER_TEST_UTIL_HPP_
#define CAFFE_TEST_SOLVER_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

/// Knobs of one solver-update check.
struct SolverCheckSettings {
  double base_lr = 0.01;
  double weight_decay = 0;
  std::string regularization = "L2";
  double momentum = 0;
  double momentum2 = 0.999;  // Adam
  double rms_decay = 0.95;   // RMSProp
  double delta = 1e-8;
  int iter_size = 1;
  double clip_gradients = -1;
  double bias_lr_mult = 2;     // the bias learns at twice the rate, as in LeNet
  double bias_decay_mult = 0;  // and without decay
  int num_iters = 3;
};

/// The hand-worked update rules, in double precision.
class ReferenceSolver {
 public:
  ReferenceSolver(const std::string& type, const SolverCheckSettings& settings, int num_weights)
      : type_(type), settings_(settings) {
    // Two params: the weight vector and the bias; each with up to two history slots.
    const std::vector<int> sizes = {num_weights, 1};
    for (int size : sizes) {
      history_.emplace_back(size, 0.0);
      history2_.emplace_back(size, 0.0);
    }
  }

  /// Applies one update to params (w, b) given their raw gradients, at iteration `iter`.
  void Update(int iter, std::vector<std::vector<double>>* params,
              std::vector<std::vector<double>> grads) {
    const SolverCheckSettings& s = settings_;
    if (s.clip_gradients >= 0) {
      double sumsq = 0;
      for (const auto& g : grads) {
        for (double v : g) sumsq += v * v;
      }
      const double norm = std::sqrt(sumsq);
      if (norm > s.clip_gradients) {
        for (auto& g : grads) {
          for (double& v : g) v *= s.clip_gradients / norm;
        }
      }
    }
    for (size_t p = 0; p < params->size(); ++p) {
      std::vector<double>& w = (*params)[p];
      std::vector<double>& g = grads[p];
      const double lr = s.base_lr * (p == 0 ? 1.0 : s.bias_lr_mult);
      const double decay = s.weight_decay * (p == 0 ? 1.0 : s.bias_decay_mult);
      for (size_t i = 0; i < w.size(); ++i) {
        if (s.regularization == "L2") {
          g[i] += decay * w[i];
        } else {
          g[i] += decay * ((w[i] > 0) - (w[i] < 0));
        }
      }
      std::vector<double>& h = history_[p];
      std::vector<double>& h2 = history2_[p];
      for (size_t i = 0; i < w.size(); ++i) {
        double step = 0;
        if (type_ == "SGD") {
          h[i] = lr * g[i] + s.momentum * h[i];
          step = h[i];
        } else if (type_ == "Nesterov") {
          const double previous = h[i];
          h[i] = lr * g[i] + s.momentum * h[i];
          step = (1 + s.momentum) * h[i] - s.momentum * previous;
        } else if (type_ == "AdaGrad") {
          h[i] += g[i] * g[i];
          step = lr * g[i] / (std::sqrt(h[i]) + s.delta);
        } else if (type_ == "RMSProp") {
          h[i] = s.rms_decay * h[i] + (1 - s.rms_decay) * g[i] * g[i];
          step = lr * g[i] / (std::sqrt(h[i]) + s.delta);
        } else if (type_ == "AdaDelta") {
          h[i] = s.momentum * h[i] + (1 - s.momentum) * g[i] * g[i];
          const double update = std::sqrt((h2[i] + s.delta) / (h[i] + s.delta)) * g[i];
          h2[i] = s.momentum * h2[i] + (1 - s.momentum) * update * update;
          step = lr * update;
        } else if (type_ == "Adam") {
          const int t = iter + 1;
          h[i] = s.momentum * h[i] + (1 - s.momentum) * g[i];
          h2[i] = s.momentum2 * h2[i] + (1 - s.momentum2) * g[i] * g[i];
          const double correction =
              std::sqrt(1 - std::pow(s.momentum2, t)) / (1 - std::pow(s.momentum, t));
          step = lr * correction * h[i] / (std::sqrt(h2[i]) + s.delta);
        } else {
          ADD_FAILURE() << "no reference rule for solver " << type_;
        }
        w[i] -= step;
      }
    }
  }

  const std::vector<double>& history(int p) const { return history_[p]; }

 private:
  std::string type_;
  SolverCheckSettings settings_;
  std::vector<std::vector<double>> history_, history2_;
};

/// Builds the least-squares solver, runs num_iters steps, and after each compares the weights
/// (and SGD's momentum history) with ReferenceSolver.
template <typename Dtype>
void CheckSolverUpdates(const std::string& type, const SolverCheckSettings& s) {
  constexpr int kNum = 4, kDim = 3;
  std::ostringstream text;
  text << "type: \"" << type << "\" base_lr: " << s.base_lr << " lr_policy: \"fixed\""
       << " weight_decay: " << s.weight_decay << " regularization_type: \"" << s.regularization
       << "\" momentum: " << s.momentum << " momentum2: " << s.momentum2
       << " rms_decay: " << s.rms_decay << " delta: " << s.delta << " iter_size: " << s.iter_size
       << " clip_gradients: " << s.clip_gradients << " max_iter: " << s.num_iters
       << " snapshot_after_train: false random_seed: 1701"
       << R"( net_param {
         layer { name: "data" type: "Input" top: "data" top: "targets"
           input_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 1 } } }
         layer { name: "ip" type: "InnerProduct" bottom: "data" top: "y"
           param { lr_mult: 1 decay_mult: 1 } )"
       << "param { lr_mult: " << s.bias_lr_mult << " decay_mult: " << s.bias_decay_mult << " }"
       << R"( inner_product_param { num_output: 1
             weight_filler { type: "gaussian" std: 1 } bias_filler { type: "gaussian" std: 1 } } }
         layer { name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "targets" top: "loss" }
       })";
  SolverParameter param;
  ParseProtoFromText(text.str(), "solver", &param);
  Caffe::set_mode(Caffe::CPU);
  std::unique_ptr<Solver<Dtype>> solver(SolverRegistry<Dtype>::CreateSolver(param));
  ASSERT_EQ(std::string(solver->type()), type);
  Net<Dtype>& net = *solver->net();

  // Fixed data the test knows.
  std::mt19937 generator(42);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> X(kNum * kDim), t(kNum);
  for (double& x : X) x = normal(generator);
  for (double& y : t) y = normal(generator);
  Blob<Dtype>& data = *net.blob_by_name("data");
  Blob<Dtype>& targets = *net.blob_by_name("targets");
  for (int i = 0; i < kNum * kDim; ++i) data.mutable_cpu_data()[i] = X[i];
  for (int i = 0; i < kNum; ++i) targets.mutable_cpu_data()[i] = t[i];

  Blob<Dtype>& weights = *net.layer_by_name("ip")->blobs()[0];
  Blob<Dtype>& bias = *net.layer_by_name("ip")->blobs()[1];
  std::vector<std::vector<double>> params = {
      std::vector<double>(weights.cpu_data(), weights.cpu_data() + kDim),
      {static_cast<double>(bias.cpu_data()[0])}};
  // The solver holds its settings as proto floats; the reference uses exactly those values.
  const SolverParameter& used = solver->param();
  SolverCheckSettings as_floats = s;
  as_floats.base_lr = used.base_lr();
  as_floats.weight_decay = used.weight_decay();
  as_floats.momentum = used.momentum();
  as_floats.momentum2 = used.momentum2();
  as_floats.rms_decay = used.rms_decay();
  as_floats.delta = used.delta();
  as_floats.clip_gradients = used.clip_gradients();
  as_floats.bias_lr_mult = net.params_lr()[1];
  as_floats.bias_decay_mult = net.params_weight_decay()[1];
  ReferenceSolver reference(type, as_floats, kDim);
  const double tolerance = sizeof(Dtype) == 4 ? 1e-4 : 1e-9;
  for (int iter = 0; iter < s.num_iters; ++iter) {
    // The closed-form gradient at the current weights (the same for every iter_size pass).
    std::vector<std::vector<double>> grads = {std::vector<double>(kDim, 0.0), {0.0}};
    for (int n = 0; n < kNum; ++n) {
      double y = params[1][0];
      for (int d = 0; d < kDim; ++d) y += X[n * kDim + d] * params[0][d];
      const double residual = (y - t[n]) / kNum;
      for (int d = 0; d < kDim; ++d) grads[0][d] += residual * X[n * kDim + d];
      grads[1][0] += residual;
    }
    reference.Update(iter, &params, grads);
    solver->Step(1);
    for (int d = 0; d < kDim; ++d) {
      EXPECT_NEAR(weights.cpu_data()[d], params[0][d], tolerance * (1 + std::fabs(params[0][d])))
          << type << " iteration " << iter << " weight " << d;
    }
    EXPECT_NEAR(bias.cpu_data()[0], params[1][0], tolerance * (1 + std::fabs(params[1][0])))
        << type << " iteration " << iter << " bias";
    if (type == "SGD") {
      auto* sgd = dynamic_cast<SGDSolver<Dtype>*>(solver.get());
      ASSERT_NE(sgd, nullptr);
      for (int d = 0; d < kDim; ++d) {
        EXPECT_NEAR(sgd->history()[0]->cpu_data()[d], reference.history(0)[d],
                    tolerance * (1 + std::fabs(reference.history(0)[d])))
            << "momentum history, iteration " << iter;
      }
    }
  }
  EXPECT_EQ(solver->iter(), s.num_iters);
}

/// The settings every solver is checked under: plain, L2 and L1 decay, iter_size 2, clipping.
inline std::vector<SolverCheckSettings> StandardSolverChecks(double momentum) {
  std::vector<SolverCheckSettings> checks(5);
  for (auto& check : checks) check.momentum = momentum;
  checks[1].weight_decay = 0.1;
  checks[2].weight_decay = 0.1;
  checks[2].regularization = "L1";
  checks[3].iter_size = 2;
  checks[4].clip_gradients = 0.05;
  return checks;
}

}  // namespace caffe

#endif  // CAFFE_TEST_SOLVER_TEST_UTIL_HPP_
