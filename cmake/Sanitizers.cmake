# Sanitizer builds: CAFFE_SANITIZE=address,undefined (AddressSanitizer + UndefinedBehaviorSanitizer)
# or thread (ThreadSanitizer) instruments the library, the tools and the tests alike, so the test
# programs find memory errors, undefined behaviour and data races in our code. scripts/test.sh runs
# both (build-asan/, build-tsan/); the README's "Building by hand" says how to run them alone.
set(CAFFE_SANITIZE "" CACHE STRING "Sanitizers to build with: empty, address,undefined or thread")
set_property(CACHE CAFFE_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

# What every test of a sanitizer build runs with (tests add it to their ENVIRONMENT), and what the
# tests under mpirun run with instead; empty otherwise.
set(CAFFE_SANITIZER_TEST_ENV "")
set(CAFFE_SANITIZER_MPI_TEST_ENV "")

# Registers test program `name` as one ctest running all its cases in one process, with the
# variables after `name` and CAFFE_SANITIZER_TEST_ENV in its ENVIRONMENT. Every sanitizer build
# does: an instrumented program takes 0.4 s of CPU to start (ASan's shadow memory, libcaffe's
# instrumented globals), which over the stages' thousand-odd cases run one per process would cost
# minutes.
function(caffe_add_program_test name)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS cpu TIMEOUT 1800
                       ENVIRONMENT "${ARGN};${CAFFE_SANITIZER_TEST_ENV}")
endfunction()

# The test programs a sanitizer build runs (CAFFE_TEST_SCOPE=sanitizer, as scripts/test.sh builds
# them): the whole CPU suite under a sanitizer would take most of CI's time limit, so each stage
# takes the programs whose code its sanitizer checks best.
# AddressSanitizer + UBSan: the core (blobs, memory, nets, solvers, the math they run on), LMS, DDL
# (with its mpirun suites) and data loading (databases, images, the data layers and their
# prefetch threads), and the caffe tool end to end. Not test_image_codec_opencv: its cases need a
# process each (whether OpenCV is mapped yet), and the codec runs under test_image_io anyway.
set(CAFFE_ASAN_TESTS
  test_blob test_common test_syncedmem test_filler test_layer test_layer_factory test_net
  test_solver test_solver_factory test_sgd_solver test_adam_solver test_data_transformer
  test_math_functions test_blas_core test_vector_math test_im2col test_winograd_convolution
  test_thread_scratch test_io test_upgrade_proto test_insert_splits test_worker_pool
  test_golden_nets
  test_device test_device_allocator test_lms_options test_memory_manager test_planner test_session
  test_comm_thread test_compression test_ddl_options test_device_buffer test_gradient_order
  test_in_process_sync test_nccl_solver_sync test_mpi_util test_communicator test_ring_communicator
  test_mpi_communicator test_rcs_communicator test_explorer test_hierarchical_communicator
  test_heartbeat test_ddl_session test_ddl_sync test_gradient_buffer test_shared_memory_communicator
  test_data_layer test_base_data_layer test_image_data_layer test_hdf5_data_layer
  test_memory_data_layer test_window_data_layer test_db test_db_leveldb test_hdf5 test_image_io
  test_mnist_idx test_timeline
  test_caffe_tool)
# ThreadSanitizer: the programs whose code runs on threads of its own: DDL's communication thread
# (and its mpirun suites), the heartbeat, multi-GPU training's solver threads, the data layers'
# prefetch threads and worker pool, LMS's manager (one per solver thread), and the timeline's
# recorder, which all of them write to.
set(CAFFE_TSAN_TESTS
  test_comm_thread test_heartbeat test_ddl_sync test_ddl_session test_in_process_sync
  test_nccl_solver_sync test_worker_pool test_base_data_layer test_data_layer
  test_image_data_layer test_memory_manager test_session test_shared_memory_communicator
  test_timeline)
if(CAFFE_SANITIZE STREQUAL "thread")
  set(CAFFE_SANITIZER_TESTS ${CAFFE_TSAN_TESTS})
else()
  set(CAFFE_SANITIZER_TESTS ${CAFFE_ASAN_TESTS})
endif()

if(NOT CAFFE_SANITIZE)
  return()
endif()
if(NOT CAFFE_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
  message(FATAL_ERROR "CAFFE_SANITIZE is \"${CAFFE_SANITIZE}\"; expected address,undefined, "
                      "address, undefined or thread (or empty for none)")
endif()
if(CAFFE_HAVE_CUDA AND NOT CAFFE_CUDA_EMU)
  message(FATAL_ERROR "CAFFE_SANITIZE=${CAFFE_SANITIZE} needs a CPU or CUDA emulator build "
                      "(-DCAFFE_CUDA=OFF): device code cannot be instrumented")
endif()

set(sanitize_flags -fsanitize=${CAFFE_SANITIZE} -fno-omit-frame-pointer)
if(CAFFE_SANITIZE MATCHES "undefined")
  # A report ends the program, so the test that triggered it fails instead of printing and passing.
  list(APPEND sanitize_flags -fno-sanitize-recover=undefined)
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${sanitize_flags}>")
add_link_options(-fsanitize=${CAFFE_SANITIZE})
# -O1 -g1: the instrumented programs run 2-15x slower than at -O3 whatever the level, and compile in
# about half the time; line tables (-g1) let each report name the file and line.
set(CMAKE_CXX_FLAGS_RELEASE "-O1 -g1 -DNDEBUG")
set(CMAKE_C_FLAGS_RELEASE "-O1 -g1 -DNDEBUG")

set(supp ${CMAKE_CURRENT_LIST_DIR}/sanitizers)
if(CAFFE_SANITIZE MATCHES "address")
  # Leaks are checked (a process's unfreed memory at exit is ours unless lsan.supp says whose).
  # check_initialization_order: a static initializer (layer and solver registration) that reads
  # another file's global before it is constructed.
  list(APPEND CAFFE_SANITIZER_TEST_ENV
    "ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_init_order=1"
    "LSAN_OPTIONS=suppressions=${supp}/lsan.supp:print_suppressions=0")
endif()
if(CAFFE_SANITIZE MATCHES "undefined")
  list(APPEND CAFFE_SANITIZER_TEST_ENV "UBSAN_OPTIONS=print_stacktrace=1")
endif()
if(CAFFE_SANITIZE STREQUAL "thread")
  # GNU OpenMP (libgomp, and OpenBLAS's OpenMP variant on it) is not built with ThreadSanitizer:
  # its barriers are invisible to it, so every parallel loop would be reported as a race. One
  # OpenMP thread keeps the loops on the calling thread; the threads under test are our own.
  # ignore_noninstrumented_modules: the memory accesses a system library makes through TSan's
  # interceptors (memcpy, free, its mutexes' state) are not checked, only our code's; the library
  # synchronises by means TSan does not see (atomics, internal locks), so they would be reported
  # against our accesses. Without it: Open MPI, where any thread inside MPI progresses every
  # request (the heartbeat's MPI_Test unpacks the communication thread's receive into our buffer,
  # which the training thread then reads after CommThread::Wait: a race on every element, which
  # also made test_ddl_sync run past 15 minutes); glibc's tzset under glog's timestamps (its own
  # lock); OpenBLAS's packing buffers handed between two solver threads (its spin locks); GDAL's
  # two set-up mutexes taken in both orders on one thread (OpenCV loads it).
  list(APPEND CAFFE_SANITIZER_TEST_ENV "OMP_NUM_THREADS=1"
    "TSAN_OPTIONS=ignore_noninstrumented_modules=1:second_deadlock_stack=1:history_size=4")
endif()
# Under mpirun, leaks are unwound slowly: Open MPI's are suppressed by the Open MPI functions deep
# in their stacks (lsan.supp), which the fast unwinder, stopping at its first frame without a frame
# pointer, never reaches.
set(CAFFE_SANITIZER_MPI_TEST_ENV ${CAFFE_SANITIZER_TEST_ENV})
list(TRANSFORM CAFFE_SANITIZER_MPI_TEST_ENV REPLACE "^(ASAN_OPTIONS=.*)$"
     "\\1:fast_unwind_on_malloc=0")
