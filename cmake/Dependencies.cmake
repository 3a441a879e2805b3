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

# OpenBLAS: Debian installs one variant per threading model; prefer the pthreads one.
find_path(OpenBLAS_INCLUDE_DIR cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/aarch64-linux-gnu/openblas-pthread
        /usr/include/openblas /usr/include
  NO_DEFAULT_PATH)
find_library(OpenBLAS_LIBRARY NAMES openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread /usr/lib/aarch64-linux-gnu/openblas-pthread)
if(NOT OpenBLAS_INCLUDE_DIR OR NOT OpenBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS not found: run scripts/install_deps.sh (libopenblas-dev)")
endif()

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
