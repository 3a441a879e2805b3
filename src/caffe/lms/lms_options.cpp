#include "caffe/lms/lms_options.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "caffe/util/error.hpp"

namespace caffe {
namespace lms {

size_t ParseByteSize(const std::string& text, const std::string& source) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  std::string suffix(end);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  if (suffix.empty() || suffix == "B") {
    scale = 1;
  } else if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
    scale = 1024.0;
  } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
    scale = 1024.0 * 1024;
  } else if (suffix == "G" || suffix == "GB" || suffix == "GIB") {
    scale = 1024.0 * 1024 * 1024;
  } else if (suffix == "T" || suffix == "TB" || suffix == "TIB") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  }
  const double bytes = number * scale;
  CAFFE_CHECK(end != begin && scale > 0 && std::isfinite(bytes) && bytes >= 1 &&
              bytes < static_cast<double>(std::numeric_limits<int64_t>::max()) &&
              !std::isspace(static_cast<unsigned char>(text[0])))
      << source << " '" << text << "': expected a size in bytes, or a number with K, M, G or T "
      << "(powers of 1024), e.g. 16G";
  return static_cast<size_t>(bytes);
}

Options MakeOptions(int64_t lms_kb, double lms_frac, int prefetch_depth,
                    const std::string& mem_limit, const char* mem_limit_env) {
  CAFFE_CHECK(lms_kb >= -1) << "-lms " << lms_kb
                            << ": expected -1 (off), 0 (every buffer) or a threshold in KB";
  CAFFE_CHECK(lms_frac >= 0.0 && lms_frac <= 1.0)
      << "-lms_frac " << lms_frac << ": expected a fraction of the GPU memory budget in [0, 1]";
  CAFFE_CHECK(prefetch_depth >= 0)
      << "-lms_prefetch " << prefetch_depth << ": expected a number of layers >= 0";
  Options options;
  options.threshold_kb = lms_kb;
  options.frac = lms_frac;
  options.prefetch_depth = prefetch_depth;
  if (!mem_limit.empty()) {
    options.budget = ParseByteSize(mem_limit, "-gpu_mem_limit");
  } else if (mem_limit_env != nullptr && mem_limit_env[0] != '\0') {
    options.budget = ParseByteSize(mem_limit_env, "CAFFE_GPU_MEM_LIMIT");
  }
  return options;
}

bool Requested(const Options& options) { return options.threshold_kb >= 0 || options.budget > 0; }

}  // namespace lms
}  // namespace caffe
