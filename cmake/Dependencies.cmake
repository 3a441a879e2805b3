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

# LevelDB (libleveldb-dev), optional: data_param's `backend: LEVELDB` (BVLC's default) and the
# tools' --backend=leveldb. Without it those are one clear error.
set(CAFFE_HAVE_LEVELDB OFF)
if(NOT CAFFE_LEVELDB STREQUAL "OFF")
  find_path(LEVELDB_INCLUDE_DIR leveldb/db.h)
  find_library(LEVELDB_LIBRARY leveldb)
  if(LEVELDB_INCLUDE_DIR AND LEVELDB_LIBRARY)
    set(CAFFE_HAVE_LEVELDB ON)
  elseif(CAFFE_LEVELDB STREQUAL "ON")
    message(FATAL_ERROR "CAFFE_LEVELDB=ON but LevelDB was not found: install libleveldb-dev")
  endif()
endif()

set(HDF5_PREFER_PARALLEL OFF)
find_package(HDF5 REQUIRED COMPONENTS C HL)

# OpenMP: Caffe's own loops run in parallel (see include/caffe/util/cpu_threads.hpp).
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

# oneDNN: optional (the CPU engine for Convolution; see include/caffe/layer_engine.hpp). Debian's
# libdnnl-dev ships no CMake package, so header and library are looked up directly. Its OpenMP
# runtime is GNU's, the same pool as Caffe's loops and OpenBLAS. Exposed as the target caffe_dnnl.
set(CAFFE_HAVE_DNNL OFF)
if(NOT CAFFE_DNNL STREQUAL "OFF")
  find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_library(DNNL_LIBRARY dnnl)
  if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
    add_library(caffe_dnnl INTERFACE)
    target_include_directories(caffe_dnnl INTERFACE ${DNNL_INCLUDE_DIR})
    target_link_libraries(caffe_dnnl INTERFACE ${DNNL_LIBRARY})
    set(CAFFE_HAVE_DNNL ON)
  elseif(CAFFE_DNNL STREQUAL "ON")
    message(FATAL_ERROR "CAFFE_DNNL=ON but oneDNN was not found: run scripts/install_deps.sh "
                        "(libdnnl-dev)")
  else()
    message(STATUS "oneDNN not found: Convolution runs on Caffe's own engine only")
  endif()
endif()

# CUDA: optional. AUTO enables it when nvcc is found.
set(CAFFE_HAVE_CUDA OFF)
if(CAFFE_CUDA_EMU)
  # The GPU code compiles as C++ against src/cuda_emu (its CMakeLists.txt makes the CUDA:: targets).
  set(CAFFE_HAVE_CUDA ON)
elseif(NOT CAFFE_CUDA STREQUAL "OFF")
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
set(CAFFE_HAVE_CUDNN OFF)
if(CAFFE_CUDA_EMU AND NOT CAFFE_CUDNN STREQUAL "OFF")
  # The emulator's cuDNN (src/cuda_emu/cudnn/; its CMakeLists.txt makes caffe_cudnn).
  set(CAFFE_HAVE_CUDNN ON)
endif()
if(CAFFE_HAVE_CUDA AND NOT CAFFE_CUDA_EMU)
  # "90" builds sm_90 code and embeds compute_90 PTX, which newer GPUs compile at load time.
  set(CAFFE_CUDA_ARCHITECTURES "90" CACHE STRING "CUDA architectures (PTX of each is embedded)")
  set(CMAKE_CUDA_ARCHITECTURES ${CAFFE_CUDA_ARCHITECTURES})
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_FLAGS_RELEASE "-O3 -DNDEBUG")
  add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${CAFFE_CUDA_HOST_WARNINGS}>)
  # cuBLAS and cuRAND come with the toolkit; cuDNN is optional (engine: CUDNN layers).
  if(NOT TARGET CUDA::cublas OR NOT TARGET CUDA::curand)
    message(FATAL_ERROR "the CUDA toolkit at ${CUDAToolkit_LIBRARY_DIR} lacks cuBLAS or cuRAND")
  endif()
  if(NOT CAFFE_CUDNN STREQUAL "OFF")
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
      add_library(caffe_cudnn INTERFACE)
      target_include_directories(caffe_cudnn INTERFACE ${CUDNN_INCLUDE_DIR})
      target_link_libraries(caffe_cudnn INTERFACE ${CUDNN_LIBRARY})
      set(CAFFE_HAVE_CUDNN ON)
    elseif(CAFFE_CUDNN STREQUAL "ON")
      message(FATAL_ERROR "CAFFE_CUDNN=ON but cudnn.h or libcudnn was not found")
    else()
      message(STATUS "cuDNN not found: GPU layers use Caffe's own kernels")
    endif()
  endif()
endif()

# OpenCV: optional (image decoding and resizing: convert_imageset, ImageData, encoded Datums).
# Only core, imgproc and imgcodecs are used. Debian's full libopencv-dev ships OpenCVConfig.cmake;
# the smaller libopencv-{core,imgproc,imgcodecs}-dev packages only headers and libraries, so those
# are looked up directly when the config package is absent. Exposed as the target caffe_opencv.
set(CAFFE_HAVE_OPENCV OFF)
if(NOT CAFFE_OPENCV STREQUAL "OFF")
  find_package(OpenCV QUIET COMPONENTS core imgproc imgcodecs)
  if(OpenCV_FOUND)
    add_library(caffe_opencv INTERFACE)
    target_include_directories(caffe_opencv INTERFACE ${OpenCV_INCLUDE_DIRS})
    target_link_libraries(caffe_opencv INTERFACE ${OpenCV_LIBS})
    set(CAFFE_HAVE_OPENCV ON)
  else()
    find_path(OpenCV_CORE_INCLUDE_DIR opencv2/core.hpp PATH_SUFFIXES opencv4)
    find_library(OpenCV_CORE_LIBRARY opencv_core)
    find_library(OpenCV_IMGPROC_LIBRARY opencv_imgproc)
    find_library(OpenCV_IMGCODECS_LIBRARY opencv_imgcodecs)
    if(OpenCV_CORE_INCLUDE_DIR AND OpenCV_CORE_LIBRARY AND OpenCV_IMGPROC_LIBRARY AND
       OpenCV_IMGCODECS_LIBRARY AND EXISTS ${OpenCV_CORE_INCLUDE_DIR}/opencv2/imgcodecs.hpp)
      add_library(caffe_opencv INTERFACE)
      target_include_directories(caffe_opencv INTERFACE ${OpenCV_CORE_INCLUDE_DIR})
      target_link_libraries(caffe_opencv INTERFACE ${OpenCV_IMGCODECS_LIBRARY}
                            ${OpenCV_IMGPROC_LIBRARY} ${OpenCV_CORE_LIBRARY})
      set(CAFFE_HAVE_OPENCV ON)
    endif()
  endif()
  if(NOT CAFFE_HAVE_OPENCV)
    if(CAFFE_OPENCV STREQUAL "ON")
      message(FATAL_ERROR "CAFFE_OPENCV=ON but OpenCV (core, imgproc, imgcodecs) was not found: "
                          "run scripts/install_deps.sh (libopencv-imgcodecs-dev)")
    endif()
    message(STATUS "OpenCV not found: building without image decoding (encoded images, "
                   "convert_imageset and ImageData report that they need OpenCV)")
  endif()
endif()

# MPI: optional (DDL, `caffe train -ddl`). AUTO builds the MPI transport when Open MPI is found
# (Debian: libopenmpi-dev, openmpi-bin). Exposed as MPI::MPI_C; MPIEXEC_EXECUTABLE runs the mpi tests.
set(CAFFE_HAVE_MPI OFF)
if(NOT CAFFE_MPI STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND AND MPIEXEC_EXECUTABLE)
    set(CAFFE_HAVE_MPI ON)
  elseif(CAFFE_MPI STREQUAL "ON")
    message(FATAL_ERROR "CAFFE_MPI=ON but Open MPI (mpicc, mpirun) was not found: run "
                        "scripts/install_deps.sh (libopenmpi-dev openmpi-bin)")
  else()
    message(STATUS "MPI not found: building without DDL (caffe train -ddl reports it)")
  endif()
endif()

# NCCL: the GPU collective library (CUDA builds only), from the CUDA toolkit's folders or the
# system's. DDL uses it for its GPU communicator when MPI is also built, and multi-GPU training in
# one process (`caffe train -gpu 0,1`) for its allreduce. Exposed as caffe_nccl.
set(CAFFE_HAVE_NCCL OFF)
if(CAFFE_CUDA_EMU AND NOT CAFFE_NCCL STREQUAL "OFF")
  # The emulator's NCCL (src/cuda_emu/nccl.cpp; its CMakeLists.txt makes caffe_nccl).
  set(CAFFE_HAVE_NCCL ON)
elseif(CAFFE_HAVE_CUDA AND NOT CAFFE_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    if(NOT TARGET caffe_nccl)
      add_library(caffe_nccl INTERFACE)
      target_include_directories(caffe_nccl INTERFACE ${NCCL_INCLUDE_DIR})
      target_link_libraries(caffe_nccl INTERFACE ${NCCL_LIBRARY})
    endif()
    set(CAFFE_HAVE_NCCL ON)
  elseif(CAFFE_NCCL STREQUAL "ON")
    message(FATAL_ERROR "CAFFE_NCCL=ON but nccl.h or libnccl was not found")
  else()
    message(STATUS "NCCL not found: GPU learners reduce through MPI on the host, and "
                   "multi-GPU training in one process sums gradients in host memory")
  endif()
endif()

# pycaffe: Python, numpy, pybind11, protobuf for Python (see Pycaffe.cmake).
include(Pycaffe)
