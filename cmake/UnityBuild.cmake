# CAFFE_UNITY_BUILD=ON compiles libcaffe's C++ sources several to a translation unit. Most of a
# small file's compile time is its headers (caffe.pb.h alone is 1.9 s of ReLU's 3 s): eight layers
# in one unit compile in a third of the time they take one by one. scripts/test.sh, which builds
# the library five times, turns it on; it is off by default, so that an edit recompiles one file.
#
# CMake's own UNITY_BUILD writes absolute paths into its units, so each clone of the checkout
# would miss ccache; these units include their files by paths relative to the build folder,
# the same in every clone (CI clones into a folder of its own).
option(CAFFE_UNITY_BUILD "Compile libcaffe's C++ files several to a unit (faster cold builds)" OFF)
set(CAFFE_UNITY_BATCH 8 CACHE STRING "How many C++ files of libcaffe go into one unity unit")

# Replaces target's plain C++ sources by units of CAFFE_UNITY_BATCH files each, folder by folder.
# A file with flags of its own (COMPILE_OPTIONS, COMPILE_DEFINITIONS, INCLUDE_DIRECTORIES) or
# listed after `ALONE` compiles by itself, as do CUDA files and generated ones (the emulator's
# rewritten kernels).
function(caffe_unity_build target)
  cmake_parse_arguments(ARG "" "" "ALONE" ${ARGN})
  if(NOT CAFFE_UNITY_BUILD)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(unity_dir ${CMAKE_CURRENT_BINARY_DIR}/unity)
  set(alone "")
  foreach(file ${ARG_ALONE})
    get_filename_component(file ${file} ABSOLUTE BASE_DIR ${source_dir})
    list(APPEND alone ${file})
  endforeach()
  set(folders "")
  foreach(source ${sources})
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${source_dir})
    get_source_file_property(generated ${source} GENERATED)
    if(NOT path MATCHES "\\.cpp$" OR path IN_LIST alone OR generated)
      continue()
    endif()
    set(own_flags "")
    foreach(property COMPILE_OPTIONS COMPILE_DEFINITIONS INCLUDE_DIRECTORIES)
      get_source_file_property(value ${source} ${property})
      if(value)
        set(own_flags TRUE)
      endif()
    endforeach()
    if(own_flags)
      continue()
    endif()
    get_filename_component(folder ${path} DIRECTORY)
    string(MAKE_C_IDENTIFIER "${folder}" key)
    if(NOT key IN_LIST folders)
      list(APPEND folders ${key})
      set(files_${key} "")
      file(RELATIVE_PATH name_${key} ${source_dir} ${folder})
    endif()
    list(APPEND files_${key} ${path})
  endforeach()
  foreach(key ${folders})
    string(MAKE_C_IDENTIFIER "${name_${key}}" stem)
    if(stem STREQUAL "")
      set(stem core)
    endif()
    set(count 0)
    set(unit 0)
    set(content "")
    list(LENGTH files_${key} total)
    foreach(path ${files_${key}})
      file(RELATIVE_PATH include ${unity_dir} ${path})
      string(APPEND content "#include \"${include}\"\n")
      math(EXPR count "${count} + 1")
      math(EXPR total "${total} - 1")
      if(count EQUAL CAFFE_UNITY_BATCH OR total EQUAL 0)
        set(unit_file ${unity_dir}/${target}_${stem}_${unit}.cpp)
        # Written only when it changes, so a reconfigure recompiles nothing.
        file(CONFIGURE OUTPUT ${unit_file} CONTENT "${content}" @ONLY)
        target_sources(${target} PRIVATE ${unit_file})
        # GCC warns when an entity of a header uses a type of an anonymous namespace (a lambda
        # capturing one): a unit's files are headers to it, but each is still one file's code.
        set_source_files_properties(${unit_file} PROPERTIES
          COMPILE_OPTIONS $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
        set(content "")
        set(count 0)
        math(EXPR unit "${unit} + 1")
      endif()
    endforeach()
    set_source_files_properties(${files_${key}} PROPERTIES HEADER_FILE_ONLY ON)
  endforeach()
endfunction()
