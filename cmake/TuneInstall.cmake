# `cmake --install`: the `tuner` tool, the libraries (tune_core, tune_cuda, tune_runner,
# tune_runtime, tune_runtime_records), the public headers under include/tuner/ and the CMake
# functions as the config package `Tune`, so that a consumer's `find_package(Tune CONFIG)` gives
# tune_add_kernel, tune_generate_header and tune_embed_winners, running the installed tuner (no
# build of the tool in the consumer). Targets are exported in the namespace tune:: (tune::core,
# tune::cuda, tune::runner, tune::runtime, tune::runtime_records, tune::tuner); tune::runtime,
# what a product that embeds winners links, also alone (`find_package(Tune COMPONENTS
# runtime)`).
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TUNE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Tune" CACHE STRING
  "Where the Tune config package is installed, relative to the prefix")

set(_tune_install_targets tuner tune_core tune_tomlplusplus tune_eigen tune_warnings)
foreach(t tune_cuda tune_runner tune_runtime_records)
  if(TARGET ${t})
    list(APPEND _tune_install_targets ${t})
  endif()
endforeach()
set_target_properties(tune_core PROPERTIES EXPORT_NAME core)
if(TARGET tune_cuda)
  set_target_properties(tune_cuda PROPERTIES EXPORT_NAME cuda)
endif()
if(TARGET tune_runner)
  set_target_properties(tune_runner PROPERTIES EXPORT_NAME runner)
endif()
if(TARGET tune_runtime)
  set_target_properties(tune_runtime PROPERTIES EXPORT_NAME runtime)
endif()
if(TARGET tune_runtime_records)
  set_target_properties(tune_runtime_records PROPERTIES EXPORT_NAME runtime_records)
endif()

install(TARGETS ${_tune_install_targets} EXPORT TuneTargets
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
# The runtime a product links has an export set of its own: `find_package(Tune COMPONENTS
# runtime)` loads it without looking for any of tune_core's dependencies.
if(TARGET tune_runtime)
  install(TARGETS tune_runtime EXPORT TuneRuntimeTargets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT TuneRuntimeTargets NAMESPACE tune:: DESTINATION "${TUNE_INSTALL_CMAKEDIR}")
endif()

# The public headers, listed (never globbed): what a consumer of tune::core includes, and what a
# harness of tune::cuda / tune::runner needs (harness.hpp and what it and bench.hpp include).
# The CLI's headers (tuner/cli/), the CUDA backend's internals (nvml.hpp) and core's internal
# headers (those whose first line says "Internal to tune_core (not installed)": the space reader,
# the expression tree) stay private. A new public header goes into its list, one per line;
# tests/cmake/install_test.py checks that every other core header is here and that every
# installed header includes only installed ones.
set(_tune_public_core_headers
  base/atomic_file.hpp
  base/bucket_name.hpp
  base/config.hpp
  base/env_number.hpp
  base/exit_codes.hpp
  base/fault_inject.hpp
  base/hash.hpp
  base/identity.hpp
  base/input_limits.hpp
  base/json_position.hpp
  base/cxx_names.hpp
  base/json_text.hpp
  base/json_whole.hpp
  base/log_lines.hpp
  base/result.hpp
  base/safe_file.hpp
  base/text.hpp
  build/cache_key.hpp
  build/compiler_launcher.hpp
  build/elf_symbols.hpp
  build/identical_binaries.hpp
  build/kernel_build.hpp
  build/kernel_entry.hpp
  build/kernel_cache.hpp
  build/manifest.hpp
  build/toolchain.hpp
  process/stop_signals.hpp
  process/subprocess.hpp
  record/bucket_result.hpp
  record/html_plot.hpp
  record/names_header.hpp
  record/record.hpp
  record/verify.hpp
  record/winners.hpp
  record/winners_header.hpp
  scale/shard.hpp
  scale/shard_merge.hpp
  search/autotuner.hpp
  search/early_reject.hpp
  search/compile_ahead.hpp
  search/file_lock.hpp
  search/overhead.hpp
  search/prior.hpp
  search/runoff.hpp
  search/strategy.hpp
  search/supervisor.hpp
  search/trial.hpp
  search/trial_lines.hpp
  search/trial_log.hpp
  search/worker_protocol.hpp
  space/entry_template.hpp
  space/expr.hpp
  space/expr_cxx.hpp
  space/search_settings.hpp
  space/space.hpp
  space/space_checks.hpp
  store/candidate_store.hpp
  store/remote_store.hpp
  store/shared_trials.hpp
  store/trust.hpp
  record/t4_export.hpp
  store/store.hpp
  tune/kernel_tune.hpp
  tune/total_budget.hpp)
set(_tune_public_cuda_headers
  bench.hpp
  driver.hpp
  harness.hpp
  module.hpp
  worker.hpp)
list(TRANSFORM _tune_public_cuda_headers PREPEND "${PROJECT_SOURCE_DIR}/tuner/cuda/")
# Installed in the folders of the source tree (include/tuner/core/<area>/), so that a consumer
# includes them as tune's own sources do: <tuner/core/search/autotuner.hpp>.
foreach(header IN LISTS _tune_public_core_headers)
  get_filename_component(area "${header}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/tuner/core/${header}"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tuner/core/${area}")
endforeach()
install(FILES "${PROJECT_BINARY_DIR}/include/tuner/core/base/version.hpp"  # from project(VERSION)
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tuner/core/base")
if(TARGET tune_cuda)
  install(FILES ${_tune_public_cuda_headers} DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tuner/cuda")
endif()
if(TARGET tune_runtime)  # what tune_embed_winners' generated code includes (docs/embed.md)
  install(FILES "${PROJECT_SOURCE_DIR}/tuner/runtime/embedded.hpp"
    "${PROJECT_SOURCE_DIR}/tuner/runtime/record_check.hpp"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tuner/runtime")
endif()
install(EXPORT TuneTargets NAMESPACE tune:: DESTINATION "${TUNE_INSTALL_CMAKEDIR}")

if(TUNE_TOMLPP_INCLUDE_DIR)
  set(TUNE_CONFIG_FIND_TOMLPP "")
else()
  set(TUNE_CONFIG_FIND_TOMLPP "find_dependency(tomlplusplus 3)")
endif()
# tune_core links libcurl privately when it was found; a static library passes that on.
if(CURL_FOUND)
  set(TUNE_CONFIG_FIND_CURL "find_dependency(CURL)")
else()
  set(TUNE_CONFIG_FIND_CURL "")
endif()
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/TuneConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/TuneConfig.cmake"
  INSTALL_DESTINATION "${TUNE_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/TuneConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/TuneConfig.cmake"
  "${PROJECT_BINARY_DIR}/TuneConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/Tune.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TuneHeader.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TuneEmbed.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TuneKernel.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TuneRunner.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TuneTool.cmake"
  DESTINATION "${TUNE_INSTALL_CMAKEDIR}")
unset(_tune_install_targets)
unset(_tune_public_core_headers)
unset(_tune_public_cuda_headers)
