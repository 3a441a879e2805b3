// Measures the machine's fp32 GEMM rate through Caffe's caffe_cpu_gemm (OpenBLAS), on square
// products, so layer timings can be read against what the machine delivers right now (cloud
// machines of one kind vary by 20-30 % from hour to hour).
//   bench_sgemm [size ...]     default sizes 1024 2048; prints GFLOP/s per size and the best
#include <glog/logging.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/util/blas_core.hpp"

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {1024, 2048};
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  const caffe::BlasCoreFit& fit = caffe::FitBlasCoreToCpu();  // the kernels caffe's GEMMs run
  std::printf("OpenBLAS core: %s\n", caffe::BlasCoreName().c_str());
  if (caffe::BlasCoreFitWorthLogging(fit)) {
    std::printf("%s\n", caffe::DescribeBlasCoreFit(fit).c_str());
  }
  double best = 0;
  for (int n : sizes) {
    std::vector<float> a(static_cast<size_t>(n) * n, 1.f), b(a), c(a);
    caffe::caffe_cpu_gemm<float>(CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), b.data(), 0.f,
                                 c.data());
    const int repeats = std::max(3, 8192 / n);
    double fastest = 1e30;
    for (int r = 0; r < repeats; ++r) {
      auto start = std::chrono::steady_clock::now();
      caffe::caffe_cpu_gemm<float>(CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), b.data(),
                                   0.f, c.data());
      fastest = std::min(
          fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const double gflops = 2.0 * n * n * n / fastest / 1e9;
    best = std::max(best, gflops);
    std::printf("sgemm %d: %.1f GFLOP/s\n", n, gflops);
  }
  std::printf("sgemm best: %.1f GFLOP/s\n", best);
  return 0;
}
