// Errors a user's input can cause: a bad prototxt, an unknown layer, a wrong shape, a missing file,
// a bad flag. They are thrown as caffe::Error with one line that names the thing at fault, what was
// found and what was expected; tools catch them at main(), print the line and exit non-zero. glog's
// CHECK stays for broken invariants inside the code, which no input can reach.
//
//   CAFFE_CHECK(file_exists) << "cannot open weights file '" << path << "'";
//   CAFFE_CHECK_EQ(a.count(), b.count()) << "bottom blobs differ in size";  // "... (3 vs. 4)"
// A check with no message says which expression failed: "check failed: a == b (3 vs. 4)".
//   CAFFE_THROW() << "unknown solver type \"" << type << "\"";
#ifndef CAFFE_UTIL_ERROR_HPP_
#define CAFFE_UTIL_ERROR_HPP_

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

namespace caffe {

/// A user-facing error: the message is one complete line meant for the person running Caffe.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace internal {

/// Collects the message of a failed check; Thrower turns it into a caffe::Error.
class ErrorStream {
 public:
  ErrorStream() = default;
  // A failed comparison: `values` is "3 vs. 4", `expression` the code compared.
  struct Comparison {
    std::string values, expression;
  };
  explicit ErrorStream(std::unique_ptr<Comparison> comparison)
      : comparison_(std::move(comparison)) {}
  template <typename T>
  ErrorStream& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  std::string message() const;

 private:
  std::ostringstream stream_;
  std::unique_ptr<Comparison> comparison_;
};

/// `Thrower() & stream << ...`: & binds looser than <<, so the whole message is built first.
struct Thrower {
  [[noreturn]] void operator&(const ErrorStream& stream) const { throw Error(stream.message()); }
};

template <typename A, typename B>
std::unique_ptr<ErrorStream::Comparison> MakeComparison(const A& a, const B& b,
                                                        const char* expression) {
  std::ostringstream values;
  values << a << " vs. " << b;
  return std::make_unique<ErrorStream::Comparison>(
      ErrorStream::Comparison{values.str(), expression});
}

#define CAFFE_DEFINE_CHECK_OP_IMPL(name, op)                                         \
  template <typename A, typename B>                                                  \
  std::unique_ptr<ErrorStream::Comparison> Check##name##Impl(const A& a, const B& b, \
                                                             const char* expr) {     \
    if (a op b) return nullptr;                                                      \
    return MakeComparison(a, b, expr);                                               \
  }
CAFFE_DEFINE_CHECK_OP_IMPL(EQ, ==)
CAFFE_DEFINE_CHECK_OP_IMPL(NE, !=)
CAFFE_DEFINE_CHECK_OP_IMPL(LE, <=)
CAFFE_DEFINE_CHECK_OP_IMPL(LT, <)
CAFFE_DEFINE_CHECK_OP_IMPL(GE, >=)
CAFFE_DEFINE_CHECK_OP_IMPL(GT, >)
#undef CAFFE_DEFINE_CHECK_OP_IMPL

}  // namespace internal
}  // namespace caffe

/// Throws caffe::Error with the streamed message.
#define CAFFE_THROW() ::caffe::internal::Thrower() & ::caffe::internal::ErrorStream()

/// Throws caffe::Error with the streamed message unless `condition` holds.
#define CAFFE_CHECK(condition) \
  if (condition) {             \
  } else                       \
    CAFFE_THROW()

#define CAFFE_CHECK_OP(name, op, a, b)                                          \
  while (auto caffe_check_comparison_ =                                         \
             ::caffe::internal::Check##name##Impl((a), (b), #a " " #op " " #b)) \
  ::caffe::internal::Thrower() & ::caffe::internal::ErrorStream(std::move(caffe_check_comparison_))

#define CAFFE_CHECK_EQ(a, b) CAFFE_CHECK_OP(EQ, ==, a, b)
#define CAFFE_CHECK_NE(a, b) CAFFE_CHECK_OP(NE, !=, a, b)
#define CAFFE_CHECK_LE(a, b) CAFFE_CHECK_OP(LE, <=, a, b)
#define CAFFE_CHECK_LT(a, b) CAFFE_CHECK_OP(LT, <, a, b)
#define CAFFE_CHECK_GE(a, b) CAFFE_CHECK_OP(GE, >=, a, b)
#define CAFFE_CHECK_GT(a, b) CAFFE_CHECK_OP(GT, >, a, b)

#endif  // CAFFE_UTIL_ERROR_HPP_
