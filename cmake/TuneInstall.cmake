# `cmake --install`: the `tuner` tool, the libraries (tune_core, tune_cuda, tune_runner), the
# headers under include/tuner/ and the CMake functions as the config package `Tune`, so that a
# consumer's `find_package(Tune CONFIG)` gives tune_add_kernel and tune_generate_header, running
# the installed tuner (no build of the tool in the consumer). Targets are exported in the
# namespace tune:: (tune::core, tune::cuda, tune::runner, tune::tuner).
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TUNE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Tune" CACHE STRING
  "Where the Tune config package is installed, relative to the prefix")

set(_tune_install_targets tuner tune_core tune_tomlplusplus tune_warnings)
foreach(t tune_cuda tune_runner)
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

install(TARGETS ${_tune_install_targets} EXPORT TuneTargets
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tuner/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tuner"
  FILES_MATCHING PATTERN "*.hpp")
install(FILES "${PROJECT_BINARY_DIR}/include/tuner/core/version.hpp"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tuner/core")
install(EXPORT TuneTargets NAMESPACE tune:: DESTINATION "${TUNE_INSTALL_CMAKEDIR}")

if(TUNE_TOMLPP_INCLUDE_DIR)
  set(TUNE_CONFIG_FIND_TOMLPP "")
else()
  set(TUNE_CONFIG_FIND_TOMLPP "find_dependency(tomlplusplus 3)")
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
  "${CMAKE_CURRENT_LIST_DIR}/TuneKernel.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TuneRunner.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/TuneTool.cmake"
  DESTINATION "${TUNE_INSTALL_CMAKEDIR}")
unset(_tune_install_targets)
