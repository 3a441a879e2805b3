// The solver registry: maps a solver `type:` string (SGD, Nesterov, AdaGrad, RMSProp, AdaDelta,
// Adam) to its class. Each solver's .cpp registers itself with REGISTER_SOLVER_CLASS(Type).
#ifndef CAFFE_SOLVER_FACTORY_HPP_
#define CAFFE_SOLVER_FACTORY_HPP_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

template <typename Dtype>
class Solver;

template <typename Dtype>
class SolverRegistry {
 public:
  using Creator = std::function<Solver<Dtype>*(const SolverParameter&)>;
  using CreatorRegistry = std::map<string, Creator>;

  static CreatorRegistry& Registry();
  static void AddCreator(const string& type, Creator creator);
  /// Creates the solver `param.type()`; throws caffe::Error listing the known types if unknown.
  static Solver<Dtype>* CreateSolver(const SolverParameter& param);
  static vector<string> SolverTypeList();

 private:
  SolverRegistry() = delete;
};

template <typename Dtype>
class SolverRegisterer {
 public:
  SolverRegisterer(const string& type, typename SolverRegistry<Dtype>::Creator creator) {
    SolverRegistry<Dtype>::AddCreator(type, std::move(creator));
  }
};

}  // namespace caffe

#define REGISTER_SOLVER_CREATOR(type, creator)                                      \
  static ::caffe::SolverRegisterer<float> g_solver_f_##type(#type, creator<float>); \
  static ::caffe::SolverRegisterer<double> g_solver_d_##type(#type, creator<double>)

#define REGISTER_SOLVER_CLASS(type)                                                       \
  template <typename Dtype>                                                               \
  ::caffe::Solver<Dtype>* Creator_##type##Solver(const ::caffe::SolverParameter& param) { \
    return new type##Solver<Dtype>(param);                                                \
  }                                                                                       \
  REGISTER_SOLVER_CREATOR(type, Creator_##type##Solver)

#endif  // CAFFE_SOLVER_FACTORY_HPP_
