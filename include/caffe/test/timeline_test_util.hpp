// Reading a timeline file (caffe/timeline/timeline.hpp, docs/TIMELINE.md) in tests.
#ifndef CAFFE_TEST_TIMELINE_TEST_UTIL_HPP_
#define CAFFE_TEST_TIMELINE_TEST_UTIL_HPP_

#include <regex>
#include <string>

namespace caffe {

/// The sum of the number arg `key` over the slices named `name` (plain text) in the timeline file
/// `trace`: e.g. the bytes of every "swap in", or of every "allreduce".
inline double SumOfSliceArg(const std::string& trace, const std::string& name,
                            const std::string& key) {
  const std::regex slice("\"name\":\"" + name + "\"[^{}]*\"args\":\\{[^{}]*\"" + key +
                         "\":([0-9.]+)");
  double sum = 0;
  for (std::sregex_iterator it(trace.begin(), trace.end(), slice), end; it != end; ++it) {
    sum += std::stod((*it)[1]);
  }
  return sum;
}

}  // namespace caffe

#endif  // CAFFE_TEST_TIMELINE_TEST_UTIL_HPP_
