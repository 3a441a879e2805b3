# `cmake --install build --prefix P` installs Caffe as a library, as BVLC's `make install` did:
#   P/bin                 the tools (caffe, convert_imageset, ...), which find libcaffe through
#                         their run path $ORIGIN/../lib, so the prefix can be moved
#   P/lib                 libcaffe and the OpenCV image module it loads (io/image_codec.hpp)
#   P/include/caffe       every header under include/caffe but the tests' helpers, found by
#                         pattern (a header that moves between folders stays installed), and the
#                         generated caffe/proto/caffe.pb.h
#   P/lib/cmake/Caffe     CaffeConfig.cmake: find_package(Caffe) gives the one target Caffe::caffe
#   P/lib/pkgconfig       caffe.pc: pkg-config --cflags --libs caffe
#   P/python              pycaffe (python/CMakeLists.txt)
# Included last, when every target exists. scripts/test_install.sh checks the result.
include(CMakePackageConfigHelpers)

get_property(caffe_tool_names GLOBAL PROPERTY CAFFE_BVLC_TOOL_NAMES)
list(TRANSFORM caffe_tool_names APPEND .bin OUTPUT_VARIABLE caffe_installed_programs)
set(caffe_installed_libraries caffe)
if(TARGET caffe_image_opencv)
  list(APPEND caffe_installed_libraries caffe_image_opencv)
  install(TARGETS caffe_image_opencv LIBRARY DESTINATION lib)
endif()
# Installed binaries also keep the directories of the libraries they link (CUDA's, Open MPI's),
# as the build tree's binaries do, besides $ORIGIN/../lib and OpenBLAS's (CMAKE_INSTALL_RPATH).
set_target_properties(${caffe_installed_programs} ${caffe_installed_libraries} PROPERTIES
  INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS ${caffe_installed_programs} RUNTIME DESTINATION bin)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/caffe DESTINATION include
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.cuh" PATTERN "test" EXCLUDE)
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/caffe DESTINATION include
        FILES_MATCHING PATTERN "*.pb.h")

# The ctest that installs the build and uses it from outside (scripts/test_install.sh), in the
# builds that run every test program (not the emulator's, whose install makes no package).
if(CAFFE_BUILD_TESTS AND CAFFE_TEST_SCOPE STREQUAL "all" AND NOT CAFFE_CUDA_EMU)
  add_test(NAME install_find_package
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/test_install.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(install_find_package PROPERTIES LABELS cpu TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endif()

# The emulator build (CAFFE_CUDA_EMU) is for tests: its libcaffe links the emulator, which is
# not installed, so it installs the tools, libraries and headers but no package files.
if(CAFFE_CUDA_EMU)
  install(TARGETS caffe LIBRARY DESTINATION lib)
  return()
endif()

# ---- What libcaffe's users need: Caffe::caffe (CaffeConfig.cmake) and caffe.pc ----------------
# libcaffe passes on its include directories, definitions (CPU_ONLY, USE_DNNL, ...) and the
# libraries its headers use. Some of those come through this build's own helper targets
# (caffeproto, whose code is inside libcaffe, and caffe_dnnl, caffe_cudnn, caffe_nccl, which name
# a system library): an installed package cannot refer to them, so for the installed target
# their contents are written in directly, as are MPI::MPI_C's. The other targets are imported
# ones (protobuf::, PkgConfig::GLOG, OpenMP::, Threads::, CUDA::), which CaffeConfig.cmake finds
# again.

# Drops directories of this source or build tree (the installed include/ replaces them).
function(caffe_outside_tree out)
  set(kept)
  foreach(dir ${ARGN})
    if(NOT dir MATCHES "^(${PROJECT_SOURCE_DIR}|${PROJECT_BINARY_DIR})(/|$)")
      list(APPEND kept ${dir})
    endif()
  endforeach()
  set(${out} ${kept} PARENT_SCOPE)
endfunction()

# The value of generator expression `item` outside this build, for C++ (empty when it has none
# there); the forms CMake's find modules and this build use, and an error naming any other.
function(caffe_installed_value item out)
  set(value "${item}")
  if(value MATCHES "^\\$<BUILD_INTERFACE:" OR value MATCHES "^\\$<\\$<COMPILE_LANGUAGE:[^C]")
    set(value "")
  elseif(value MATCHES "^\\$<(INSTALL_INTERFACE|LINK_ONLY|\\$<COMPILE_LANGUAGE:CXX>):(.*)>$")
    set(value "${CMAKE_MATCH_2}")
  endif()
  if(value MATCHES "^SHELL:(.*)$")
    set(value "${CMAKE_MATCH_1}")
  endif()
  if(value MATCHES "\\$<")
    message(FATAL_ERROR "cmake/Install.cmake: libcaffe passes on '${item}', which caffe.pc "
                        "cannot express: add its form to caffe_installed_value()")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Appends what `item` (a target, a library file or a linker flag) passes on to its users to the
# lists CAFFE_PC_CFLAGS and CAFFE_PC_LIBS in the caller's scope, following its link libraries.
function(caffe_collect_pc item)
  if(NOT TARGET ${item})
    if(item MATCHES "^(/|-)")
      list(APPEND CAFFE_PC_LIBS ${item})
    else()
      list(APPEND CAFFE_PC_LIBS -l${item})
    endif()
  else()
    get_target_property(type ${item} TYPE)
    get_target_property(imported ${item} IMPORTED)
    if(imported AND NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(location ${item} IMPORTED_LOCATION_RELEASE)
      if(NOT location)
        get_target_property(location ${item} IMPORTED_LOCATION)
      endif()
      list(APPEND CAFFE_PC_LIBS ${location})
    endif()
    foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS
                     INTERFACE_COMPILE_OPTIONS INTERFACE_LINK_LIBRARIES)
      get_target_property(entries ${item} ${property})
      foreach(entry IN LISTS entries)
        caffe_installed_value("${entry}" value)
        if(value STREQUAL "" OR value MATCHES "-NOTFOUND$")
          continue()
        elseif(property STREQUAL "INTERFACE_INCLUDE_DIRECTORIES")
          caffe_outside_tree(value ${value})
          if(value AND NOT value IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
            list(APPEND CAFFE_PC_CFLAGS -I${value})
          endif()
        elseif(property STREQUAL "INTERFACE_COMPILE_DEFINITIONS")
          list(APPEND CAFFE_PC_CFLAGS -D${value})
        elseif(property STREQUAL "INTERFACE_COMPILE_OPTIONS")
          list(APPEND CAFFE_PC_CFLAGS ${value})
          if(value STREQUAL "-fopenmp")
            list(APPEND CAFFE_PC_LIBS -fopenmp)  # OpenMP's runtime, when linking too
          endif()
        else()
          caffe_collect_pc(${value})
        endif()
      endforeach()
    endforeach()
  endif()
  set(CAFFE_PC_CFLAGS ${CAFFE_PC_CFLAGS} PARENT_SCOPE)
  set(CAFFE_PC_LIBS ${CAFFE_PC_LIBS} PARENT_SCOPE)
endfunction()

# The find_dependency() lines CaffeConfig.cmake needs for imported target `target` (appended to
# CAFFE_FIND_DEPENDENCIES in the caller's scope).
function(caffe_find_dependency target)
  if(target MATCHES "^protobuf::")
    set(call "find_dependency(Protobuf)")
  elseif(target STREQUAL "PkgConfig::GLOG")
    string(CONCAT call "find_dependency(PkgConfig)\n" "if(NOT TARGET PkgConfig::GLOG)\n"
           "  pkg_check_modules(GLOG REQUIRED QUIET IMPORTED_TARGET libglog)\n" "endif()")
  elseif(target MATCHES "^OpenMP::")
    set(call "find_dependency(OpenMP COMPONENTS CXX)")
  elseif(target MATCHES "^Threads::")
    set(call "find_dependency(Threads)")
  elseif(target MATCHES "^CUDA::")
    set(call "find_dependency(CUDAToolkit)")
  else()
    message(FATAL_ERROR "cmake/Install.cmake: libcaffe passes on the imported target ${target}, "
                        "which CaffeConfig.cmake does not know how to find: add it to "
                        "caffe_find_dependency()")
  endif()
  if(NOT call IN_LIST CAFFE_FIND_DEPENDENCIES)
    set(CAFFE_FIND_DEPENDENCIES ${CAFFE_FIND_DEPENDENCIES} "${call}" PARENT_SCOPE)
  endif()
endfunction()

# Whether libcaffe's users get `item`'s contents written in rather than the target found again:
# this build's own helper targets, and MPI::MPI_C, whose finding (FindMPI's C component) would
# make every user's project enable the C language.
function(caffe_written_in item out)
  set(written_in FALSE)
  if(TARGET ${item})
    get_target_property(imported ${item} IMPORTED)
    get_target_property(aliased ${item} ALIASED_TARGET)
    if((NOT imported AND NOT aliased) OR item STREQUAL "MPI::MPI_C")
      set(written_in TRUE)
    endif()
  endif()
  set(${out} ${written_in} PARENT_SCOPE)
endfunction()

# Rewrites libcaffe's usage requirements for the installed target: each target that is written
# in (caffe_written_in) stays as it is inside the build and is replaced by its contents outside
# it; CAFFE_FIND_DEPENDENCIES gets the imported targets that remain.
function(caffe_flatten_for_install target)
  get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
  set(new_links)
  foreach(item IN LISTS links)
    caffe_written_in(${item} written_in)
    if(NOT written_in)
      if(TARGET ${item})
        caffe_find_dependency(${item})
      endif()
      list(APPEND new_links "${item}")
      continue()
    endif()
    list(APPEND new_links "$<BUILD_INTERFACE:${item}>")
    foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS
                     INTERFACE_COMPILE_OPTIONS)
      get_target_property(values ${item} ${property})
      if(property STREQUAL "INTERFACE_INCLUDE_DIRECTORIES")
        caffe_outside_tree(values ${values})
      endif()
      foreach(value IN LISTS values)
        if(value)
          set_property(TARGET ${target} APPEND PROPERTY ${property} "$<INSTALL_INTERFACE:${value}>")
        endif()
      endforeach()
    endforeach()
    get_target_property(sublinks ${item} INTERFACE_LINK_LIBRARIES)
    foreach(sublink IN LISTS sublinks)
      caffe_written_in(${sublink} sub_written_in)
      if(sub_written_in)
        message(FATAL_ERROR "cmake/Install.cmake: ${item} links ${sublink}, which cannot be "
                            "written into libcaffe's installed target as ${item} is")
      elseif(TARGET ${sublink})
        caffe_find_dependency(${sublink})
      endif()
      if(sublink)
        list(APPEND new_links "$<INSTALL_INTERFACE:${sublink}>")
      endif()
    endforeach()
  endforeach()
  set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES ${new_links})
  set(CAFFE_FIND_DEPENDENCIES ${CAFFE_FIND_DEPENDENCIES} PARENT_SCOPE)
endfunction()

# caffe.pc: the same flags, all spelt out (pkg-config has no targets to find again).
set(CAFFE_PC_CFLAGS)
set(CAFFE_PC_LIBS)
caffe_collect_pc(caffe)
list(REMOVE_DUPLICATES CAFFE_PC_CFLAGS)
list(REVERSE CAFFE_PC_LIBS)
list(REMOVE_DUPLICATES CAFFE_PC_LIBS)  # a library stays after the last one that needs it
list(REVERSE CAFFE_PC_LIBS)
list(JOIN CAFFE_PC_CFLAGS " " CAFFE_PC_CFLAGS)
list(JOIN CAFFE_PC_LIBS " " CAFFE_PC_LIBS)
configure_file(${CMAKE_CURRENT_LIST_DIR}/caffe.pc.in ${PROJECT_BINARY_DIR}/caffe.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/caffe.pc DESTINATION lib/pkgconfig)

set(CAFFE_FIND_DEPENDENCIES)
caffe_flatten_for_install(caffe)
list(JOIN CAFFE_FIND_DEPENDENCIES "\n" CAFFE_FIND_DEPENDENCIES)
# Caffe's headers are C++17.
set_property(TARGET caffe APPEND PROPERTY INTERFACE_COMPILE_FEATURES
             "$<INSTALL_INTERFACE:cxx_std_17>")

install(TARGETS caffe EXPORT CaffeTargets LIBRARY DESTINATION lib INCLUDES DESTINATION include)
install(EXPORT CaffeTargets NAMESPACE Caffe:: DESTINATION lib/cmake/Caffe)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/CaffeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CaffeConfig.cmake INSTALL_DESTINATION lib/cmake/Caffe)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CaffeConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/CaffeConfig.cmake ${PROJECT_BINARY_DIR}/CaffeConfigVersion.cmake
        DESTINATION lib/cmake/Caffe)
