# The tools tune's CMake functions run: the `tuner` at configure time (only it reads TOML, and
# the candidate list is needed to write Ninja's graph), the `tuner` at build time, and nvcc.
# Internal to Tune.cmake: every function here is `_tune_` prefixed.
include_guard(GLOBAL)
# Everything below runs under tune's policy settings, not the calling project's: CMake records
# the policies in effect where a function is defined and applies them whenever it is called.
block(SCOPE_FOR POLICIES)
cmake_policy(VERSION 3.25...4.4)

# _tune_host_build_type(<out-var>)
#
# The build type of the host tool's tree: TUNE_HOST_TOOL_BUILD_TYPE, but for tune's own
# top-level build with a single-config generator, whose libraries and tool the host tree builds
# for it (_tune_import_host_tree): there the build's own CMAKE_BUILD_TYPE, when it has one.
function(_tune_host_build_type out)
  get_property(top GLOBAL PROPERTY _TUNE_HOST_TREE_IS_THE_BUILD)
  get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(top AND CMAKE_BUILD_TYPE AND NOT multi)
    set(${out} "${CMAKE_BUILD_TYPE}" PARENT_SCOPE)
  else()
    set(${out} "${TUNE_HOST_TOOL_BUILD_TYPE}" PARENT_SCOPE)
  endif()
endfunction()

# _tune_configure_tuner(<fn> <out-var>)
#
# The tuner executable to run now, during the configure. TUNE_TUNER_EXECUTABLE when set;
# otherwise the host tool built from this repository in <build>/_tune_host_tool (build type
# _tune_host_build_type): configured when its settings change (the first time, and after a
# change of the compiler, its launcher, the prefix path or, for tune's own build, the build type
# and flags), then brought up to date by one `cmake --build` per configure (a no-op when nothing
# changed), so a fresh configure of a consumer does not always rebuild it. <fn> names the calling
# function in messages.
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

  _tune_host_build_type(type)
  get_property(top GLOBAL PROPERTY _TUNE_HOST_TREE_IS_THE_BUILD)
  set(args
    -S "${root}" -B "${dir}" -G "${CMAKE_GENERATOR}" "-DCMAKE_BUILD_TYPE=${type}"
    -DTUNE_ENABLE_TESTS=OFF -DTUNE_ENABLE_KERNELS=OFF -D_TUNE_HOST_TOOL_BUILD=ON)
  get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(multi)
    list(APPEND args "-DCMAKE_CONFIGURATION_TYPES=${type}")  # the one configuration built
  endif()
  if(CMAKE_GENERATOR_PLATFORM)
    list(APPEND args -A "${CMAKE_GENERATOR_PLATFORM}")
  endif()
  if(CMAKE_GENERATOR_TOOLSET)
    list(APPEND args -T "${CMAKE_GENERATOR_TOOLSET}")
  endif()
  # Same compiler (and compiler launcher, such as ccache), make program and package search
  # paths as the consumer, so the tool is built the way the consumer's own targets are. For
  # tune's own build, whose tests link these libraries, its flags and warnings too.
  set(vars CMAKE_CXX_COMPILER CMAKE_CXX_COMPILER_LAUNCHER CMAKE_MAKE_PROGRAM CMAKE_PREFIX_PATH
           TUNE_TOMLPP_INCLUDE_DIR TUNE_EIGEN_INCLUDE_DIR)
  if(top)
    list(APPEND vars CMAKE_CXX_FLAGS CMAKE_EXE_LINKER_FLAGS TUNE_GATE_PTX_ARCH)
    if(TUNE_ENABLE_WERROR)
      list(APPEND args -DTUNE_ENABLE_WERROR=ON)
    else()
      list(APPEND args -DTUNE_ENABLE_WERROR=OFF)
    endif()
  else()
    list(APPEND args -DTUNE_ENABLE_WERROR=OFF)
  endif()
  foreach(var IN LISTS vars)
    if(${var})
      string(REPLACE ";" "\\;" value "${${var}}")
      list(APPEND args "-D${var}=${value}")
    endif()
  endforeach()
  # Configured again when what it is configured with changes (kept beside the tree).
  set(settings "${dir}.settings")
  set(old "")
  if(EXISTS "${settings}")
    file(READ "${settings}" old)
  endif()
  string(JOIN "\n" new ${args})
  if(NOT EXISTS "${dir}/CMakeCache.txt" OR NOT old STREQUAL new)
    if(EXISTS "${dir}/CMakeCache.txt")
      message(STATUS "tune: configuring the host tuner in ${dir} again (its settings changed); "
        "its configure and build output follow")
    else()
      message(STATUS "tune: building the host tuner once, in ${dir} (log: ${log}); its "
        "configure and build output follow")
    endif()
    set(announced ON)
    # Echoed as it comes (and kept for the log): the first build takes minutes.
    execute_process(COMMAND "${CMAKE_COMMAND}" ${args}
      RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output
      ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
    file(WRITE "${log}" "${output}")
    if(NOT rc EQUAL 0)
      file(REMOVE "${dir}/CMakeCache.txt" "${settings}")
      message(FATAL_ERROR
        "${fn}: configuring the host tuner in '${dir}' failed (log: ${log}):\n${output}\n"
        "Fix the error above, or pass -DTUNE_TUNER_EXECUTABLE=<path to a built tuner>")
    endif()
    file(WRITE "${settings}" "${new}")
  endif()

  # Up to date check on every configure: Ninja's no-op build costs a fraction of a second.
  # A build with work to do (the first, or after an edit of tune's sources) streams its
  # progress into the configure's output; a no-op one stays quiet.
  set(where "${dir}/tuner-location-${type}.txt")
  set(echo ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
  if(EXISTS "${where}" AND CMAKE_GENERATOR MATCHES "Ninja")
    execute_process(
      COMMAND "${CMAKE_COMMAND}" --build "${dir}" --target tuner --config "${type}" -- -n
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
    COMMAND "${CMAKE_COMMAND}" --build "${dir}" --target tuner --config "${type}"
            --parallel ${cores}
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
  _tune_host_tool_target("${tool}")
  set(${out_command} "${tool}" PARENT_SCOPE)
  set(${out_depends} "${tool};tune_host_tool" PARENT_SCOPE)
endfunction()

# _tune_host_tool_target(<tool>): the target `tune_host_tool`, which brings the host tool <tool>
# up to date (made once).
function(_tune_host_tool_target tool)
  if(TARGET tune_host_tool)
    return()
  endif()
  get_property(dir GLOBAL PROPERTY _TUNE_HOST_TOOL_DIR)
  _tune_host_build_type(type)
  add_custom_target(tune_host_tool
    COMMAND "${CMAKE_COMMAND}" --build "${dir}" --target tuner --config "${type}"
    BYPRODUCTS "${tool}"
    COMMENT "Bringing the host tuner up to date"
    VERBATIM)
endfunction()

# _tune_import_host_tree()
#
# Called by tune's top-level CMakeLists.txt in place of add_subdirectory(tuner) when this build
# builds the host tool anyway (no TUNE_TUNER_EXECUTABLE; tune added with add_subdirectory, or
# tune's own build with its kernels): the libraries and the `tuner` are compiled once, in the
# host tool's tree, and this build imports them. The tree's build-tree export
# (TuneHostTargets.cmake, TuneHostRuntimeTargets.cmake, names `_tune_host::<export name>`) is
# read here; tune_core, tune_cuda, tune_runner, tune_runtime and tune_runtime_records (and their
# tune:: aliases) are interface targets over the imports that depend on `tune_host_libs`, a
# nested `cmake --build` of the libraries after `tune_host_tool`'s of the tool (one at a time:
# two Ninja runs must not share a tree); `tuner` is an alias of the imported tool. For tune's own
# build `tune_host_libs` builds the whole tree and is part of `all`; for a consumer it builds
# the libraries only when a target that links one is built.
function(_tune_import_host_tree)
  _tune_configure_tuner("tune" tool)
  _tune_host_tool_target("${tool}")
  get_property(dir GLOBAL PROPERTY _TUNE_HOST_TOOL_DIR)
  _tune_host_build_type(type)
  string(TOUPPER "${type}" upper)
  foreach(file TuneHostTargets.cmake TuneHostRuntimeTargets.cmake)
    if(NOT EXISTS "${dir}/${file}")
      message(FATAL_ERROR "tune: the host tuner's tree '${dir}' has no ${file}: remove '${dir}' "
        "and configure again")
    endif()
    include("${dir}/${file}")
  endforeach()
  set(libs core cuda runner runtime runtime_records)
  set(byproducts)
  foreach(name IN LISTS libs ITEMS tuner tune_tomlplusplus tune_eigen tune_warnings)
    if(NOT TARGET _tune_host::${name})
      continue()
    endif()
    set_target_properties(_tune_host::${name} PROPERTIES IMPORTED_GLOBAL TRUE)
    # Every configuration of this build takes the one the host tree built.
    foreach(config IN LISTS CMAKE_CONFIGURATION_TYPES CMAKE_BUILD_TYPE)
      string(TOUPPER "${config}" c)
      set_target_properties(_tune_host::${name} PROPERTIES MAP_IMPORTED_CONFIG_${c} "${type}")
    endforeach()
    if(name IN_LIST libs)
      get_target_property(location _tune_host::${name} IMPORTED_LOCATION_${upper})
      if(location)
        list(APPEND byproducts "${location}")
      endif()
    endif()
  endforeach()
  get_property(top GLOBAL PROPERTY _TUNE_HOST_TREE_IS_THE_BUILD)
  if(top)
    # Where tune's own scripts and docs find the tool: <build>/tuner/tuner, a link to it.
    set(link "${CMAKE_BINARY_DIR}/tuner/tuner${CMAKE_EXECUTABLE_SUFFIX}")
    set(linked "")
    if(IS_SYMLINK "${link}")
      file(READ_SYMLINK "${link}" linked)
    endif()
    if(NOT linked STREQUAL tool)
      file(REMOVE "${link}")
      file(MAKE_DIRECTORY "${CMAKE_BINARY_DIR}/tuner")
      file(CREATE_LINK "${tool}" "${link}" SYMBOLIC COPY_ON_ERROR)
    endif()
    set(what ALL COMMAND "${CMAKE_COMMAND}" --build "${dir}" --config "${type}")
  else()
    set(what COMMAND "${CMAKE_COMMAND}" --build "${dir}" --config "${type}" --target tune_runner
                     tune_runtime tune_runtime_records)
  endif()
  add_custom_target(tune_host_libs ${what}
    BYPRODUCTS ${byproducts}
    COMMENT "Bringing tune's libraries up to date (in the host tuner's tree)"
    VERBATIM)
  add_dependencies(tune_host_libs tune_host_tool)
  foreach(lib IN LISTS libs)
    if(TARGET _tune_host::${lib})
      add_library(tune_${lib} INTERFACE)
      target_link_libraries(tune_${lib} INTERFACE _tune_host::${lib})
      add_dependencies(tune_${lib} tune_host_libs)
      add_library(tune::${lib} ALIAS tune_${lib})
    endif()
  endforeach()
  add_executable(tuner ALIAS _tune_host::tuner)
endfunction()

# _tune_install_host_tree()
#
# `cmake --install` of a build that imports the host tree (_tune_import_host_tree): that tree
# has the targets and their install rules, so it installs itself into this install's prefix (and
# DESTDIR), after a build of everything it holds.
function(_tune_install_host_tree)
  get_property(dir GLOBAL PROPERTY _TUNE_HOST_TOOL_DIR)
  _tune_host_build_type(type)
  install(CODE "
    execute_process(COMMAND \"${CMAKE_COMMAND}\" --build \"${dir}\" --config \"${type}\"
      RESULT_VARIABLE rc)
    if(rc EQUAL 0)
      execute_process(COMMAND \"${CMAKE_COMMAND}\" --install \"${dir}\" --config \"${type}\"
        --prefix \"\${CMAKE_INSTALL_PREFIX}\" RESULT_VARIABLE rc)
    endif()
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR \"tune: installing the host tuner's tree '${dir}' failed\")
    endif()")
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
