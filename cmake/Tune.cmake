#[=======================================================================[.rst:
Tune
----

tune's public CMake API: declare tunable CUDA kernels and get, for each, a compile-only
``warm`` step, a staleness-aware ``tune`` step and a ``record`` test for CI.

Use it through ``add_subdirectory`` of the tune repository (which includes this module)::

  add_subdirectory(third_party/tune)
  enable_testing()
  tune_add_kernel(gemm
    SOURCE kernels/gemm.cu SPACE spaces/gemm.toml RECORD records/gemm.json ARCH sm_90)

then::

  cmake --build build --target warm      # compile every candidate into the kernel cache
  cmake --build build --target tune      # re-tune kernels whose record is stale (needs a GPU)
  ctest --test-dir build --no-tests=error -L records  # verify every record (no GPU)
  cmake --build build --target tune-check  # the same as one command: tuner status --check

Commands
^^^^^^^^

* :command:`tune_add_kernel` (``TuneKernel.cmake``)
* :command:`tune_generate_header` (``TuneHeader.cmake``)
* :command:`tune_embed_winners` (``TuneEmbed.cmake``)

Cache variables
^^^^^^^^^^^^^^^

``TUNE_ARCH``
  Default architectures (``sm_90``, or a list ``sm_80;sm_90``) for kernels declared without
  ``ARCH``. Without it, an explicitly set ``CMAKE_CUDA_ARCHITECTURES`` is used (``90`` means
  ``sm_90``); CMake's own default, ``native``, ``all`` and ``all-major`` are refused, since a
  record is tuned for named architectures.

``TUNE_CACHE_DIR``
  The kernel cache directory. Defaults to the ``TUNE_CACHE_DIR`` environment variable when it
  is set at the first configure, else ``<build>/tune/cache``. Point several build trees (and CI)
  at one directory to share compiled candidates: entries are content addressed. The tools
  also honour the environment variable at run time.

``TUNE_REMOTE_STORE``
  A remote store shared by machines and teammates (``http://host:port/prefix``, or an absolute
  directory): ``warm`` looks a candidate up there before compiling and uploads what it
  compiles, and a tune shares its measured trials. Defaults to the ``TUNE_REMOTE_STORE``
  environment variable at the first configure; the tools also honour the variable at run
  time. Credentials never go here: see docs/store.md.

``TUNE_WARM_JOBS``
  How many candidates ``warm`` compiles at once (a Ninja job pool); default: the number of
  logical cores. Also the most compiles ``tune.<name>`` runs ahead of its measurements on one
  GPU (there at most the cores but one, unless the compiles go through a compiler launcher,
  which may run them elsewhere: then ``TUNE_WARM_JOBS`` at once).

``CMAKE_CUDA_COMPILER_LAUNCHER`` (CMake's own variable)
  What runs each compile of a candidate, put in front of nvcc (``ccache``, ``sccache``,
  ``icecc``, ``srun;--partition=cpu``), for ``warm`` and the compiles ``tune.<name>`` runs
  ahead. Read at configure time into the manifest; without the variable, the environment
  variable of the same name. It is no input of the cache key: it changes where a compile
  runs, not its output. ``TUNE_COMPILER_LAUNCHER`` in the environment overrides it at run
  time (``off`` for none). See docs/scaling.md "Compiling elsewhere".

``TUNE_BUDGET_S``
  Wall-clock seconds for the whole ``tune`` target (and each ``tune.<name>``): split across the
  stale buckets as they start, each getting an equal share of what is left, at most its own
  ``budget_s``. Empty (the default): every bucket has its own ``budget_s`` only. The
  ``TUNE_BUDGET_S`` environment variable at build time is used when this is empty.

``TUNE_TUNER_EXECUTABLE``
  A ``tuner`` executable to use at configure time (reading spaces) and at build time (warm,
  tune, record tests), such as an installed one or one built earlier. When it is empty, the
  configure builds the host tool from this repository in ``<build>/_tune_host_tool`` (without
  tests), and later configures only re-check it (a no-op build when nothing changed). Build steps
  run the same tool; the target ``tune_host_tool`` brings it up to date before them, and the
  build imports tune's libraries from that tree too (``tune_host_libs`` builds them there), so
  ``tune_core`` and the tool are compiled once. With it set, nothing is built at configure time
  and the libraries are compiled in this build.

``TUNE_HOST_TOOL_BUILD_TYPE``
  The build type of the host tool and of the libraries built beside it (default ``Release``;
  tune's own build uses its ``CMAKE_BUILD_TYPE``).

``TUNE_MANIFEST_CONFIG``
  Multi-config generators (Ninja Multi-Config, Visual Studio, Xcode) only. A build tree has one
  manifest per kernel for all its configurations; the generator expressions in the usage
  requirements of ``LINK_LIBRARIES`` (``$<CONFIG>`` in a definition, say) are evaluated for
  this configuration. Default: ``CMAKE_DEFAULT_BUILD_TYPE``, else the first of
  ``CMAKE_CONFIGURATION_TYPES``.

``TUNE_NVCC_EXECUTABLE``
  The CUDA compiler that ``warm`` runs. Defaults to ``CMAKE_CUDA_COMPILER`` when the CUDA
  language is enabled and is nvcc, else ``nvcc`` from ``CUDAToolkit_ROOT``, ``CUDA_PATH``,
  ``/usr/local/cuda`` or the ``PATH``.

``TUNE_PROJECT_ROOT`` (normal variable)
  What the cache key makes paths relative to. Default: ``PROJECT_SOURCE_DIR`` where
  :command:`tune_add_kernel` is called, so a record does not depend on where the project is
  checked out or whether it is itself a subproject.

Global targets
^^^^^^^^^^^^^^

Created by the first :command:`tune_add_kernel`: ``warm`` (every kernel's ``warm.<name>``),
``tune`` (``tuner tune --build-dir``: every kernel's ``tune.<name>`` in one process, under
``TUNE_BUDGET_S``), ``tune-runners`` (every kernel's runner, nothing else: what a CI shard job
builds) and ``tune-check`` (``tuner status --check`` over every manifest of the build tree).
#]=======================================================================]
include_guard(GLOBAL)
# Everything below runs under tune's policy settings, not the calling project's: CMake records
# the policies in effect where a function is defined and applies them whenever it is called.
block(SCOPE_FOR POLICIES)
cmake_policy(VERSION 3.25...4.4)

# The tune repository root, for the configure-time build of the host tool. Kept in a global
# property: the functions run in the callers' directory scopes, which do not see our variables.
get_filename_component(_tune_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set_property(GLOBAL PROPERTY _TUNE_ROOT_DIR "${_tune_root}")
unset(_tune_root)

set(TUNE_ARCH "" CACHE STRING
  "Architectures (sm_90, or a list) for kernels declared without ARCH")
if(DEFINED ENV{TUNE_CACHE_DIR} AND NOT "$ENV{TUNE_CACHE_DIR}" STREQUAL "")
  set(_tune_default_cache "$ENV{TUNE_CACHE_DIR}")
else()
  set(_tune_default_cache "")
endif()
set(TUNE_CACHE_DIR "${_tune_default_cache}" CACHE PATH
  "Kernel cache directory shared by build trees (empty: <build>/tune/cache)")
unset(_tune_default_cache)
set(TUNE_REMOTE_STORE "$ENV{TUNE_REMOTE_STORE}" CACHE STRING
  "Remote store of compiled candidates and trials (http(s)://host:port/prefix; empty: none)")
# The location is checked by the tuner, the one reader of store locations, when the first kernel
# is declared (tune_add_kernel, _tune_store_location): what the manifests get is what it read.
cmake_host_system_information(RESULT _tune_cores QUERY NUMBER_OF_LOGICAL_CORES)
set(TUNE_WARM_JOBS "${_tune_cores}" CACHE STRING "Candidates warm compiles at once")
unset(_tune_cores)
set(TUNE_BUDGET_S "" CACHE STRING
  "Wall-clock seconds for the whole `tune` target, split across the stale buckets (empty: none)")
if(NOT TUNE_BUDGET_S STREQUAL "" AND NOT TUNE_BUDGET_S MATCHES "^[0-9]+([.][0-9]+)?$")
  message(FATAL_ERROR "TUNE_BUDGET_S='${TUNE_BUDGET_S}' is not a number of seconds: set "
    "-DTUNE_BUDGET_S=3600 for an hour, or empty for none")
endif()
set(TUNE_TUNER_EXECUTABLE "" CACHE FILEPATH
  "tuner executable to use instead of building the host tool at configure time")
set(TUNE_HOST_TOOL_BUILD_TYPE "Release" CACHE STRING
  "Build type of the host tuner built at configure time")
set(TUNE_MANIFEST_CONFIG "" CACHE STRING
  "Multi-config generators: the configuration whose usage requirements the kernel manifests carry (empty: CMAKE_DEFAULT_BUILD_TYPE, else the first of CMAKE_CONFIGURATION_TYPES)")

include("${CMAKE_CURRENT_LIST_DIR}/TuneTool.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TuneKernel.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TuneHeader.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/TuneEmbed.cmake")

endblock()  # SCOPE_FOR POLICIES
