// Which of OpenBLAS's kernel sets ("cores") runs Caffe's GEMMs and vector routines.
//
// OpenBLAS built for many CPUs (DYNAMIC_ARCH, as Debian ships it) picks its kernels at load time
// from the CPU's model number. A CPU newer than the library is not in its table and gets the
// generic SSE3 kernels ("Prescott"): Debian 12's OpenBLAS 0.3.21 does this on Intel's Emerald
// Rapids (family 6, model 207), where sgemm then runs at 37 GFLOP/s instead of 226 with the
// AVX-512 kernels (2 cores). FitBlasCoreToCpu puts that right once per process: where OpenBLAS
// chose kernels without AVX2 although the CPU has AVX2 (or AVX-512), it switches to Haswell's (or
// SkylakeX's) kernels; the tools say so in their log. A user's OPENBLAS_CORETYPE is respected,
// and the tools' log says where it leaves the CPU's vector units unused (a machine whose
// environment sets OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU: sgemm 244 instead of 449).
#ifndef CAFFE_UTIL_BLAS_CORE_HPP_
#define CAFFE_UTIL_BLAS_CORE_HPP_

#include <string>

namespace caffe {

/// The vector instructions this CPU and its operating system support.
struct CpuVectorSupport {
  bool avx2_fma = false;  // AVX2 and FMA: Haswell's kernels
  bool avx512 = false;    // AVX-512 F, CD, BW, DQ and VL: SkylakeX's kernels
};

/// What this machine supports (cpuid and the OS's saved register state, as GCC's runtime sees it).
CpuVectorSupport DetectCpuVectorSupport();

/// The vector instructions `cpu` has that `core`'s kernels leave unused: "AVX2", "AVX-512",
/// "AVX2 and AVX-512", or "" (none, or a name this function does not know).
std::string UnusedVectorUnits(const std::string& core, const CpuVectorSupport& cpu);

/// The core to switch to when OpenBLAS chose `chosen` on a CPU with `cpu`: "SkylakeX" or
/// "Haswell" where `chosen` has no AVX2 kernels (a generic or pre-Haswell Intel core) and the CPU
/// has better; "" to keep `chosen` (also for names this function does not know).
std::string BlasCoreFor(const std::string& chosen, const CpuVectorSupport& cpu);

/// OpenBLAS's name for the kernels in use ("SkylakeX", "Haswell", "Prescott", ...).
std::string BlasCoreName();

/// Whether this OpenBLAS can change its kernels after loading (DYNAMIC_ARCH builds can).
bool BlasCoreSwitchable();

/// Switches OpenBLAS to the kernels named `core` (OpenBLAS's names, any case); returns whether
/// the core in use is now `core`. No BLAS call may run meanwhile, in any thread.
bool SwitchBlasCore(const std::string& core);

/// What fitting did.
struct BlasCoreFit {
  std::string chosen;       // the core in use before: OpenBLAS's choice, or OPENBLAS_CORETYPE's
  std::string switched_to;  // the core switched to; "" where `chosen` was kept
  std::string core_type;    // OPENBLAS_CORETYPE's value; "" where it is not set
  std::string unused;       // UnusedVectorUnits of `chosen` on this CPU
};

/// Applies BlasCoreFor to this machine: switches where it gives a core, does nothing where
/// OPENBLAS_CORETYPE is set. Silent, except for a warning where a switch was needed and failed.
BlasCoreFit FitBlasCoreToCpuNow();

/// FitBlasCoreToCpuNow, the first time a process calls it (GlobalInit, pycaffe's import and the
/// first Caffe context call it, before any BLAS work); later calls return that first result.
const BlasCoreFit& FitBlasCoreToCpu();

/// Whether the tools' log tells of `fit`: a switch, or an OPENBLAS_CORETYPE that leaves this
/// CPU's vector units unused.
bool BlasCoreFitWorthLogging(const BlasCoreFit& fit);

/// One line for the log: which kernels OpenBLAS chose and which run instead, or why the kernels
/// OPENBLAS_CORETYPE chose are slower than they need be.
std::string DescribeBlasCoreFit(const BlasCoreFit& fit);

}  // namespace caffe

#endif  // CAFFE_UTIL_BLAS_CORE_HPP_
