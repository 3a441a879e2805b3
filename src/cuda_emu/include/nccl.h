// The CUDA emulator's NCCL (docs/CUDA_EMU.md): communicators over emulated GPUs, in one process
// (ncclCommInitAll, or ncclCommInitRank from several threads) or across processes on one machine
// (ncclCommInitRank with a unique id, as MPI learners make them), with NCCL's argument checks:
// buffers must be device memory of the communicator's GPU, and two ranks on one GPU are refused.
// Collectives run synchronously: a call returns when every rank has made it, and checks that all
// ranks called the same collective with the same count, type and root.
#ifndef CAFFE_CUDA_EMU_NCCL_H_
#define CAFFE_CUDA_EMU_NCCL_H_

#include <cuda_runtime.h>

#include <cstddef>

#define NCCL_UNIQUE_ID_BYTES 128
struct ncclUniqueId {
  char internal[NCCL_UNIQUE_ID_BYTES];
};

struct ncclComm;
using ncclComm_t = ncclComm*;

enum ncclResult_t {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};

enum ncclRedOp_t { ncclSum = 0 };
enum ncclDataType_t { ncclFloat = 7, ncclFloat32 = 7, ncclDouble = 8, ncclFloat64 = 8 };

const char* ncclGetErrorString(ncclResult_t result);
/// The NCCL version the emulator stands for, as NCCL codes it (10000 * major + 100 * minor +
/// patch): 2.27.0.
ncclResult_t ncclGetVersion(int* version);

ncclResult_t ncclGetUniqueId(ncclUniqueId* unique_id);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId comm_id, int rank);
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error);
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);

/// Between these, collectives are queued and run at the outermost ncclGroupEnd, in order.
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();

#endif  // CAFFE_CUDA_EMU_NCCL_H_
