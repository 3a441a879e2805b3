#include "caffe/solver_factory.hpp"

#include "caffe/io/io.hpp"
#include "caffe/solver.hpp"

namespace caffe {

template <typename Dtype>
typename SolverRegistry<Dtype>::CreatorRegistry& SolverRegistry<Dtype>::Registry() {
  static CreatorRegistry registry;
  return registry;
}

template <typename Dtype>
void SolverRegistry<Dtype>::AddCreator(const string& type, Creator creator) {
  CHECK_EQ(Registry().count(type), 0u) << "Solver type " << type << " already registered.";
  Registry()[type] = std::move(creator);
}

template <typename Dtype>
Solver<Dtype>* SolverRegistry<Dtype>::CreateSolver(const SolverParameter& param) {
  const string& type = param.type();
  auto creator = Registry().find(type);
  if (creator == Registry().end()) {
    CAFFE_THROW() << "unknown solver type \"" << type
                  << "\"; known types: " << Join(SolverTypeList(), ", ");
  }
  return creator->second(param);
}

template <typename Dtype>
vector<string> SolverRegistry<Dtype>::SolverTypeList() {
  vector<string> types;
  for (const auto& entry : Registry()) types.push_back(entry.first);
  return types;
}

template class SolverRegistry<float>;
template class SolverRegistry<double>;

}  // namespace caffe
