# pycaffe's dependencies (CAFFE_PYTHON: AUTO, ON or OFF). AUTO builds the `caffe` Python package
# (python/) and the "Python" layer type when all of these are found; otherwise the configure
# output says which one is missing and the build goes on without them:
#   python3-dev (headers, libpython for the Python layer), python3-numpy, pybind11-dev, and
#   python3-protobuf (the package's caffe_pb2, generated from caffe.proto, needs it at run time).
# Sets CAFFE_HAVE_PYTHON, CAFFE_PYTHON_SKIP_REASON (empty when built) and CAFFE_HAVE_PYTEST.
set(CAFFE_HAVE_PYTHON OFF)
set(CAFFE_HAVE_PYTEST OFF)
set(CAFFE_PYTHON_SKIP_REASON "")

if(CAFFE_PYTHON STREQUAL "OFF")
  set(CAFFE_PYTHON_SKIP_REASON "CAFFE_PYTHON=OFF")
else()
  # Debian's interpreter first: python3-numpy and pybind11-dev are installed for it, and an
  # interpreter earlier in PATH (pyenv, conda) would lack them. -DPython3_EXECUTABLE=... overrides.
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 3.7 QUIET COMPONENTS Interpreter Development NumPy)
  if(NOT Python3_Interpreter_FOUND)
    set(CAFFE_PYTHON_SKIP_REASON "no python3 interpreter found")
  elseif(NOT Python3_Development_FOUND)
    set(CAFFE_PYTHON_SKIP_REASON
        "Python ${Python3_VERSION} headers/libpython not found (python3-dev)")
  elseif(NOT Python3_NumPy_FOUND)
    set(CAFFE_PYTHON_SKIP_REASON "numpy not found for ${Python3_EXECUTABLE} (python3-numpy)")
  else()
    find_package(pybind11 2.6 CONFIG QUIET)
    if(NOT pybind11_FOUND)
      set(CAFFE_PYTHON_SKIP_REASON "pybind11 not found (pybind11-dev)")
    else()
      execute_process(COMMAND ${Python3_EXECUTABLE} -c "import google.protobuf"
                      RESULT_VARIABLE caffe_protobuf_missing OUTPUT_QUIET ERROR_QUIET)
      if(caffe_protobuf_missing)
        set(CAFFE_PYTHON_SKIP_REASON
            "the protobuf module is missing for ${Python3_EXECUTABLE} (python3-protobuf)")
      else()
        set(CAFFE_HAVE_PYTHON ON)
      endif()
    endif()
  endif()
  if(NOT CAFFE_HAVE_PYTHON)
    if(CAFFE_PYTHON STREQUAL "ON")
      message(FATAL_ERROR "CAFFE_PYTHON=ON but pycaffe cannot be built: "
                          "${CAFFE_PYTHON_SKIP_REASON}; run scripts/install_deps.sh")
    endif()
    message(STATUS "pycaffe skipped: ${CAFFE_PYTHON_SKIP_REASON}; run scripts/install_deps.sh")
  else()
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pytest"
                    RESULT_VARIABLE caffe_pytest_missing OUTPUT_QUIET ERROR_QUIET)
    if(NOT caffe_pytest_missing)
      set(CAFFE_HAVE_PYTEST ON)
    endif()
  endif()
endif()
