// DDL's command-line options (`caffe train -ddl "<options>"`) and the learner topology they name.
// Parsing needs no MPI, so every build checks the string the same way, and a mistake is one line
// that quotes the token at fault. The topology XxYxZ is X learners per host, Y hosts per group
// (rack), Z groups; it must multiply to the number of MPI processes.
//
// Rank layout (IBM DDL's, which scripts/rank_gen.py writes rank files for): learner r has
//   x = r / (Y*Z),  y = (r / Z) % Y,  z = r % Z,
// and the learners of one host are those sharing (y, z): ranks r, r + Y*Z, r + 2*Y*Z, ...
#ifndef CAFFE_PARALLEL_DDL_OPTIONS_HPP_
#define CAFFE_PARALLEL_DDL_OPTIONS_HPP_

#include <array>
#include <string>
#include <vector>

#include "caffe/parallel/compression.hpp"

namespace caffe {

/// The collective algorithm -mode selects (IBM DDL's letters).
enum class DdlAlgorithm : char {
  kEnhanced = 'b',  // NCCL (GPU) or ring (CPU) inside a host, the fastest measured across hosts
  kNccl = 'n',      // NCCL in every dimension; ring where NCCL cannot be used (CPU learners)
  kRing = 'r',      // ring reduce-scatter + allgather over point-to-point MPI, every dimension
  kMpi = 'm',       // MPI_Reduce_scatter + MPI_Allgatherv, every dimension
  kRcs = 'c',       // recursive halving reduce-scatter + recursive doubling allgather
  kExplore = 'p',   // time every candidate per dimension at start-up, keep the fastest
};

/// What `-ddl "<options>"` asks for. Defaults: one ring over all learners, no dumps.
struct DdlOptions {
  DdlAlgorithm algorithm = DdlAlgorithm::kRing;
  /// As given after the colon of -mode: 1 to 3 positive sizes; empty = one ring over everyone.
  std::vector<int> dims;
  int dump_iter = 0;    // print the communication breakdown every N iterations (0: never)
  int dev_sync = 0;     // GPU learners: 1 sync the device before, 2 before and after reducing
  int rebind_iter = 0;  // check learners' speed every N iterations (0: never)
  int dbg_level = 0;    // 0 quiet, 1 setup and choices, 2 every bucket
  /// Our additions: seconds without a heartbeat before a peer counts as dead or hung, and the
  /// largest gradient bucket (KiB).
  double timeout_s = 30;
  int bucket_kb = 4096;
  /// -compress: gradients travel in 16 bits through the MPI stages (compression.hpp).
  Compression compression = Compression::kNone;
  /// -bvlc (a separate flag of the caffe tool): no buckets, reduce everything after backward.
  bool bvlc = false;
  /// The string parsed, for messages.
  std::string text;
};

/// Parses the -ddl string. Throws caffe::Error naming the token at fault, e.g.
/// `-ddl "-mode x:4": unknown algorithm 'x' in '-mode x:4'; expected one of b, n, r, m, c, p`.
DdlOptions ParseDdlOptions(const std::string& text);

/// The mode letter and its meaning, for logs ("r (ring)").
std::string DdlAlgorithmName(DdlAlgorithm algorithm);

/// Learners arranged as X x Y x Z (see the file comment for which rank sits where).
struct DdlTopology {
  std::array<int, 3> dims{{1, 1, 1}};

  int size() const { return dims[0] * dims[1] * dims[2]; }
  /// The coordinate of `rank` along dimension `dim` (0: x, 1: y, 2: z).
  int coordinate(int rank, int dim) const;
  /// The ranks that differ from `rank` only along `dim`, ordered by their coordinate there.
  std::vector<int> group(int rank, int dim) const;
  /// "2x2x1".
  std::string to_string() const;
};

/// The topology for `world_size` learners: the -mode dims padded with 1s, or {world_size, 1, 1}
/// when none were given. Throws caffe::Error starting `invalid dim size=A usr_size=B dim[0]=X
/// dim[1]=Y dim[2]=Z` (A: MPI processes, B: X*Y*Z) when they do not match.
DdlTopology ResolveDdlTopology(const DdlOptions& options, int world_size);

}  // namespace caffe

#endif  // CAFFE_PARALLEL_DDL_OPTIONS_HPP_
