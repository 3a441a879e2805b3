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
# A file with flags of its own (COMPILE_OPTIONS, COMPILE_DEFINITIONS, INCLUDE_DIRECTORIES)
# compiles by itself, as do CUDA files and generated ones (the emulator's rewritten kernels).
function(caffe_unity_build target)
  if(NOT CAFFE_UNITY_BUILD)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(unity_dir ${CMAKE_CURRENT_BINARY_DIR}/unity)
  set(stems "")
  foreach(source ${sources})
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${source_dir})
    set(alone FALSE)
    foreach(property GENERATED COMPILE_OPTIONS COMPILE_DEFINITIONS INCLUDE_DIRECTORIES)
      get_source_file_property(value ${source} ${property})
      if(value)
        set(alone TRUE)
      endif()
    endforeach()
    if(alone OR NOT path MATCHES "\\.cpp$")
      continue()
    endif()
    # The unit's name: the file's folder under the target's (core for the target's own).
    get_filename_component(folder ${path} DIRECTORY)
    file(RELATIVE_PATH folder ${source_dir} ${folder})
    string(MAKE_C_IDENTIFIER "${folder}" stem)
    if(stem STREQUAL "")
      set(stem core)
    endif()
    if(NOT stem IN_LIST stems)
      list(APPEND stems ${stem})
      set(files_${stem} "")
    endif()
    list(APPEND files_${stem} ${path})
  endforeach()
  foreach(stem ${stems})
    list(LENGTH files_${stem} total)
    set(unit 0)
    foreach(first RANGE 0 ${total} ${CAFFE_UNITY_BATCH})
      if(first EQUAL total)
        break()
      endif()
      list(SUBLIST files_${stem} ${first} ${CAFFE_UNITY_BATCH} batch)
      set(content "")
      foreach(path ${batch})
        file(RELATIVE_PATH include ${unity_dir} ${path})
        string(APPEND content "#include \"${include}\"\n")
      endforeach()
      set(unit_file ${unity_dir}/${target}_${stem}_${unit}.cpp)
      # Written only when it changes, so a reconfigure recompiles nothing.
      file(CONFIGURE OUTPUT ${unit_file} CONTENT "${content}" @ONLY)
      target_sources(${target} PRIVATE ${unit_file})
      # GCC warns when an entity of a header uses a type of an anonymous namespace (a lambda
      # capturing one): a unit's files are headers to it, but each is still one file's code.
      set_source_files_properties(${unit_file} PROPERTIES
        COMPILE_OPTIONS $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
      math(EXPR unit "${unit} + 1")
    endforeach()
    set_source_files_properties(${files_${stem}} PROPERTIES HEADER_FILE_ONLY ON)
  endforeach()
endfunction()
