#include "caffe/parallel/mpi_util.hpp"

#include <unistd.h>

#include <climits>
#include <sstream>

namespace caffe {

std::string MpiWhere() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  std::ostringstream where;
  if (initialized && !finalized) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    where << "rank " << rank << " of " << size;
  } else {
    where << "rank ? (MPI not running)";
  }
  where << " on host " << HostName();
  return where.str();
}

void NodeLocalRank(int* local_rank, int* local_size) {
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_Comm local;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
  MPI_CHECK(MPI_Comm_rank(local, local_rank));
  MPI_CHECK(MPI_Comm_size(local, local_size));
  MPI_Comm_free(&local);
}

std::string MpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING + 1] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

void ThrowMpiError(int code, const char* call) {
  throw CommError(std::string(call) + " failed: " + MpiErrorString(code) + " (" + MpiWhere() + ")");
}

MpiGroup::MpiGroup(MPI_Comm comm) : comm_(comm) {
  MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MPI_CHECK(MPI_Comm_size(comm_, &size_));
  MPI_Group group, world_group;
  MPI_CHECK(MPI_Comm_group(comm_, &group));
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  std::vector<int> ranks(size_);
  for (int i = 0; i < size_; ++i) ranks[i] = i;
  world_ranks_.resize(size_);
  MPI_CHECK(
      MPI_Group_translate_ranks(group, size_, ranks.data(), world_group, world_ranks_.data()));
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
}

MpiGroup::~MpiGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

std::shared_ptr<MpiGroup> MpiGroup::Duplicate(MPI_Comm parent) {
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(parent, &comm));
  return std::shared_ptr<MpiGroup>(new MpiGroup(comm));
}

std::shared_ptr<MpiGroup> MpiGroup::Split(MPI_Comm parent, int color, int key) {
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_split(parent, color, key, &comm));
  return std::shared_ptr<MpiGroup>(new MpiGroup(comm));
}

}  // namespace caffe
