// Times kernels/depthwise_convolution.hpp's three CPU passes (float) on MobileNet v1's depthwise
// geometries at a batch of 8 (3x3 kernels, pad 1; each channels x side x stride once), and prints
// the best of the runs in milliseconds: forward, input gradient, weight gradient.
//   bench_depthwise_convolution [runs]     default 20
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "caffe/kernels/depthwise_convolution.hpp"

namespace {

double BestMilliseconds(int runs, const std::function<void()>& run) {
  using Clock = std::chrono::steady_clock;
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto start = Clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  struct Layer {
    int channels, side, stride;
  };
  const Layer layers[] = {{32, 112, 1}, {64, 112, 2}, {128, 56, 1}, {128, 56, 2}, {256, 28, 1},
                          {256, 28, 2}, {512, 14, 1}, {512, 14, 2}, {1024, 7, 1}};
  std::printf(
      "| channels x side, stride | forward ms | input gradient ms | "
      "weight gradient ms |\n");
  std::printf("|---|---|---|---|\n");
  double totals[3] = {0, 0, 0};
  for (const Layer& layer : layers) {
    caffe::DepthwiseGeometry g;
    g.num = 8;
    g.channels = layer.channels;
    g.height = g.width = layer.side;
    g.kernel_h = g.kernel_w = 3;
    g.pad_h = g.pad_w = 1;
    g.stride_h = g.stride_w = layer.stride;
    g.out_height = g.out_width = (layer.side - 1) / layer.stride + 1;
    const size_t in = static_cast<size_t>(g.num) * g.channels * g.height * g.width;
    const size_t out = static_cast<size_t>(g.num) * g.channels * g.out_height * g.out_width;
    std::vector<float> x(in), dx(in), y(out), w(g.channels * 9), dw(w.size()), bias(g.channels);
    for (size_t i = 0; i < in; ++i) x[i] = static_cast<float>(i % 251) / 251 - 0.5f;
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) / 7 - 0.5f;
    const double times[3] = {
        BestMilliseconds(runs,
                         [&] { DepthwiseForward(g, x.data(), w.data(), bias.data(), y.data()); }),
        BestMilliseconds(runs, [&] { DepthwiseBackwardData(g, y.data(), w.data(), dx.data()); }),
        BestMilliseconds(runs,
                         [&] { DepthwiseBackwardWeights(g, y.data(), x.data(), dw.data()); })};
    std::printf("| %d x %d, %d | %.2f | %.2f | %.2f |\n", layer.channels, layer.side, layer.stride,
                times[0], times[1], times[2]);
    for (int i = 0; i < 3; ++i) totals[i] += times[i];
  }
  std::printf("| all | %.2f | %.2f | %.2f |\n", totals[0], totals[1], totals[2]);
  return 0;
}
