#include "caffe/parallel/ddl_options.hpp"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "caffe/util/error.hpp"

namespace caffe {

namespace {

const char kKnownOptions[] =
    "-mode a:X[xY[xZ]], -dump_iter N, -dev_sync 0|1|2, -rebind_iter N, -dbg_level 0|1|2, "
    "-timeout SECONDS, -bucket_kb N, -compress fp16|bf16|none";

// A whole token of decimal digits in [low, high]; false otherwise.
bool ParseInt(const std::string& token, long low, long high, int* value) {
  if (token.empty() || token.size() > 9) return false;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
  }
  const long parsed = std::strtol(token.c_str(), nullptr, 10);
  if (parsed < low || parsed > high) return false;
  *value = static_cast<int>(parsed);
  return true;
}

bool ParseSeconds(const std::string& token, double* value) {
  if (token.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(token.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(parsed > 0) || parsed > 86400) return false;
  *value = parsed;
  return true;
}

bool IsAlgorithm(char letter) {
  switch (letter) {
    case 'b':
    case 'n':
    case 'r':
    case 'm':
    case 'c':
    case 'p':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string DdlAlgorithmName(DdlAlgorithm algorithm) {
  switch (algorithm) {
    case DdlAlgorithm::kEnhanced:
      return "b (enhanced: intra-host, then the fastest across hosts)";
    case DdlAlgorithm::kNccl:
      return "n (NCCL, ring where NCCL cannot be used)";
    case DdlAlgorithm::kRing:
      return "r (ring)";
    case DdlAlgorithm::kMpi:
      return "m (MPI reduce_scatter + allgatherv)";
    case DdlAlgorithm::kRcs:
      return "c (recursive halving/doubling)";
    case DdlAlgorithm::kExplore:
      return "p (explore)";
  }
  return "?";
}

DdlOptions ParseDdlOptions(const std::string& text) {
  DdlOptions options;
  options.text = text;
  const std::string where = "-ddl \"" + text + "\": ";
  std::vector<std::string> tokens;
  {
    std::istringstream stream(text);
    std::string token;
    while (stream >> token) tokens.push_back(token);
  }
  CAFFE_CHECK(!tokens.empty()) << where << "no options given; expected some of " << kKnownOptions;
  bool mode_seen = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string name = tokens[i];
    std::string value;
    bool has_value = false;
    // Both "-mode b:2x2" and "-mode=b:2x2".
    const size_t equals = name.find('=');
    if (name.size() > 1 && name[0] == '-' && equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
      has_value = true;
    }
    const bool known = name == "-mode" || name == "-dump_iter" || name == "-dev_sync" ||
                       name == "-rebind_iter" || name == "-dbg_level" || name == "-timeout" ||
                       name == "-bucket_kb" || name == "-compress";
    CAFFE_CHECK(known) << where << "unknown option '" << tokens[i] << "'; known: " << kKnownOptions;
    if (!has_value) {
      CAFFE_CHECK(i + 1 < tokens.size() && !(tokens[i + 1].size() > 1 && tokens[i + 1][0] == '-'))
          << where << "'" << name << "' needs a value" << (name == "-mode" ? " like b:4x2" : "");
      value = tokens[++i];
    }
    const std::string quoted = "'" + name + " " + value + "'";
    if (name == "-mode") {
      CAFFE_CHECK(!mode_seen) << where << "-mode is given twice (second: " << quoted << ")";
      mode_seen = true;
      const size_t colon = value.find(':');
      const std::string letter = value.substr(0, colon);
      CAFFE_CHECK(letter.size() == 1 && IsAlgorithm(letter[0]))
          << where << "unknown algorithm '" << letter << "' in " << quoted
          << "; expected one of b, n, r, m, c, p (as in b:4x2)";
      options.algorithm = static_cast<DdlAlgorithm>(letter[0]);
      if (colon == std::string::npos) continue;
      const std::string topology = value.substr(colon + 1);
      std::vector<std::string> parts;
      size_t start = 0;
      while (true) {
        const size_t cross = topology.find('x', start);
        parts.push_back(topology.substr(start, cross - start));
        if (cross == std::string::npos) break;
        start = cross + 1;
      }
      CAFFE_CHECK(parts.size() <= 3) << where << "topology '" << topology << "' in " << quoted
                                     << " has more than 3 dimensions; expected X, XxY or XxYxZ";
      for (const std::string& part : parts) {
        int size = 0;
        CAFFE_CHECK(ParseInt(part, 1, 1000000, &size))
            << where << "'" << part << "' in " << quoted
            << " is not a positive dimension size; expected X, XxY or XxYxZ (as in 4x2x1)";
        options.dims.push_back(size);
      }
    } else if (name == "-dump_iter") {
      CAFFE_CHECK(ParseInt(value, 0, 100000000, &options.dump_iter))
          << where << "'" << value << "' in " << quoted << " is not an iteration count >= 0";
    } else if (name == "-rebind_iter") {
      CAFFE_CHECK(ParseInt(value, 0, 100000000, &options.rebind_iter))
          << where << "'" << value << "' in " << quoted << " is not an iteration count >= 0";
    } else if (name == "-dev_sync") {
      CAFFE_CHECK(ParseInt(value, 0, 2, &options.dev_sync))
          << where << "'" << value << "' in " << quoted << " must be 0, 1 or 2";
    } else if (name == "-dbg_level") {
      CAFFE_CHECK(ParseInt(value, 0, 2, &options.dbg_level))
          << where << "'" << value << "' in " << quoted << " must be 0, 1 or 2";
    } else if (name == "-timeout") {
      CAFFE_CHECK(ParseSeconds(value, &options.timeout_s))
          << where << "'" << value << "' in " << quoted
          << " is not a number of seconds > 0 (at most 86400)";
    } else if (name == "-compress") {
      CAFFE_CHECK(ParseCompression(value, &options.compression))
          << where << "'" << value << "' in " << quoted
          << " is not a gradient compression; expected fp16, bf16 or none";
    } else {  // -bucket_kb
      CAFFE_CHECK(ParseInt(value, 1, 16 * 1024 * 1024, &options.bucket_kb))
          << where << "'" << value << "' in " << quoted
          << " is not a bucket size in KiB (1 to 16777216)";
    }
  }
  return options;
}

int DdlTopology::coordinate(int rank, int dim) const {
  const int y_size = dims[1], z_size = dims[2];
  switch (dim) {
    case 0:
      return rank / (y_size * z_size);
    case 1:
      return (rank / z_size) % y_size;
    default:
      return rank % z_size;
  }
}

std::vector<int> DdlTopology::group(int rank, int dim) const {
  int coords[3] = {coordinate(rank, 0), coordinate(rank, 1), coordinate(rank, 2)};
  std::vector<int> ranks;
  for (int i = 0; i < dims[dim]; ++i) {
    coords[dim] = i;
    ranks.push_back(coords[0] * dims[1] * dims[2] + coords[1] * dims[2] + coords[2]);
  }
  return ranks;
}

std::string DdlTopology::to_string() const {
  return std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
}

DdlTopology ResolveDdlTopology(const DdlOptions& options, int world_size) {
  DdlTopology topology;
  if (options.dims.empty()) {
    topology.dims = {{world_size, 1, 1}};
    return topology;
  }
  for (size_t i = 0; i < options.dims.size(); ++i) topology.dims[i] = options.dims[i];
  CAFFE_CHECK(topology.size() == world_size)
      << "invalid dim size=" << world_size << " usr_size=" << topology.size()
      << " dim[0]=" << topology.dims[0] << " dim[1]=" << topology.dims[1]
      << " dim[2]=" << topology.dims[2] << ": -ddl -mode asks for " << topology.to_string() << " = "
      << topology.size() << " learners, but " << world_size
      << " MPI processes were started (mpirun -n); make them equal";
  return topology;
}

}  // namespace caffe
