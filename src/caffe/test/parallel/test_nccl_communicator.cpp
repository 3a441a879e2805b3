// NcclCommunicator (GPU builds with NCCL; skipped without a GPU): on device buffers, the exact
// sum for every test length, reduce-scatter and allgather with even blocks (NCCL's own calls)
// and uneven ones (grouped reduce / broadcast), and the hierarchical allreduce of mode n and b
// with GPU learners. Rank r uses GPU r modulo the GPUs visible; where ranks share a GPU, the
// NCCL-only cases skip and modes n and b must fall back to a host algorithm.
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/memory/device_buffer.hpp"
#include "caffe/parallel/hierarchical_communicator.hpp"
#include "caffe/parallel/mpi_nccl.hpp"
#include "caffe/test/communicator_test_util.hpp"

namespace caffe {

namespace {

// The device-buffer form of the host checks.
template <typename Dtype>
void ExpectExactOnDevice(Communicator<Dtype>* comm, int size) {
  for (size_t count : CommunicatorTestLengths()) {
    std::vector<Dtype> host = Contributions<Dtype>(comm->rank(), count);
    DeviceBuffer<Dtype> device(count);
    CopyHostToDevice(host.data(), device.data(), count * sizeof(Dtype));
    comm->Allreduce(device.data(), count);
    CopyDeviceToHost(device.data(), host.data(), count * sizeof(Dtype));
    EXPECT_EQ(FirstWrongSum(host, size, 0, count), count) << comm->name() << ", " << count;
  }
}

}  // namespace

template <typename Dtype>
class NcclCommunicatorTest : public MpiTest {
 protected:
  void SetUp() override {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
    int count = 0;
    cudaGetDeviceCount(&count);
    Caffe::SetDevice(WorldRank() % count);
    distinct_gpus_ = NcclGroupHasDistinctGpus(*MpiGroup::Duplicate(MPI_COMM_WORLD));
  }
  // NCCL itself needs one GPU per rank (more ranks than GPUs share them).
  void SkipUnlessDistinctGpus() {
    if (!distinct_gpus_) GTEST_SKIP() << "NCCL needs one GPU per rank: more ranks than GPUs";
  }
  bool distinct_gpus_ = true;
};
TYPED_TEST_SUITE(NcclCommunicatorTest, MpiTestDtypes);

TYPED_TEST(NcclCommunicatorTest, AllreduceGivesTheExactSum) {
  this->SkipUnlessDistinctGpus();
  auto comm = NcclCommunicatorOver<TypeParam>(*MpiGroup::Duplicate(MPI_COMM_WORLD));
  EXPECT_TRUE(comm->on_device());
  ExpectExactOnDevice(comm.get(), WorldSize());
}

TYPED_TEST(NcclCommunicatorTest, ReduceScatterAndAllgatherWithEvenAndUnevenBlocks) {
  this->SkipUnlessDistinctGpus();
  auto comm = NcclCommunicatorOver<TypeParam>(*MpiGroup::Duplicate(MPI_COMM_WORLD));
  for (const Blocks& blocks :
       {Blocks::Even(WorldSize() * 1000, WorldSize()), UnevenBlocks(WorldSize(), 777)}) {
    const size_t total = blocks.total();
    std::vector<TypeParam> host = Contributions<TypeParam>(WorldRank(), total);
    DeviceBuffer<TypeParam> device(total);
    CopyHostToDevice(host.data(), device.data(), total * sizeof(TypeParam));
    comm->ReduceScatter(device.data(), blocks);
    comm->Allgather(device.data(), blocks);
    CopyDeviceToHost(device.data(), host.data(), total * sizeof(TypeParam));
    EXPECT_EQ(FirstWrongSum(host, WorldSize(), 0, total), total);
  }
}

TYPED_TEST(NcclCommunicatorTest, GpuLearnersModesNAndB) {
  for (const char* mode : {"-mode n", "-mode b", "-mode r"}) {
    const DdlOptions options = ParseDdlOptions(mode);
    auto comm = CreateDdlCommunicator<TypeParam>(options, ResolveDdlTopology(options, WorldSize()),
                                                 true, 4096);
    // Learners sharing a GPU reduce through host memory instead (NCCL refuses them).
    if (WorldSize() > 1 && std::string(mode) != "-mode r") {
      EXPECT_EQ(comm->name() == "nccl", this->distinct_gpus_) << comm->name();
    }
    ExpectExactOnDevice(comm.get(), WorldSize());
  }
}

}  // namespace caffe
