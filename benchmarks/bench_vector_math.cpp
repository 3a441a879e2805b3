// Times the array functions of caffe/kernels/vector_math.hpp (float) on both of their paths, the
// loop of std:: calls (CAFFE_CPU_ENGINE=caffe) and, in a build with oneDNN, its vector kernels, at
// sizes around kVectorMathMinElements and at a large blob's; prints nanoseconds per value.
//   bench_vector_math [size ...]     default sizes 1024 2048 4096 8192 65536 3276800
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/vector_math.hpp"

namespace {

// Nanoseconds per value of the best of 5 runs of enough repetitions to take some 20 ms.
double NanosecondsPerValue(const std::function<void()>& run, int n) {
  using Clock = std::chrono::steady_clock;
  run();  // warm: oneDNN compiles its kernel on the first call
  const auto start = Clock::now();
  run();
  const double once = std::chrono::duration<double>(Clock::now() - start).count();
  const int repeats = std::max(1, static_cast<int>(0.02 / std::max(once, 1e-9)));
  double best = 1e30;
  for (int trial = 0; trial < 5; ++trial) {
    const auto begin = Clock::now();
    for (int r = 0; r < repeats; ++r) run();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - begin).count() / repeats);
  }
  return best * 1e9 / n;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {1024, 2048, 4096, 8192, 65536, 3276800};
  const std::vector<std::string> names = {"exp", "tanh", "sigmoid", "elu"};
  std::printf("| function | values | loop ns/value | default ns/value | loop / default |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const std::string& name : names) {
    for (int n : sizes) {
      std::vector<float> x(n), y(n);
      for (int i = 0; i < n; ++i) x[i] = -8.f + 16.f * static_cast<float>(i % 1001) / 1000.f;
      const std::function<void()> run = [&] {
        if (name == "exp") caffe::caffe_exp(n, x.data(), y.data());
        if (name == "tanh") caffe::caffe_tanh(n, x.data(), y.data());
        if (name == "sigmoid") caffe::caffe_sigmoid(n, x.data(), y.data());
        if (name == "elu") caffe::caffe_elu(n, 1.f, x.data(), y.data());
      };
      setenv("CAFFE_CPU_ENGINE", "caffe", 1);
      const double loop = NanosecondsPerValue(run, n);
      unsetenv("CAFFE_CPU_ENGINE");
      const double fast = NanosecondsPerValue(run, n);
      std::printf("| %s | %d | %.2f | %.2f | %.1fx |\n", name.c_str(), n, loop, fast, loop / fast);
    }
  }
  return 0;
}
