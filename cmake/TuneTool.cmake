# The tools tune's CMake functions run: the `tuner` at configure time (only it reads TOML, and
# the candidate list is needed to write Ninja's graph), the `tuner` at build time, and nvcc.
# Internal to Tune.cmake: every function here is `_tune_` prefixed.
include_guard(GLOBAL)
# Everything below runs under tune's policy settings, not the calling project's: CMake records
# the policies in effect where a function is defined and applies them whenever it is called.
block(SCOPE_FOR POLICIES)
cmake_policy(VERSION 3.25...4.4)

# _tune_configure_tuner(<fn> <out-var>)
#
# The tuner executable to run now, during the configure. TUNE_TUNER_EXECUTABLE when set;
# otherwise the host tool built from this repository in <build>/_tune_host_tool (build type
# TUNE_HOST_TOOL_BUILD_TYPE): configured once, then brought up to date by one `cmake --build`
# per configure (a no-op when nothing changed), so a fresh configure of a consumer does not
# always rebuild it. <fn> names the calling function in messages.
function(_tune_configure_tuner fn out)
  get_property(known GLOBAL PROPERTY _TUNE_CONFIGURE_TUNER)
  if(known)
    set(${out} "${known}" PARENT_SCOPE)
    return()
  endif()

  if(TUNE_TUNER_EXECUTABLE)
    if(NOT EXISTS "${TUNE_TUNER_EXECUTABLE}" OR IS_DIRECTORY "${TUNE_TUNER_EXECUTABLE}")
      message(FATAL_ERROR
        "${fn}: TUNE_TUNER_EXECUTABLE '${TUNE_TUNER_EXECUTABLE}' is not a file: point it at a "
        "built or installed tuner, or set it empty to build the host tool during the configure")
    endif()
    set_property(GLOBAL PROPERTY _TUNE_CONFIGURE_TUNER "${TUNE_TUNER_EXECUTABLE}")
    set(${out} "${TUNE_TUNER_EXECUTABLE}" PARENT_SCOPE)
    return()
  endif()

  get_property(root GLOBAL PROPERTY _TUNE_ROOT_DIR)
  if(NOT EXISTS "${root}/tuner/CMakeLists.txt")
    message(FATAL_ERROR
      "${fn}: no tuner to read the space with: this tune installation has no sources to build "
      "the host tool from; pass -DTUNE_TUNER_EXECUTABLE=<path to tuner>")
  endif()

  set(dir "${CMAKE_BINARY_DIR}/_tune_host_tool")
  set(log "${dir}.log")
  set_property(GLOBAL PROPERTY _TUNE_HOST_TOOL_DIR "${dir}")
  # Two configures sharing a build tree must not build the tool at the same time.
  file(MAKE_DIRECTORY "${dir}")
  file(LOCK "${dir}" DIRECTORY GUARD FUNCTION TIMEOUT 1800 RESULT_VARIABLE lock_rc)
  if(NOT lock_rc EQUAL 0)
    message(FATAL_ERROR "${fn}: cannot lock '${dir}' to build the host tuner: ${lock_rc}")
  endif()

  if(NOT EXISTS "${dir}/CMakeCache.txt")
    message(STATUS "tune: building the host tuner once, in ${dir} (log: ${log}); its "
      "configure and build output follow")
    set(announced ON)
    set(args
      -S "${root}" -B "${dir}" -G "${CMAKE_GENERATOR}"
      "-DCMAKE_BUILD_TYPE=${TUNE_HOST_TOOL_BUILD_TYPE}"
      -DTUNE_ENABLE_TESTS=OFF -DTUNE_ENABLE_KERNELS=OFF -DTUNE_ENABLE_WERROR=OFF
      -D_TUNE_HOST_TOOL_BUILD=ON)
    if(CMAKE_GENERATOR_PLATFORM)
      list(APPEND args -A "${CMAKE_GENERATOR_PLATFORM}")
    endif()
    if(CMAKE_GENERATOR_TOOLSET)
      list(APPEND args -T "${CMAKE_GENERATOR_TOOLSET}")
    endif()
    # Same compiler (and compiler launcher, such as ccache), make program and package search
    # paths as the consumer, so the tool is built the way the consumer's own targets are.
    foreach(var CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER_LAUNCHER CMAKE_MAKE_PROGRAM
                CMAKE_PREFIX_PATH TUNE_TOMLPP_INCLUDE_DIR TUNE_EIGEN_INCLUDE_DIR)
      if(${var})
        string(REPLACE ";" "\\;" value "${${var}}")
        list(APPEND args "-D${var}=${value}")
      endif()
    endforeach()
    # Echoed as it comes (and kept for the log): the first build takes minutes.
    execute_process(COMMAND "${CMAKE_COMMAND}" ${args}
      RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output
      ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
    file(WRITE "${log}" "${output}")
    if(NOT rc EQUAL 0)
      file(REMOVE "${dir}/CMakeCache.txt")
      message(FATAL_ERROR
        "${fn}: configuring the host tuner in '${dir}' failed (log: ${log}):\n${output}\n"
        "Fix the error above, or pass -DTUNE_TUNER_EXECUTABLE=<path to a built tuner>")
    endif()
  endif()

  # Up to date check on every configure: Ninja's no-op build costs a fraction of a second.
  # A build with work to do (the first, or after an edit of tune's sources) streams its
  # progress into the configure's output; a no-op one stays quiet.
  set(where "${dir}/tuner-location-${TUNE_HOST_TOOL_BUILD_TYPE}.txt")
  set(echo ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
  if(EXISTS "${where}" AND CMAKE_GENERATOR MATCHES "Ninja")
    execute_process(
      COMMAND "${CMAKE_COMMAND}" --build "${dir}" --target tuner
              --config "${TUNE_HOST_TOOL_BUILD_TYPE}" -- -n
      RESULT_VARIABLE dry_rc OUTPUT_VARIABLE dry ERROR_VARIABLE dry)
    if(dry_rc EQUAL 0 AND dry MATCHES "ninja: no work to do")
      set(echo)
    endif()
  endif()
  if(echo AND NOT announced)
    message(STATUS "tune: bringing the host tuner in ${dir} up to date (its build's output "
      "follows)")
  endif()
  cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${dir}" --target tuner
            --config "${TUNE_HOST_TOOL_BUILD_TYPE}" --parallel ${cores}
    RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output ${echo})
  file(APPEND "${log}" "${output}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR
      "${fn}: building the host tuner in '${dir}' failed (log: ${log}):\n${output}\n"
      "Fix the error above, or pass -DTUNE_TUNER_EXECUTABLE=<path to a built tuner>")
  endif()
  if(NOT EXISTS "${where}")
    message(FATAL_ERROR "${fn}: the host tuner build in '${dir}' did not say where the tool is "
      "('${where}' is missing): remove '${dir}' and configure again")
  endif()
  file(READ "${where}" tool)
  if(NOT EXISTS "${tool}")
    message(FATAL_ERROR "${fn}: the host tuner '${tool}' was not built: remove '${dir}' and "
      "configure again")
  endif()
  set_property(GLOBAL PROPERTY _TUNE_CONFIGURE_TUNER "${tool}")
  set(${out} "${tool}" PARENT_SCOPE)
endfunction()

# _tune_build_tuner(<fn> <out-command> <out-depends>)
#
# The tuner that build steps and tests run, and what a step must depend on for it to be up to
# date: TUNE_TUNER_EXECUTABLE when set (a file dependency); else the configure-time host tool,
# which the target `tune_host_tool` brings up to date before any step that runs it (a nested
# `cmake --build`, a no-op when nothing changed; the tool is its byproduct, so steps that run
# the tool re-run when it was rebuilt). One build of the tool serves the configure and the
# build, where the in-tree `tuner` target would build it a second time.
function(_tune_build_tuner fn out_command out_depends)
  if(TUNE_TUNER_EXECUTABLE)
    set(${out_command} "${TUNE_TUNER_EXECUTABLE}" PARENT_SCOPE)
    set(${out_depends} "${TUNE_TUNER_EXECUTABLE}" PARENT_SCOPE)
    return()
  endif()
  _tune_configure_tuner("${fn}" tool)
  if(NOT TARGET tune_host_tool)
    get_property(dir GLOBAL PROPERTY _TUNE_HOST_TOOL_DIR)
    add_custom_target(tune_host_tool
      COMMAND "${CMAKE_COMMAND}" --build "${dir}" --target tuner
              --config "${TUNE_HOST_TOOL_BUILD_TYPE}"
      BYPRODUCTS "${tool}"
      COMMENT "Bringing the host tuner up to date"
      VERBATIM)
  endif()
  set(${out_command} "${tool}" PARENT_SCOPE)
  set(${out_depends} "${tool};tune_host_tool" PARENT_SCOPE)
endfunction()

# _tune_find_nvcc(<fn> <out-var>)
#
# The CUDA compiler warm runs: TUNE_NVCC_EXECUTABLE, else the enabled CUDA language's nvcc,
# else nvcc found in the usual places. Stops the configure with the fix when there is none.
function(_tune_find_nvcc fn out)
  if(NOT TUNE_NVCC_EXECUTABLE)
    if(CMAKE_CUDA_COMPILER AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA")
      set(TUNE_NVCC_EXECUTABLE "${CMAKE_CUDA_COMPILER}" CACHE FILEPATH "CUDA compiler warm runs")
    else()
      set(hints)
      foreach(root "${CUDAToolkit_ROOT}" "$ENV{CUDAToolkit_ROOT}" "$ENV{CUDA_PATH}" "$ENV{CUDA_HOME}")
        if(root)
          list(APPEND hints "${root}/bin")
        endif()
      endforeach()
      find_program(TUNE_NVCC_EXECUTABLE NAMES nvcc
        HINTS ${hints} PATHS /usr/local/cuda/bin
        DOC "CUDA compiler warm runs")
    endif()
  endif()
  if(NOT TUNE_NVCC_EXECUTABLE OR NOT EXISTS "${TUNE_NVCC_EXECUTABLE}")
    message(FATAL_ERROR
      "${fn}: cannot find nvcc, which warm runs and cache keys fingerprint: pass "
      "-DTUNE_NVCC_EXECUTABLE=/path/to/nvcc or -DCUDAToolkit_ROOT=<toolkit>, or put nvcc on "
      "the PATH")
  endif()
  set(${out} "${TUNE_NVCC_EXECUTABLE}" PARENT_SCOPE)
endfunction()

endblock()  # SCOPE_FOR POLICIES
