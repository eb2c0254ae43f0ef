# XRT (the AMD NPU runtime): found in /opt/xilinx/xrt (AMD's packages) or /usr/include/xrt
# (Debian's libxrt-dev). Link xrt_coreutil only: linking xrt_core would pull in the PCIe shim and
# stop XRT from loading the noop (tests) or xdna (NPU) shim it selects at run time. Debian's
# xrt.pc is broken (prefix /usr//usr), so it is not used.
set(VIGIL_WITH_XRT "AUTO" CACHE STRING "Build the XRT NPU backend: AUTO, ON or OFF")
set_property(CACHE VIGIL_WITH_XRT PROPERTY STRINGS AUTO ON OFF)

set(VIGIL_XRT_FOUND OFF)
set(VIGIL_XRT_SUMMARY "off")
if(NOT VIGIL_WITH_XRT STREQUAL "OFF")
  find_path(XRT_INCLUDE_DIR xrt/xrt_device.h PATHS /opt/xilinx/xrt/include /usr/include/xrt
            NO_DEFAULT_PATH)
  find_library(XRT_COREUTIL_LIBRARY xrt_coreutil PATHS /opt/xilinx/xrt/lib)
  find_library(UUID_LIBRARY uuid)
  if(XRT_INCLUDE_DIR AND XRT_COREUTIL_LIBRARY AND UUID_LIBRARY)
    set(VIGIL_XRT_FOUND ON)
    if(EXISTS "${XRT_INCLUDE_DIR}/xrt/xrt_hw_context.h")
      set(VIGIL_XRT_API "modern (register_xclbin + hw_context)")
    else()
      set(VIGIL_XRT_API "legacy 2.13 (load_xclbin; noop shim only, no NPU)")
    endif()
    # The version string, e.g. 2.13.0 (version.h in 2.13, xrt/detail/version-slim.h later),
    # whose line reads `#define XRT_DRIVER_VERSION "2.13.0,<hash>"`.
    set(_xrt_version "version unknown")
    foreach(_header version.h xrt/detail/version-slim.h)
      if(EXISTS "${XRT_INCLUDE_DIR}/${_header}")
        file(STRINGS "${XRT_INCLUDE_DIR}/${_header}" _line REGEX "XRT_DRIVER_VERSION")
        if(_line MATCHES "\"([0-9]+\\.[0-9]+\\.[0-9]+)")
          set(_xrt_version "${CMAKE_MATCH_1}")
          break()
        endif()
      endif()
    endforeach()
    set(VIGIL_XRT_SUMMARY "on: XRT ${_xrt_version} in ${XRT_INCLUDE_DIR}, API ${VIGIL_XRT_API}")
  elseif(VIGIL_WITH_XRT STREQUAL "ON")
    message(FATAL_ERROR "VIGIL_WITH_XRT=ON but XRT was not found (apt-get install libxrt-dev "
                        "uuid-dev): include ${XRT_INCLUDE_DIR}, library ${XRT_COREUTIL_LIBRARY}, "
                        "uuid ${UUID_LIBRARY}")
  else()
    set(VIGIL_XRT_SUMMARY "off (XRT not found; apt-get install libxrt-dev uuid-dev)")
  endif()
endif()
