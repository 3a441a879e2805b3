#include "caffe/parallel/explorer.hpp"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <sstream>

#include "caffe/memory/device_buffer.hpp"

namespace caffe {

template <typename Dtype>
typename Explorer<Dtype>::Choice Explorer<Dtype>::Pick(
    const std::vector<TwoPhaseCommunicator<Dtype>*>& candidates, const MpiGroup& group,
    size_t count, int repeats, const Clock& clock) {
  CAFFE_CHECK(!candidates.empty()) << "the explorer needs at least one candidate algorithm";
  Choice choice;
  choice.seconds.assign(candidates.size(), 0);
  if (candidates.size() > 1) {
    std::vector<Dtype> host(std::max<size_t>(count, 1), Dtype(1));
    for (size_t c = 0; c < candidates.size(); ++c) {
      TwoPhaseCommunicator<Dtype>* candidate = candidates[c];
      std::unique_ptr<DeviceBuffer<Dtype>> device;
      Dtype* buffer = host.data();
      if (candidate->on_device()) {
        device = std::make_unique<DeviceBuffer<Dtype>>(count);
        buffer = device->data();
      }
      std::vector<double> times;
      for (int run = 0; run <= repeats; ++run) {
        // Members start together, so a candidate is not charged for the previous one's stragglers.
        MPI_CHECK(MPI_Barrier(group.comm()));
        const double start = clock();
        candidate->Allreduce(buffer, count);
        if (run > 0) times.push_back(clock() - start);  // run 0 warms up
      }
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      choice.seconds[c] = times[times.size() / 2];
    }
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, choice.seconds.data(),
                            static_cast<int>(choice.seconds.size()), MPI_DOUBLE, MPI_MAX,
                            group.comm()));
    choice.chosen = static_cast<int>(
        std::min_element(choice.seconds.begin(), choice.seconds.end()) - choice.seconds.begin());
  }
  return choice;
}

template <typename Dtype>
double Explorer<Dtype>::SteadyClock() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename Dtype>
std::string Explorer<Dtype>::Describe(const std::vector<TwoPhaseCommunicator<Dtype>*>& candidates,
                                      const Choice& choice) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(3);
  for (size_t c = 0; c < candidates.size(); ++c) {
    text << (c ? ", " : "") << candidates[c]->name() << " " << choice.seconds[c] * 1e3 << " ms";
  }
  return text.str();
}

template class Explorer<float>;
template class Explorer<double>;

}  // namespace caffe
