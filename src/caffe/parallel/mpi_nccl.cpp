#include "caffe/parallel/mpi_nccl.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "caffe/parallel/comm_error.hpp"

namespace caffe {

namespace {

// The UUID of the current CUDA device as 32 hex digits.
std::string CurrentGpuUuid() {
  int device = 0;
  cudaDeviceProp properties;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    throw CommError("cannot read the current GPU's properties (" + MpiWhere() + ")");
  }
  std::string hex;
  char digits[3];
  for (unsigned char byte : properties.uuid.bytes) {
    std::snprintf(digits, sizeof(digits), "%02x", byte);
    hex += digits;
  }
  return hex;
}

}  // namespace

bool NcclGroupHasDistinctGpus(const MpiGroup& group, std::string* shared) {
  const std::string mine = CurrentGpuUuid();
  constexpr int kLength = 32;
  std::vector<char> all(static_cast<size_t>(kLength) * group.size());
  MPI_CHECK(
      MPI_Allgather(mine.data(), kLength, MPI_CHAR, all.data(), kLength, MPI_CHAR, group.comm()));
  for (int a = 0; a < group.size(); ++a) {
    for (int b = a + 1; b < group.size(); ++b) {
      if (std::equal(all.begin() + a * kLength, all.begin() + (a + 1) * kLength,
                     all.begin() + b * kLength)) {
        if (shared) {
          *shared = "learners " + std::to_string(group.world_ranks()[a]) + " and " +
                    std::to_string(group.world_ranks()[b]) + " share GPU " +
                    std::string(all.begin() + a * kLength, all.begin() + (a + 1) * kLength);
        }
        return false;
      }
    }
  }
  return true;
}

template <typename Dtype>
std::unique_ptr<NcclCommunicator<Dtype>> NcclCommunicatorOver(const MpiGroup& group) {
  std::string uid(sizeof(ncclUniqueId::internal), '\0');
  if (group.rank() == 0) uid = NcclCommunicator<Dtype>::NewUid();
  MPI_CHECK(MPI_Bcast(&uid[0], static_cast<int>(uid.size()), MPI_BYTE, 0, group.comm()));
  return std::make_unique<NcclCommunicator<Dtype>>(uid, group.rank(), group.size(), MpiWhere());
}

template std::unique_ptr<NcclCommunicator<float>> NcclCommunicatorOver(const MpiGroup&);
template std::unique_ptr<NcclCommunicator<double>> NcclCommunicatorOver(const MpiGroup&);

}  // namespace caffe
