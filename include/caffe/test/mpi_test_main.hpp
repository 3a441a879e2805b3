// Scaffolding for the DDL suites that run under mpirun (ctest label mpi): every process runs
// every test, and MpiTest's TearDown makes them agree on the outcome, so a check that failed on
// any rank fails the test on every rank, naming the ranks. The main (src/caffe/test/parallel/
// mpi_test_main.cpp) starts MPI with MPI_THREAD_MULTIPLE, as DDL does; only rank 0 prints gtest's
// report, the others print their own failures.
#ifndef CAFFE_TEST_MPI_TEST_MAIN_HPP_
#define CAFFE_TEST_MPI_TEST_MAIN_HPP_

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

namespace caffe {

/// float and double, for typed tests.
using MpiTestDtypes = ::testing::Types<float, double>;

int WorldRank();
int WorldSize();

/// Fixture for tests run on every MPI process.
class MpiTest : public ::testing::Test {
 protected:
  /// Fails the test on every rank if it failed on any.
  void TearDown() override;
  /// A temporary folder made by rank 0, the same path on every rank (removed when the suite
  /// passes). Collective.
  std::string SharedTempDir(const std::string& prefix);
};

}  // namespace caffe

#endif  // CAFFE_TEST_MPI_TEST_MAIN_HPP_
