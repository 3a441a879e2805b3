// An environment variable set (or unset) for one scope, its earlier value restored after: tests
// that depend on a variable the user may have exported (CAFFE_CPU_ENGINE, ...) pin it this way.
#ifndef CAFFE_TEST_SCOPED_ENV_HPP_
#define CAFFE_TEST_SCOPED_ENV_HPP_

#include <cstdlib>
#include <optional>
#include <string>

namespace caffe {

class ScopedEnv {
 public:
  /// Sets `name` to `value`, or unsets it when `value` is null.
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace caffe

#endif  // CAFFE_TEST_SCOPED_ENV_HPP_
