# TensorPlayPillar.cmake — what every pillar's native module (tensorplay_<pillar>._C) builds the same way.
#
# Included by packages/<pillar>/CMakeLists.txt, from the monorepo's native/ or from the copy of native/ that
# each sdist carries (pyproject: sdist.force-include). It sets the language level, finds Python and nanobind,
# locates the C ABI header next to this file, and defines tensorplay_pillar_module().
include_guard(GLOBAL)

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()

find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module)
find_package(nanobind CONFIG REQUIRED)

set(TP_NATIVE_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/../include")
if(NOT EXISTS "${TP_NATIVE_INCLUDE}/tensorplay/tp_abi.h")
  message(FATAL_ERROR "tensorplay/tp_abi.h not found next to ${CMAKE_CURRENT_LIST_FILE}")
endif()

# tensorplay_pillar_module(<python package> SOURCES <files...> [OPTIONS <compile flags...>])
#
# Builds _C with its own NB_DOMAIN (no C++ type is shared with another pillar: everything crosses through the
# C table) and NB_STATIC. libnanobind gets the same flags in every pillar, so ccache reuses its objects.
function(tensorplay_pillar_module package)
  cmake_parse_arguments(ARG "" "" "SOURCES;OPTIONS" ${ARGN})
  nanobind_add_module(_C NB_DOMAIN ${package} NB_STATIC ${ARG_SOURCES})
  target_include_directories(_C PRIVATE "${TP_NATIVE_INCLUDE}" "${CMAKE_CURRENT_SOURCE_DIR}/csrc")
  target_compile_options(_C PRIVATE -Wall -Wno-unused-function ${ARG_OPTIONS})
  # A function that can only call itself compiles to an endless loop (`jmp .`): an overload that forwarded to
  # itself once hung every CUDA indexing op. -Wall warns (GCC 12+, Clang); make it fail the build.
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-Werror=infinite-recursion TP_HAS_WERROR_INFINITE_RECURSION)
  if(TP_HAS_WERROR_INFINITE_RECURSION)
    target_compile_options(_C PRIVATE -Werror=infinite-recursion)
  endif()
  install(TARGETS _C LIBRARY DESTINATION ${package})
endfunction()
