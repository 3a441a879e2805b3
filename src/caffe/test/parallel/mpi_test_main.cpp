#include "caffe/test/mpi_test_main.hpp"

#include <glog/logging.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

#include "caffe/common.hpp"

namespace caffe {

namespace {

std::vector<std::string>& TempDirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

// On ranks other than 0: one line per failed check, prefixed by the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::cout << "[rank " << WorldRank() << "] " << (result.file_name() ? result.file_name() : "")
              << ":" << result.line_number() << ": " << result.summary() << std::endl;
  }
};

}  // namespace

int WorldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int WorldSize() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void MpiTest::TearDown() {
  const int failed = ::testing::Test::HasFailure() ? 1 : 0;
  std::vector<int> all(WorldSize(), 0);
  MPI_Allgather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::string ranks;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r]) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  if (!ranks.empty() && !failed) ADD_FAILURE() << "the test failed on rank(s) " << ranks;
}

std::string MpiTest::SharedTempDir(const std::string& prefix) {
  char path[4096] = {0};
  if (WorldRank() == 0) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "_XXXXXX";
    std::snprintf(path, sizeof(path), "%s", pattern.c_str());
    if (!mkdtemp(path)) path[0] = '\0';
  }
  MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_NE(path[0], '\0') << "mkdtemp failed";
  if (WorldRank() == 0 && path[0]) TempDirs().push_back(path);
  return path;
}

}  // namespace caffe

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = std::getenv("CAFFE_TEST_LOG") ? 0 : 2;  // quiet unless asked
  caffe::Caffe::set_random_seed(1701);
  if (caffe::WorldRank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new caffe::FailurePrinter);
  }
  const int local = RUN_ALL_TESTS();
  // The job passes only if every rank passed.
  int result = local;
  MPI_Allreduce(&local, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (result == 0) {
    for (const std::string& dir : caffe::TempDirs()) std::filesystem::remove_all(dir);
  }
  MPI_Finalize();
  return result;
}
