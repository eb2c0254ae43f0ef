# ONNX Runtime for the cpu-ort backend. VIGIL_WITH_ORT: AUTO (use it when found), ON (required)
# or OFF. Found in VIGIL_ORT_ROOT (scripts/fetch-onnxruntime.sh puts Debian's headers and the
# npm runtime there on Debian 12), else in the system (Debian 13+: libonnxruntime-dev).
# Defines the imported target onnxruntime::onnxruntime and VIGIL_ORT_FOUND, VIGIL_ORT_LIBRARY,
# VIGIL_ORT_API_VERSION, VIGIL_ORT_BUNDLED (the library is not a system one: the package ships it).
set(VIGIL_WITH_ORT AUTO CACHE STRING "Build the ONNX Runtime backend cpu-ort: AUTO, ON or OFF")
set_property(CACHE VIGIL_WITH_ORT PROPERTY STRINGS AUTO ON OFF)
set(VIGIL_ORT_ROOT "${PROJECT_SOURCE_DIR}/.cache/onnxruntime" CACHE PATH
    "ONNX Runtime prefix (include/onnxruntime, lib) from scripts/fetch-onnxruntime.sh")

set(VIGIL_ORT_FOUND OFF)
set(VIGIL_ORT_BUNDLED OFF)
if(NOT VIGIL_WITH_ORT STREQUAL "OFF")
  find_path(VIGIL_ORT_INCLUDE_DIR onnxruntime_cxx_api.h
            HINTS ${VIGIL_ORT_ROOT}/include/onnxruntime PATH_SUFFIXES onnxruntime)
  find_library(VIGIL_ORT_LIBRARY NAMES onnxruntime HINTS ${VIGIL_ORT_ROOT}/lib)
  if(VIGIL_ORT_INCLUDE_DIR AND VIGIL_ORT_LIBRARY)
    file(STRINGS ${VIGIL_ORT_INCLUDE_DIR}/onnxruntime_c_api.h _ort_api REGEX "^#define ORT_API_VERSION")
    string(REGEX REPLACE ".*ORT_API_VERSION ([0-9]+).*" "\\1" VIGIL_ORT_API_VERSION "${_ort_api}")
    add_library(onnxruntime::onnxruntime SHARED IMPORTED)
    set_target_properties(onnxruntime::onnxruntime PROPERTIES
      IMPORTED_LOCATION ${VIGIL_ORT_LIBRARY}
      IMPORTED_SONAME libonnxruntime.so.1
      INTERFACE_INCLUDE_DIRECTORIES ${VIGIL_ORT_INCLUDE_DIR}
      # Every user initialises the C++ API itself, after checking the runtime supports the
      # headers' API version (detector/backends/ort_backend.cpp), instead of at static init.
      INTERFACE_COMPILE_DEFINITIONS ORT_API_MANUAL_INIT)
    set(VIGIL_ORT_FOUND ON)
    get_filename_component(_ort_real ${VIGIL_ORT_LIBRARY} REALPATH)
    cmake_path(IS_PREFIX VIGIL_ORT_ROOT "${_ort_real}" NORMALIZE VIGIL_ORT_BUNDLED)
    if(VIGIL_ORT_BUNDLED)
      set(VIGIL_ORT_LIBRARY_FILE ${VIGIL_ORT_ROOT}/lib/libonnxruntime.so.1)
    endif()
  elseif(VIGIL_WITH_ORT STREQUAL "ON")
    message(FATAL_ERROR "VIGIL_WITH_ORT=ON but ONNX Runtime was not found in ${VIGIL_ORT_ROOT} "
                        "or the system: run scripts/fetch-onnxruntime.sh (Debian 12) or install "
                        "libonnxruntime-dev")
  endif()
endif()
if(VIGIL_ORT_FOUND)
  set(VIGIL_ORT_SUMMARY "cpu-ort (ONNX Runtime API ${VIGIL_ORT_API_VERSION}, ${VIGIL_ORT_LIBRARY})")
elseif(VIGIL_WITH_ORT STREQUAL "OFF")
  set(VIGIL_ORT_SUMMARY "no cpu-ort (VIGIL_WITH_ORT=OFF)")
else()
  set(VIGIL_ORT_SUMMARY "no cpu-ort (ONNX Runtime not found; scripts/fetch-onnxruntime.sh)")
endif()
