# smx_cuda: libsmx_cuda.a (include/smx/smx_cuda.h, sources in src/cuda/), a static archive over libsmx.a
# and the CUDA runtime, installed as smx::smx_cuda in its own export set (smxConfig.cmake loads it when the
# consumer's CMake finds the CUDA toolkit), as smx_mpi is.
#   -DSMX_CUDA=AUTO (default): built when check_language(CUDA) finds a compiler (nvcc on PATH, or
#                              CMAKE_CUDA_COMPILER / CUDACXX); without one the build is exactly the CPU one
#   -DSMX_CUDA=ON:  required (configuring fails without a CUDA compiler)
#   -DSMX_CUDA=OFF: never
# Targets: sm_90 machine code (Hopper) and compute_75 PTX that the driver compiles for other cards, unless
# CMAKE_CUDA_ARCHITECTURES says otherwise.
set(SMX_CUDA AUTO CACHE STRING "Build libsmx_cuda (NVIDIA GPUs): AUTO (when a CUDA compiler is found), ON or OFF")
set_property(CACHE SMX_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${SMX_CUDA}" smx_cuda_mode)
if(smx_cuda_mode MATCHES "^(ON|TRUE|YES|Y|1)$")
  set(smx_cuda_mode ON)
elseif(smx_cuda_mode MATCHES "^(OFF|FALSE|NO|N|0)$")
  set(smx_cuda_mode OFF)
elseif(NOT smx_cuda_mode STREQUAL "AUTO")
  message(FATAL_ERROR "SMX_CUDA must be AUTO, ON or OFF, not '${SMX_CUDA}'")
endif()

set(SMX_HAVE_CUDA OFF)
# AUTO leaves CUDA out of the sanitizer builds: the CUDA runtime under ASan needs protect_shadow_gap=0, and
# neither sanitizer sees device code (compute-sanitizer does: scripts/check-cuda). ON still builds it.
if(smx_cuda_mode STREQUAL "AUTO" AND (SMX_ENABLE_SANITIZERS OR SMX_ENABLE_TSAN))
  set(smx_cuda_mode OFF)
  message(STATUS "smx_cuda: left out of the sanitizer build (SMX_CUDA=AUTO)")
endif()
# AUTO leaves it out of a cross build too: nvcc on the build machine targets that machine's host, and the
# toolkit's runtime library is the build machine's (the AArch64 build of scripts/check-neon on a host with nvcc).
if(smx_cuda_mode STREQUAL "AUTO" AND CMAKE_CROSSCOMPILING)
  set(smx_cuda_mode OFF)
  message(STATUS "smx_cuda: left out of the cross build (SMX_CUDA=AUTO)")
endif()
if(NOT smx_cuda_mode STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # AUTO wants the whole toolkit (nvcc and the runtime library): a compiler without its runtime leaves CUDA
    # out with a message; ON stops there with CMake's own error naming what is missing.
    if(smx_cuda_mode STREQUAL "AUTO")
      find_package(CUDAToolkit QUIET)
    else()
      find_package(CUDAToolkit REQUIRED)
    endif()
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual")
    endif()
    enable_language(CUDA)
    set(SMX_HAVE_CUDA ON)
  elseif(CMAKE_CUDA_COMPILER)
    message(STATUS "smx_cuda: ${CMAKE_CUDA_COMPILER} found but not the CUDA runtime library (cudart): "
      "libsmx_cuda is left out (SMX_CUDA=AUTO)")
  elseif(smx_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "SMX_CUDA=ON but CMake found no CUDA compiler: put nvcc on PATH or set "
      "CMAKE_CUDA_COMPILER (NVIDIA's CUDA toolkit; Debian: nvidia-cuda-toolkit)")
  else()
    message(STATUS "smx_cuda: no CUDA compiler found: libsmx_cuda is left out (SMX_CUDA=AUTO)")
  endif()
endif()

if(SMX_HAVE_CUDA)
  message(STATUS "smx_cuda: ${CMAKE_CUDA_COMPILER} ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  smx_glob(SMX_CUDA_SOURCES src/cuda/*.c src/cuda/*.cu)
  add_library(smx_cuda STATIC ${SMX_CUDA_SOURCES})
  # Device code: no contraction into FMAs beyond the kernels' own fmaf (the accuracy analysis of
  # src/cuda/rows.cuh counts every rounding); IEEE division and square root; the host compiler's warnings;
  # every nvcc warning an error under SMX_WERROR.
  target_compile_options(smx_cuda PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:--fmad=false;-Xcompiler=-Wall,-Wextra;--Werror=all-warnings>")
  if(SMX_WERROR)
    target_compile_options(smx_cuda PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror>")
  else()
    target_compile_options(smx_cuda PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:--Wno-deprecated-gpu-targets>")
  endif()
  set_target_properties(smx_cuda PROPERTIES CUDA_VISIBILITY_PRESET hidden C_VISIBILITY_PRESET hidden
                                            CUDA_SEPARABLE_COMPILATION OFF)
  target_include_directories(smx_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_include_directories(smx_cuda PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_link_libraries(smx_cuda PUBLIC smx_static CUDA::cudart m)
  add_library(smx::smx_cuda ALIAS smx_cuda)
  install(TARGETS smx_cuda EXPORT smxCudaTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT smxCudaTargets NAMESPACE smx:: DESTINATION ${SMX_CMAKE_DIR})
endif()
