#include "caffe/util/error.hpp"

namespace caffe {

std::string internal::ErrorStream::message() const {
  std::string text = stream_.str();
  if (!comparison_) return text;
  if (text.empty()) {
    return "check failed: " + comparison_->expression + " (" + comparison_->values + ")";
  }
  return text + " (" + comparison_->values + ")";
}

}  // namespace caffe
