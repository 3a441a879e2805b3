// caffe_exp, caffe_log, caffe_tanh, caffe_sigmoid and caffe_elu against the same functions
// computed in double, on both of their paths: the loop of std:: calls (short arrays, double, and
// CAFFE_CPU_ENGINE=caffe) and, in a build with oneDNN, its vector kernels (float arrays of at least
// kVectorMathMinElements values). The arrays sweep each function's range and put the special
// values (zeros, infinities, NaN, overflow and underflow) at the start, in the vector body and in
// the tail, where vector kernels handle the last values apart.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/vector_math.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kAlpha = 1.5;  // ELU's

struct Function {
  std::string name;
  double low, high;              // the sweep
  std::vector<double> specials;  // placed among the swept values
  double absolute;               // error allowed beside 16 ulps of the value (float)
  double (*reference)(double);
};

const std::vector<Function>& Functions() {
  static const std::vector<Function> functions = {
      {"exp",
       -110,
       89,
       {0, -0.0, 88.7, 89, -87.5, -104, -1e30, 1e30, kInf, -kInf, kNan},
       0,
       [](double x) { return std::exp(x); }},
      // Positive inputs only in the sweep: log of a subnormal is left out (oneDNN reads it as the
      // smallest normal float; a net flushes subnormals to zero before any layer sees them).
      {"log",
       1e-30,
       1e30,
       {0, -0.0, -1, 1, 1e-37, 3e38, kInf, -kInf, kNan},
       1e-7,
       [](double x) { return std::log(x); }},
      {"tanh",
       -12,
       12,
       {0, -0.0, 1e-30, -1e-30, 40, -40, 1e30, kInf, -kInf, kNan},
       1e-7,
       [](double x) { return std::tanh(x); }},
      {"sigmoid",
       -100,
       100,
       {0, -0.0, 1e-30, -90, 90, -1e30, 1e30, kInf, -kInf, kNan},
       1e-7,
       [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"elu",
       -30,
       30,
       {0, -0.0, 1e-30, -1e-30, -1e30, 1e30, kInf, -kInf, kNan},
       2e-7 * kAlpha,
       [](double x) { return x > 0 ? x : kAlpha * std::expm1(x); }},
  };
  return functions;
}

template <typename Dtype>
void Apply(const std::string& name, int n, const Dtype* x, Dtype* y) {
  if (name == "exp") caffe_exp(n, x, y);
  if (name == "log") caffe_log(n, x, y);
  if (name == "tanh") caffe_tanh(n, x, y);
  if (name == "sigmoid") caffe_sigmoid(n, x, y);
  if (name == "elu") caffe_elu(n, Dtype(kAlpha), x, y);
}

// n values swept over [low, high] (geometrically for log), the specials at the start, in the
// middle and among the last 7.
template <typename Dtype>
std::vector<Dtype> Inputs(const Function& function, int n) {
  std::vector<Dtype> x(n);
  for (int i = 0; i < n; ++i) {
    const double t = n > 1 ? static_cast<double>(i) / (n - 1) : 0;
    x[i] = static_cast<Dtype>(function.name == "log"
                                  ? function.low * std::pow(function.high / function.low, t)
                                  : function.low + (function.high - function.low) * t);
  }
  const int specials = static_cast<int>(function.specials.size());
  for (int s = 0; s < specials; ++s) {
    const Dtype value = static_cast<Dtype>(function.specials[s]);
    x[s % n] = value;
    x[(n / 2 + s) % n] = value;
    x[std::max(0, n - 7) + s % std::min(n, 7)] = value;
  }
  return x;
}

// Checks y = f(x) against the double reference: NaN where it is NaN, the same infinity, and
// otherwise within 16 ulps (float) or 1e-13 (double) of it plus the function's absolute slack.
template <typename Dtype>
void ExpectMatchesReference(const Function& function, const std::vector<Dtype>& x,
                            const std::vector<Dtype>& y, const std::string& where) {
  const bool is_float = sizeof(Dtype) == sizeof(float);
  const double relative = is_float ? 16 * std::numeric_limits<float>::epsilon() : 1e-13;
  const double absolute = is_float ? function.absolute : 1e-15;
  int failures = 0;
  for (size_t i = 0; i < x.size() && failures < 5; ++i) {
    const double expected = static_cast<Dtype>(function.reference(x[i]));
    const double got = y[i];
    bool ok;
    if (std::isnan(expected) || std::isinf(expected)) {
      ok = std::isnan(expected) ? std::isnan(got) : got == expected;
    } else if (std::fabs(expected) < std::numeric_limits<Dtype>::min()) {
      ok = std::fabs(got) < 2 * std::numeric_limits<Dtype>::min() + absolute;  // underflow
    } else {
      ok = std::fabs(got - expected) <= relative * std::fabs(expected) + absolute;
    }
    if (!ok) {
      ADD_FAILURE() << where << ": " << function.name << "(" << x[i] << ") at " << i << " of "
                    << x.size() << " gave " << got << ", expected " << expected;
      ++failures;
    }
  }
}

template <typename Dtype>
class VectorMathTest : public ::testing::Test {
 protected:
  // Every function at sizes below, at and above the vector kernels' minimum, out of place and in
  // place.
  void CheckAllSizes(const std::string& engine_note) {
    const int sizes[] = {1,
                         100,
                         kVectorMathMinElements - 1,
                         kVectorMathMinElements,
                         2 * kVectorMathMinElements,
                         8 * kVectorMathMinElements + 13};
    for (const Function& function : Functions()) {
      for (int n : sizes) {
        const std::vector<Dtype> x = Inputs<Dtype>(function, n);
        std::vector<Dtype> y(n, Dtype(-7));
        Apply(function.name, n, x.data(), y.data());
        const std::string where = engine_note + " n=" + std::to_string(n);
        ExpectMatchesReference(function, x, y, where);
        std::vector<Dtype> in_place = x;
        Apply(function.name, n, in_place.data(), in_place.data());
        ExpectMatchesReference(function, x, in_place, where + " in place");
      }
    }
  }
};
TYPED_TEST_SUITE(VectorMathTest, TestDtypes);

TYPED_TEST(VectorMathTest, MatchesDoubleReferenceOnEveryPath) {
  this->CheckAllSizes("default engine");
}

TYPED_TEST(VectorMathTest, MatchesDoubleReferenceWithCaffesEngine) {
  ScopedEnv engine("CAFFE_CPU_ENGINE", "caffe");
  this->CheckAllSizes("CAFFE_CPU_ENGINE=caffe");
}

// With CAFFE_CPU_ENGINE=caffe a large array runs the loop: exactly the std:: function.
TYPED_TEST(VectorMathTest, CaffesEngineIsTheLoopOfStdCalls) {
  using Dtype = TypeParam;
  ScopedEnv engine("CAFFE_CPU_ENGINE", "caffe");
  const int n = 4 * kVectorMathMinElements;
  const std::vector<Dtype> x = Inputs<Dtype>(Functions()[2], n);  // tanh's sweep
  std::vector<Dtype> y(n);
  caffe_tanh(n, x.data(), y.data());
  for (int i = 0; i < n; ++i) {
    if (std::isnan(x[i])) continue;
    ASSERT_EQ(y[i], std::tanh(x[i])) << "x=" << x[i];
  }
}

// A NaN anywhere in a large array stays NaN through exp, as in the loop (oneDNN 2.6's own exp
// kernel would give +inf), and the other values are still right.
TYPED_TEST(VectorMathTest, ExpKeepsNan) {
  using Dtype = TypeParam;
  const int n = 2 * kVectorMathMinElements;
  std::vector<Dtype> x(n, Dtype(1));
  x[n / 3] = std::numeric_limits<Dtype>::quiet_NaN();
  caffe_exp(n, x.data(), x.data());
  EXPECT_TRUE(std::isnan(x[n / 3]));
  EXPECT_NEAR(x[0], std::exp(1.0), 1e-6);
  EXPECT_NEAR(x[n - 1], std::exp(1.0), 1e-6);
}

}  // namespace

}  // namespace caffe
