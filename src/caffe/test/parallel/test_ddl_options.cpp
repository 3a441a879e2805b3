// -ddl option parsing and the XxYxZ topology: every option and its range, each mistake as one
// error naming the token at fault, the "invalid dim" message, and IBM's rank layout (the learners
// of a host are r, r + Y*Z, ...; hosts ordered by Z), which rank_gen.py's rank files follow.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "caffe/parallel/ddl_options.hpp"
#include "caffe/util/error.hpp"

namespace caffe {

namespace {

// The message of the caffe::Error that parsing `text` throws ("" if it does not throw).
std::string ParseError(const std::string& text) {
  try {
    ParseDdlOptions(text);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

void ExpectErrorNaming(const std::string& text, const std::string& token) {
  const std::string message = ParseError(text);
  ASSERT_FALSE(message.empty()) << "'" << text << "' should be rejected";
  EXPECT_NE(message.find("'" + token + "'"), std::string::npos)
      << "the error for '" << text << "' should quote '" << token << "': " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

}  // namespace

TEST(DdlOptionsTest, ParsesEveryOption) {
  const DdlOptions options = ParseDdlOptions(
      "-mode b:4x2x1 -dump_iter 100 -dev_sync 1 -rebind_iter 50 -dbg_level 2 -timeout 7.5 "
      "-bucket_kb 512 -compress bf16");
  EXPECT_EQ(options.algorithm, DdlAlgorithm::kEnhanced);
  EXPECT_EQ(options.dims, (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(options.dump_iter, 100);
  EXPECT_EQ(options.dev_sync, 1);
  EXPECT_EQ(options.rebind_iter, 50);
  EXPECT_EQ(options.dbg_level, 2);
  EXPECT_DOUBLE_EQ(options.timeout_s, 7.5);
  EXPECT_EQ(options.bucket_kb, 512);
  EXPECT_EQ(options.compression, Compression::kBf16);
  EXPECT_FALSE(options.bvlc);
}

TEST(DdlOptionsTest, DefaultsAreOneRingOverEveryone) {
  const DdlOptions options = ParseDdlOptions("-dev_sync 0");
  EXPECT_EQ(options.algorithm, DdlAlgorithm::kRing);
  EXPECT_TRUE(options.dims.empty());
  EXPECT_EQ(options.dump_iter, 0);
  EXPECT_EQ(options.rebind_iter, 0);
  EXPECT_EQ(options.compression, Compression::kNone);
  EXPECT_EQ(ResolveDdlTopology(options, 6).to_string(), "6x1x1");
  EXPECT_EQ(ParseDdlOptions("-compress=fp16").compression, Compression::kFp16);
  EXPECT_EQ(ParseDdlOptions("-compress none").compression, Compression::kNone);
}

TEST(DdlOptionsTest, AcceptsEveryModeLetterWithOneTwoOrThreeDims) {
  for (char letter : std::string("bnrmcp")) {
    const DdlOptions options = ParseDdlOptions(std::string("-mode ") + letter + ":2x3");
    EXPECT_EQ(static_cast<char>(options.algorithm), letter);
    EXPECT_EQ(options.dims, (std::vector<int>{2, 3}));
  }
  EXPECT_EQ(ParseDdlOptions("-mode r:4").dims, std::vector<int>{4});
  EXPECT_TRUE(ParseDdlOptions("-mode m").dims.empty());
  EXPECT_EQ(ParseDdlOptions("-mode=c:2x1x2").dims, (std::vector<int>{2, 1, 2}));
  EXPECT_EQ(ParseDdlOptions("  -mode   p:1x4  ").dims, (std::vector<int>{1, 4}));
}

TEST(DdlOptionsTest, EachMistakeNamesTheBadToken) {
  ExpectErrorNaming("-mode x:4", "x");
  ExpectErrorNaming("-mode bb:4", "bb");
  ExpectErrorNaming("-mode b:4y2", "4y2");
  ExpectErrorNaming("-mode b:4x0", "0");
  ExpectErrorNaming("-mode b:4x-2", "-2");
  ExpectErrorNaming("-mode b:4x", "");
  ExpectErrorNaming("-mode r:2x2x2x2", "2x2x2x2");
  ExpectErrorNaming("-mode r:2 -dump_iter ten", "ten");
  ExpectErrorNaming("-dump_iter -5", "-dump_iter");
  ExpectErrorNaming("-dev_sync 3", "3");
  ExpectErrorNaming("-dbg_level 9", "9");
  ExpectErrorNaming("-rebind_iter 1.5", "1.5");
  ExpectErrorNaming("-timeout 0", "0");
  ExpectErrorNaming("-bucket_kb 0", "0");
  ExpectErrorNaming("-compress fp8", "fp8");
  ExpectErrorNaming("-compress FP16", "FP16");
  ExpectErrorNaming("-mode r:2 -fast 1", "-fast");
  ExpectErrorNaming("mode r:2", "mode");
  ExpectErrorNaming("-mode", "-mode");
  ExpectErrorNaming("-mode r:2 -mode m:2", "-mode m:2");
}

TEST(DdlOptionsTest, ErrorsQuoteTheWholeStringAndListTheOptions) {
  const std::string message = ParseError("-mode r:2 -turbo");
  EXPECT_NE(message.find("-ddl \"-mode r:2 -turbo\""), std::string::npos) << message;
  EXPECT_NE(message.find("-dump_iter"), std::string::npos) << message;
  EXPECT_NE(ParseError("").find("no options"), std::string::npos);
}

TEST(DdlOptionsTest, TopologyMustCoverEveryProcess) {
  DdlOptions options = ParseDdlOptions("-mode b:2x3");
  EXPECT_EQ(ResolveDdlTopology(options, 6).to_string(), "2x3x1");
  try {
    ResolveDdlTopology(options, 4);
    FAIL() << "2x3 accepted for 4 processes";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("invalid dim size=4 usr_size=6 dim[0]=2 dim[1]=3 dim[2]=1", 0), 0u)
        << message;
  }
}

TEST(DdlOptionsTest, RankLayoutPutsAHostsLearnersAYTimesZApart) {
  // 4x2x3: rank r sits on host z*Y + y, as IBM's rank files put it (SEED_EXAMPLES.md).
  DdlTopology topology;
  topology.dims = {{4, 2, 3}};
  const int expected_host[] = {0, 2, 4, 1, 3, 5};
  for (int rank = 0; rank < 24; ++rank) {
    const int y = topology.coordinate(rank, 1), z = topology.coordinate(rank, 2);
    EXPECT_EQ(z * 2 + y, expected_host[rank % 6]) << "rank " << rank;
    EXPECT_EQ(topology.coordinate(rank, 0), rank / 6) << "rank " << rank;
  }
  EXPECT_EQ(topology.group(1, 0), (std::vector<int>{1, 7, 13, 19}));  // one host's learners
  EXPECT_EQ(topology.group(1, 1), (std::vector<int>{1, 4}));
  EXPECT_EQ(topology.group(1, 2), (std::vector<int>{0, 1, 2}));
}

TEST(DdlOptionsTest, GroupsOfEachDimensionPartitionTheLearners) {
  DdlTopology topology;
  topology.dims = {{2, 3, 2}};
  for (int dim = 0; dim < 3; ++dim) {
    std::set<int> seen;
    for (int rank = 0; rank < topology.size(); ++rank) {
      const std::vector<int> group = topology.group(rank, dim);
      ASSERT_EQ(static_cast<int>(group.size()), topology.dims[dim]);
      EXPECT_EQ(group[topology.coordinate(rank, dim)], rank);
      for (int member : group) {
        EXPECT_EQ(topology.group(member, dim), group) << "groups must agree";
        for (int other = 0; other < 3; ++other) {
          if (other != dim) {
            EXPECT_EQ(topology.coordinate(member, other), topology.coordinate(rank, other));
          }
        }
      }
      seen.insert(rank);
    }
    EXPECT_EQ(static_cast<int>(seen.size()), topology.size());
  }
}

}  // namespace caffe
