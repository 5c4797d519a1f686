include_guard(GLOBAL)
# Every dependency comes from the system (Debian's packages) through find_package; nothing is
# downloaded at build time.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(Threads REQUIRED)
# libcurl for the remote store's HTTP client (docs/store.md). Optional: a GPU host without its
# development files still builds, and there an HTTP store is a warning and local work.
find_package(CURL)

# TOML++: Debian's CMake package builds against its shared library. A GPU host that has only
# the headers (carried there) uses them header-only through TUNE_TOMLPP_INCLUDE_DIR.
if(NOT TARGET tune_tomlplusplus)
  add_library(tune_tomlplusplus INTERFACE)
  if(TUNE_TOMLPP_INCLUDE_DIR)
    if(NOT EXISTS "${TUNE_TOMLPP_INCLUDE_DIR}/toml++/toml.h")
      message(FATAL_ERROR
        "TUNE_TOMLPP_INCLUDE_DIR='${TUNE_TOMLPP_INCLUDE_DIR}' holds no toml++/toml.h: "
        "point it at the directory that contains the toml++ folder")
    endif()
    # Build-tree only: an installed tune_core has TOML++ compiled in (header-only).
    target_include_directories(tune_tomlplusplus SYSTEM INTERFACE
      "$<BUILD_INTERFACE:${TUNE_TOMLPP_INCLUDE_DIR}>")
    target_compile_definitions(tune_tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
  else()
    find_package(tomlplusplus 3 REQUIRED)
    target_link_libraries(tune_tomlplusplus INTERFACE tomlplusplus::tomlplusplus)
  endif()
endif()

# Eigen (header-only) for the Bayesian optimization strategy: Debian's package, or headers
# carried to a GPU host through TUNE_EIGEN_INCLUDE_DIR. Build-tree only, like TOML++: an
# installed tune_core has what it uses compiled in.
if(NOT TARGET tune_eigen)
  add_library(tune_eigen INTERFACE)
  if(TUNE_EIGEN_INCLUDE_DIR)
    if(NOT EXISTS "${TUNE_EIGEN_INCLUDE_DIR}/Eigen/Core")
      message(FATAL_ERROR
        "TUNE_EIGEN_INCLUDE_DIR='${TUNE_EIGEN_INCLUDE_DIR}' holds no Eigen/Core: point it at "
        "the directory that contains the Eigen folder")
    endif()
    set(_tune_eigen_dir "${TUNE_EIGEN_INCLUDE_DIR}")
  else()
    find_package(Eigen3 3.3 REQUIRED NO_MODULE)
    get_target_property(_tune_eigen_dir Eigen3::Eigen INTERFACE_INCLUDE_DIRECTORIES)
  endif()
  target_include_directories(tune_eigen SYSTEM INTERFACE "$<BUILD_INTERFACE:${_tune_eigen_dir}>")
  unset(_tune_eigen_dir)
endif()
