# Finds the libraries Caffe builds on (Debian packages; scripts/install_deps.sh installs them) and
# exposes each as an imported target or variables used by src/caffe/CMakeLists.txt.
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(PkgConfig REQUIRED)

pkg_check_modules(GLOG REQUIRED IMPORTED_TARGET libglog)
find_path(GFLAGS_INCLUDE_DIR gflags/gflags.h REQUIRED)
find_library(GFLAGS_LIBRARY gflags REQUIRED)
find_path(LMDB_INCLUDE_DIR lmdb.h REQUIRED)
find_library(LMDB_LIBRARY lmdb REQUIRED)

set(HDF5_PREFER_PARALLEL OFF)
find_package(HDF5 REQUIRED COMPONENTS C HL)

# OpenMP: Caffe's own loops run in parallel (see include/caffe/util/parallel.hpp).
find_package(OpenMP REQUIRED COMPONENTS CXX)

# OpenBLAS: Debian installs one variant per threading model. The OpenMP one shares Caffe's thread
# pool: single-threaded inside Caffe's parallel loops, all threads for a GEMM outside them.
set(CAFFE_OPENBLAS_VARIANT "openmp" CACHE STRING "Debian OpenBLAS variant: openmp or pthread")
foreach(arch x86_64 aarch64)
  list(APPEND _openblas_include_hints /usr/include/${arch}-linux-gnu/openblas-${CAFFE_OPENBLAS_VARIANT})
  list(APPEND _openblas_lib_hints /usr/lib/${arch}-linux-gnu/openblas-${CAFFE_OPENBLAS_VARIANT})
endforeach()
# Cached per variant, so switching variants never reuses the other one's paths.
find_path(OpenBLAS_${CAFFE_OPENBLAS_VARIANT}_INCLUDE_DIR cblas.h PATHS ${_openblas_include_hints}
  NO_DEFAULT_PATH)
find_library(OpenBLAS_${CAFFE_OPENBLAS_VARIANT}_LIBRARY NAMES openblas
  PATHS ${_openblas_lib_hints} NO_DEFAULT_PATH)
set(OpenBLAS_INCLUDE_DIR ${OpenBLAS_${CAFFE_OPENBLAS_VARIANT}_INCLUDE_DIR})
set(OpenBLAS_LIBRARY ${OpenBLAS_${CAFFE_OPENBLAS_VARIANT}_LIBRARY})
if(NOT OpenBLAS_INCLUDE_DIR OR NOT OpenBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS (${CAFFE_OPENBLAS_VARIANT} variant) not found: run "
                      "scripts/install_deps.sh (libopenblas-${CAFFE_OPENBLAS_VARIANT}-dev)")
endif()
# Every variant's library is called libopenblas.so.0; without a run path the loader would take
# whichever one Debian's alternatives point /usr/lib/<arch>/libopenblas.so.0 at.
get_filename_component(OpenBLAS_LIBRARY_DIR ${OpenBLAS_LIBRARY} DIRECTORY)
list(APPEND CMAKE_BUILD_RPATH ${OpenBLAS_LIBRARY_DIR})
list(APPEND CMAKE_INSTALL_RPATH ${OpenBLAS_LIBRARY_DIR})

# CUDA: optional. AUTO enables it when nvcc is found.
set(CAFFE_HAVE_CUDA OFF)
if(NOT CAFFE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(CAFFE_HAVE_CUDA ON)
  elseif(CAFFE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "CAFFE_CUDA=ON but no CUDA compiler/toolkit was found")
  else()
    message(STATUS "CUDA not found: building the CPU-only variant")
  endif()
endif()
if(CAFFE_HAVE_CUDA)
  set(CAFFE_CUDA_ARCHITECTURES "90" CACHE STRING "CUDA architectures (PTX of the last is embedded)")
  set(CMAKE_CUDA_ARCHITECTURES ${CAFFE_CUDA_ARCHITECTURES})
  enable_language(CUDA)
endif()
