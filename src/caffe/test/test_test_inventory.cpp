// The test inventory (STYLE.md section 1): every src/caffe/<dir>/foo.cpp has a mirrored
// src/caffe/test/<dir>/test_foo.cpp. Layers and solvers must (CI enforces it here); for the rest of
// the library the few sources covered by another file's test are listed below with that test.
// Failures name every source that lacks its test and the path the test should have.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

namespace fs = std::filesystem;

const fs::path kLibraryDir = fs::path(SourceDir()) / "src" / "caffe";
const fs::path kTestDir = kLibraryDir / "test";

// Sources whose tests live in a test named after another source (path relative to src/caffe,
// then the covering test relative to src/caffe/test). Layers and solvers may not be listed.
const std::map<std::string, std::string> kCoveredElsewhere = {
    {"io/db_lmdb.cpp", "io/test_db.cpp"},  // the DB interface's only backend
    {"kernels/skinny_gemm.cpp",
     "kernels/test_math_functions.cpp"},      // reached through caffe_cpu_gemm
    {"net/net_weights.cpp", "test_net.cpp"},  // Net's members, tested with the rest of Net
    // The base of the MPI point-to-point algorithms, and NCCL over an MPI group (DDL's).
    {"parallel/mpi_group_communicator.cpp", "parallel/test_ring_communicator.cpp"},
    {"parallel/mpi_nccl.cpp", "parallel/test_nccl_communicator.cpp"},
};

// The .cpp files under src/caffe/<folder> (recursively), relative to src/caffe, excluding the
// tests themselves and generated protobuf sources.
std::vector<fs::path> LibrarySources(const fs::path& folder) {
  std::vector<fs::path> sources;
  const fs::path root = kLibraryDir / folder;
  if (!fs::is_directory(root)) return sources;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    const fs::path relative = fs::relative(entry.path(), kLibraryDir);
    const std::string first = relative.begin()->string();
    if (first == "test" || first == "proto") continue;
    sources.push_back(relative);
  }
  std::sort(sources.begin(), sources.end());
  return sources;
}

// src/caffe/<dir>/foo.cpp -> src/caffe/test/<dir>/test_foo.cpp, relative to src/caffe/test.
fs::path MirroredTest(const fs::path& source) {
  return source.parent_path() / ("test_" + source.filename().string());
}

// The sources in `folders` that have no mirrored test, one line each.
std::string MissingTests(const std::vector<fs::path>& sources, bool allow_covered_elsewhere) {
  std::string missing;
  for (const fs::path& source : sources) {
    if (fs::exists(kTestDir / MirroredTest(source))) continue;
    auto covered = kCoveredElsewhere.find(source.generic_string());
    if (allow_covered_elsewhere && covered != kCoveredElsewhere.end() &&
        fs::exists(kTestDir / covered->second)) {
      continue;
    }
    missing += "\n  src/caffe/" + source.generic_string() +
               " has no test: expected src/caffe/test/" + MirroredTest(source).generic_string();
  }
  return missing;
}

}  // namespace

TEST(TestInventoryTest, FindsTheSourceTree) {
  // Guards the checks below against passing vacuously on a wrong SourceDir().
  ASSERT_TRUE(fs::is_directory(kLibraryDir)) << kLibraryDir;
  const std::vector<fs::path> layers = LibrarySources("layers");
  EXPECT_NE(std::find(layers.begin(), layers.end(), fs::path("layers/convolution_layer.cpp")),
            layers.end());
  EXPECT_GE(layers.size(), 10u);
  const std::vector<fs::path> solvers = LibrarySources("solvers");
  EXPECT_NE(std::find(solvers.begin(), solvers.end(), fs::path("solvers/sgd_solver.cpp")),
            solvers.end());
  EXPECT_EQ(MirroredTest("layers/relu_layer.cpp"), fs::path("layers/test_relu_layer.cpp"));
  EXPECT_EQ(MirroredTest("blob.cpp"), fs::path("test_blob.cpp"));
}

TEST(TestInventoryTest, EveryLayerAndSolverHasAMirroredTest) {
  std::vector<fs::path> sources = LibrarySources("layers");
  const std::vector<fs::path> solvers = LibrarySources("solvers");
  sources.insert(sources.end(), solvers.begin(), solvers.end());
  const std::string missing = MissingTests(sources, /*allow_covered_elsewhere=*/false);
  EXPECT_TRUE(missing.empty()) << "layers and solvers without their test (STYLE.md section 1):"
                               << missing;
}

TEST(TestInventoryTest, EveryOtherLibrarySourceHasATest) {
  std::vector<fs::path> sources;
  for (const fs::path& source : LibrarySources("")) {
    const std::string first = source.begin()->string();
    if (first != "layers" && first != "solvers") sources.push_back(source);
  }
  const std::string missing = MissingTests(sources, /*allow_covered_elsewhere=*/true);
  EXPECT_TRUE(missing.empty()) << "library sources without their test (STYLE.md section 1; list "
                                  "a source covered by another test in kCoveredElsewhere):"
                               << missing;
  // The exceptions stay true: each listed source exists, is not a layer or solver, and its
  // covering test exists.
  for (const auto& [source, test] : kCoveredElsewhere) {
    EXPECT_TRUE(fs::exists(kLibraryDir / source)) << "stale exception: " << source;
    EXPECT_TRUE(fs::exists(kTestDir / test)) << source << " is said to be covered by " << test;
    EXPECT_NE(source.rfind("layers/", 0), 0u) << source;
    EXPECT_NE(source.rfind("solvers/", 0), 0u) << source;
  }
}

TEST(TestInventoryTest, TestNamesAreUniqueAcrossFolders) {
  // Each test_*.cpp becomes an executable named after the file, so names may not repeat.
  std::map<std::string, std::vector<std::string>> by_name;
  for (const auto& entry : fs::recursive_directory_iterator(kTestDir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.rfind("test_", 0) == 0 &&
        entry.path().extension() == ".cpp") {
      by_name[name].push_back(fs::relative(entry.path(), kTestDir).generic_string());
    }
  }
  EXPECT_GT(by_name.size(), 10u);
  for (const auto& [name, paths] : by_name) {
    EXPECT_EQ(paths.size(), 1u) << name << " appears " << paths.size() << " times, e.g. "
                                << paths[0] << " and " << paths.back();
  }
}

}  // namespace caffe
