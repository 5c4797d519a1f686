# The runner of a kernel with a HARNESS (tuner/cuda/worker.hpp): an executable made of the
# tune_runner library (the measuring worker and `main`) and the kernel's harness sources. `tuner
# run` and the tune.<name> target start it as their measuring worker; the manifest names it.
include_guard(GLOBAL)
# Everything below runs under tune's policy settings, not the calling project's: CMake records
# the policies in effect where a function is defined and applies them whenever it is called.
block(SCOPE_FOR POLICIES)
cmake_policy(VERSION 3.25...4.4)

# _tune_add_runner(<name> <out-json> <names-include-dir> <harness>...): with harness sources and
# the tune::runner
# library (built here when tune is added with add_subdirectory or is this repository, imported
# from the installed package after find_package(Tune)), adds the
# executable `<name>.runner` and sets <out-json> to its path as a JSON string (a generator
# expression, for the manifest's file(GENERATE)). Otherwise <out-json> is `null`: the kernel can
# be warmed and verified, and `tuner run` says it has no runner. The runner's sources get
# <names-include-dir>, where the configure wrote the kernel's names header
# (`#include <tune/kernel/<name>.hpp>`).
function(_tune_add_runner name out names_dir)
  set(harness ${ARGN})
  if(NOT harness)
    set(${out} "null" PARENT_SCOPE)
    return()
  endif()
  if(NOT TARGET tune::runner)
    message(STATUS "tune: ${name}: no runner: the tune::runner library is not part of this "
      "build (add tune with add_subdirectory, or find_package(Tune), to build one)")
    set(${out} "null" PARENT_SCOPE)
    return()
  endif()
  add_executable(${name}.runner ${harness})
  target_link_libraries(${name}.runner PRIVATE tune::runner)
  target_include_directories(${name}.runner PRIVATE "${names_dir}")
  # The generator expression keeps a multi-config generator (Ninja Multi-Config, Visual Studio,
  # Xcode) from adding a per-configuration folder: the runner has one path in every
  # configuration, so the manifest that names it is the same in all of them (whichever
  # configuration was built last is the runner `tuner run` starts).
  set_target_properties(${name}.runner PROPERTIES
    OUTPUT_NAME "${name}.runner"
    RUNTIME_OUTPUT_DIRECTORY "$<1:${CMAKE_BINARY_DIR}/tune/${name}>")
  set(${out} "\"$<TARGET_FILE:${name}.runner>\"" PARENT_SCOPE)
endfunction()

endblock()  # SCOPE_FOR POLICIES
