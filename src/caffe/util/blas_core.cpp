#include "caffe/util/blas_core.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <glog/logging.h>
#include <strings.h>

#include <cstdlib>
#include <mutex>

#include "caffe/util/environment.hpp"

namespace caffe {

namespace {

constexpr char kCoreTypeVariable[] = "OPENBLAS_CORETYPE";

// OpenBLAS's x86 cores whose kernels stop short of AVX2: the generic fallback for CPUs its table
// lacks ("Prescott", or "Unknown") and the Intel cores before Haswell. AMD's cores are left alone:
// OpenBLAS knows their families and picks kernels for them that it has tuned.
constexpr const char* kCoresWithoutAvx2[] = {"Unknown",  "Katmai",     "Coppermine", "Northwood",
                                             "Prescott", "Banias",     "Atom",       "Core2",
                                             "Penryn",   "Dunnington", "Nehalem",    "Sandybridge"};

// Its cores with AVX2 kernels but none for AVX-512.
constexpr const char* kAvx2Cores[] = {"Haswell", "Zen", "Excavator"};

bool SameName(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

template <size_t kCount>
bool NamedIn(const std::string& name, const char* const (&names)[kCount]) {
  for (const char* listed : names) {
    if (SameName(name, listed)) return true;
  }
  return false;
}

// OpenBLAS's DYNAMIC_ARCH entry points that choose the kernels: `init` reads OPENBLAS_CORETYPE
// (or the CPU) and installs a core when none is installed, `quit` uninstalls it. Looked up in the
// library that defines openblas_get_corename, which pycaffe's import loads into a local scope
// where RTLD_DEFAULT would not see it.
struct CoreEntryPoints {
  void (*init)() = nullptr;
  void (*quit)() = nullptr;
};

CoreEntryPoints FindCoreEntryPoints() {
  CoreEntryPoints entry;
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&openblas_get_corename), &info) || !info.dli_fname) {
    return entry;
  }
  void* library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (!library) return entry;
  entry.init = reinterpret_cast<void (*)()>(dlsym(library, "gotoblas_dynamic_init"));
  entry.quit = reinterpret_cast<void (*)()>(dlsym(library, "gotoblas_dynamic_quit"));
  dlclose(library);  // only drops the reference NOLOAD took; the library stays loaded
  if (!entry.init || !entry.quit) entry = CoreEntryPoints();
  return entry;
}

}  // namespace

CpuVectorSupport DetectCpuVectorSupport() {
  CpuVectorSupport cpu;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  cpu.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
#endif
  return cpu;
}

std::string UnusedVectorUnits(const std::string& core, const CpuVectorSupport& cpu) {
  if (NamedIn(core, kCoresWithoutAvx2)) {
    if (cpu.avx512) return "AVX2 and AVX-512";
    return cpu.avx2_fma ? "AVX2" : "";
  }
  return NamedIn(core, kAvx2Cores) && cpu.avx512 ? "AVX-512" : "";
}

std::string BlasCoreFor(const std::string& chosen, const CpuVectorSupport& cpu) {
  if (!NamedIn(chosen, kCoresWithoutAvx2)) return "";
  if (cpu.avx512) return "SkylakeX";
  if (cpu.avx2_fma) return "Haswell";
  return "";
}

std::string BlasCoreName() {
  const char* name = openblas_get_corename();
  return name ? name : "";
}

bool BlasCoreSwitchable() { return FindCoreEntryPoints().init != nullptr; }

bool SwitchBlasCore(const std::string& core) {
  const CoreEntryPoints entry = FindCoreEntryPoints();
  if (!entry.init) return false;
  // OPENBLAS_CORETYPE names the core to install; the user's value (if any) comes back afterwards.
  const char* user_value = BlasCoreTypeFromEnvironment();
  const std::string saved = user_value ? user_value : "";
  setenv(kCoreTypeVariable, core.c_str(), 1);
  entry.quit();
  entry.init();
  if (user_value) {
    setenv(kCoreTypeVariable, saved.c_str(), 1);
  } else {
    unsetenv(kCoreTypeVariable);
  }
  return SameName(BlasCoreName(), core.c_str());
}

BlasCoreFit FitBlasCoreToCpuNow() {
  BlasCoreFit fit;
  fit.chosen = BlasCoreName();
  const CpuVectorSupport cpu = DetectCpuVectorSupport();
  fit.unused = UnusedVectorUnits(fit.chosen, cpu);
  if (const char* core_type = BlasCoreTypeFromEnvironment()) {
    fit.core_type = core_type;
    return fit;
  }
  const std::string better = BlasCoreFor(fit.chosen, cpu);
  if (better.empty()) return fit;
  if (SwitchBlasCore(better)) {
    fit.switched_to = better;
  } else {
    LOG(WARNING) << "OpenBLAS does not know this CPU and runs its " << fit.chosen
                 << " kernels, which leave its " << fit.unused << " unused (GEMM runs several "
                 << "times slower), and it could not switch to its " << better
                 << " kernels; a newer OpenBLAS, or " << kCoreTypeVariable << "=" << better
                 << ", may help";
  }
  return fit;
}

const BlasCoreFit& FitBlasCoreToCpu() {
  static std::once_flag once;
  static BlasCoreFit fit;
  std::call_once(once, [] { fit = FitBlasCoreToCpuNow(); });
  return fit;
}

bool BlasCoreFitWorthLogging(const BlasCoreFit& fit) {
  return !fit.switched_to.empty() || (!fit.core_type.empty() && !fit.unused.empty());
}

std::string DescribeBlasCoreFit(const BlasCoreFit& fit) {
  if (!fit.switched_to.empty()) {
    return "OpenBLAS does not know this CPU and chose its " + fit.chosen + " kernels, which " +
           "leave its " + fit.unused + " unused; running its " + fit.switched_to +
           " kernels instead (" + kCoreTypeVariable + " chooses otherwise)";
  }
  if (!fit.core_type.empty() && !fit.unused.empty()) {
    return std::string(kCoreTypeVariable) + "=" + fit.core_type + " runs OpenBLAS's " + fit.chosen +
           " kernels, which leave this CPU's " + fit.unused + " unused (GEMM runs slower; unset " +
           kCoreTypeVariable + " to let Caffe choose)";
  }
  return "OpenBLAS runs its " + fit.chosen + " kernels";
}

}  // namespace caffe
