#[=======================================================================[.rst:
TuneKernel
----------

Included by ``Tune.cmake``; see there for the cache variables and global targets.

.. command:: tune_add_kernel

  Declare a tunable CUDA kernel, its search space and its committed record::

    tune_add_kernel(<name>
      SOURCE <kernel.cu>
      SPACE <space.toml>
      RECORD <record.json>
      [HARNESS <harness.cpp|.cu>...]
      [ENTRY <symbol>]
      [ARCH <sm_XX>...]
      [LINK_LIBRARIES <target>...]
      [COMPILE_OPTIONS <option>...]
      [INCLUDE_DIRECTORIES <dir>...]
      [DEFINITIONS <NAME[=value]>...])

  ``<name>``
    The kernel's name: letters, digits, ``_``, ``.``, ``-``, not starting with ``.``. It names
    the targets ``warm.<name>`` and ``tune.<name>``, the test ``record.<name>`` and the build
    folder ``<build>/tune/<name>``.

  ``SOURCE <kernel.cu>``
    The translation unit compiled once per candidate, device code only (``nvcc -cubin``), with
    an ``extern "C"`` entry. Relative paths are relative to the current source directory.

  ``SPACE <space.toml>``
    The search space. It is read at configure time by the tuner (a space that does not parse
    stops the configure with the tuner's diagnostic) and is a configure dependency: editing it
    re-runs the configure, which rewrites the candidate list.

  ``RECORD <record.json>``
    The committed record, in the source tree; it may not exist yet. With several
    architectures each gets its own file, the architecture before the extension
    (``gemm.json`` becomes ``gemm.sm_80.json`` and ``gemm.sm_90.json``).

  ``HARNESS <file>...``
    The setup code the runner measures the kernel with. Without it the kernel can be warmed
    and verified but not tuned. The runner's sources find the kernel's names header, written
    at configure time: ``#include <tune/kernel/<name>.hpp>`` declares
    ``tune::kernel::<name>::param::<PARAM>`` and ``::shape::<NAME>`` (docs/harness.md). Any
    other target that compiles the harness links the INTERFACE library ``tune_names.<name>``.

  ``ENTRY <symbol>``
    The entry function's name; default ``<name>`` (then ``<name>`` must be a C identifier).
    A template entry such as ``"tile_gemm<{BM}, {BN}, {LAYOUT}>"`` names a ``__global__``
    function template instead: each ``{PARAM}`` is replaced by the config's value (or its C++
    text from the space's ``[entry.map.PARAM]``), and warm compiles one generated unit per
    candidate that instantiates it (docs/embed.md "Template entries"). A placeholder that
    names no param stops the configure naming it and the params.

  ``ARCH <sm_XX>...``
    The architectures to tune for, such as ``sm_90`` or ``sm_80 sm_90`` (also ``sm_90a``).
    Default: ``TUNE_ARCH``, else an explicitly set ``CMAKE_CUDA_ARCHITECTURES`` (``90`` and
    ``90-real`` mean ``sm_90``). CMake's own default and ``native``, ``all``, ``all-major``
    are refused: a record is tuned for named architectures. Known: ``sm_50`` to ``sm_121``,
    as ``tuner archs`` lists them (the table of ``tuner/core/build/kernel_cache.cpp``).

  ``LINK_LIBRARIES <target>...``
    Targets (already defined) whose usage requirements the kernel inherits: their
    ``INTERFACE_INCLUDE_DIRECTORIES`` and ``INTERFACE_COMPILE_DEFINITIONS``, transitively.
    Nothing is linked: a candidate is a cubin.

  ``COMPILE_OPTIONS <option>...``
    Extra nvcc options, such as ``-lineinfo`` or ``--use_fast_math``. They enter the cache
    key. A ``-std=`` option replaces the default ``-std=c++17`` (``-std=c++20`` for a library
    built with ``CMAKE_CUDA_STANDARD 20``). Options that choose the architecture or the output (``-arch``, ``-gencode``, ``-o``,
    ``-c``, ``-cubin``, ...) are refused: use ``ARCH``.

  ``INCLUDE_DIRECTORIES <dir>...``
    Include directories (relative to the current source directory); headers found through
    them enter the cache key by content.

  ``DEFINITIONS <NAME[=value]>...``
    Preprocessor definitions, without ``-D``.

  At configure time it writes ``<build>/tune/<name>/manifest.json`` (docs/manifest.md) and
  defines:

  ``warm.<name>``
    Compiles every candidate of the space for every architecture into the kernel cache, one
    Ninja step per candidate and architecture (output
    ``<build>/tune/<name>/<arch>/warm/c-<16 hex>.stamp``, named by the SHA-256 of the config
    id; a depfile lists the headers the candidate's cache key read). A cached candidate is not
    compiled again; one that fails to compile or is over the architecture's limits is stored
    as invalid and does not fail the build. Steps run in the ``tune_warm`` job pool
    (``TUNE_WARM_JOBS``). Then one line per architecture says what they did: ``tuner warm:
    fill sm_90: 4 candidates: 2 compiled, 0 from the store, 2 already cached; 2 invalid (1
    failed, 1 over_limit)``. Part of the aggregate ``warm``.

  ``tune.<name>``
    Checks the committed record(s): a fresh record prints one line and compiles nothing; a
    stale or missing one is re-tuned on the GPU when the kernel has a runner: on one GPU the
    candidates missing from the kernel cache are compiled on the host's cores (at most
    ``TUNE_WARM_JOBS`` at once) while the measured ones run, on several (``TUNE_DEVICES``)
    ``warm.<name>`` is built first. Runs with the terminal (Ninja's console pool), so two tunes
    never share a GPU. Part of ``tune``.

  ``record.<name>`` (a ctest test per architecture; ``record.<name>.<arch>`` when there are
  several; label ``records``)
    ``tuner verify`` of the committed record: passes when fresh, fails with the reason and the
    command that re-tunes when stale or missing. Needs ``enable_testing()`` in the project (in
    the top-level ``CMakeLists.txt``): without it the configure ends with a warning naming the
    kernels whose tests are not registered. Run the gate as ``ctest --no-tests=error -L
    records``, so that a build without the tests fails instead of passing.
#]=======================================================================]
include_guard(GLOBAL)
# Everything below runs under tune's policy settings, not the calling project's: CMake records
# the policies in effect where a function is defined and applies them whenever it is called.
block(SCOPE_FOR POLICIES)
cmake_policy(VERSION 3.25...4.4)

include("${CMAKE_CURRENT_LIST_DIR}/TuneRunner.cmake")

# _tune_known_archs(<fn> <tuner> <out-var>): the architectures a record may be tuned for, as
# `tuner archs` prints them (one per line, without suffix). The table lives in the tuner
# (tuner/core/build/kernel_cache.cpp), beside the per-architecture limits warm checks; CMake asks for it
# once per configure rather than keeping a copy.
function(_tune_known_archs fn tuner out)
  get_property(known GLOBAL PROPERTY _TUNE_KNOWN_ARCHS)
  if(NOT known)
    execute_process(COMMAND "${tuner}" archs
      RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
    string(STRIP "${text}" text)
    if(NOT rc EQUAL 0 OR text STREQUAL "")
      string(STRIP "${err}" err)
      set(why "${rc}")
      if(NOT err STREQUAL "")
        string(APPEND why ": ${err}")
      endif()
      message(FATAL_ERROR "${fn}: '${tuner} archs' did not list the known architectures "
        "(${why}): point TUNE_TUNER_EXECUTABLE at a tuner of this tune version")
    endif()
    string(REPLACE "\n" ";" known "${text}")
    set_property(GLOBAL PROPERTY _TUNE_KNOWN_ARCHS "${known}")
  endif()
  set(${out} "${known}" PARENT_SCOPE)
endfunction()

# _tune_record_paths(<out-var> <record> <archs>): the record file of each architecture, in the
# order of <archs>: <record> itself for one; with several, the architecture before the extension
# (gemm.json gives gemm.sm_80.json and gemm.sm_90.json). The manifest's `records`, the record
# tests and tune_generate_header all take the paths from here.
function(_tune_record_paths out record archs)
  list(LENGTH archs narchs)
  if(narchs EQUAL 1)
    set(${out} "${record}" PARENT_SCOPE)
    return()
  endif()
  cmake_path(GET record EXTENSION LAST_ONLY ext)
  cmake_path(REMOVE_EXTENSION record LAST_ONLY OUTPUT_VARIABLE stem)
  set(paths)
  foreach(arch IN LISTS archs)
    list(APPEND paths "${stem}.${arch}${ext}")
  endforeach()
  set(${out} "${paths}" PARENT_SCOPE)
endfunction()

# _tune_json(<out-var> <string>): <string> as a JSON string literal (quotes included).
function(_tune_json out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  string(REPLACE "\n" "\\n" value "${value}")
  string(REPLACE "\t" "\\t" value "${value}")
  string(REPLACE "\r" "\\r" value "${value}")
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()

# _tune_json_genex_literal(<out-var> <string>): <string> escaped for the inside of a JSON string
# and then for a generator expression argument (where '>' and ',' are syntax).
function(_tune_json_genex_literal out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  string(REPLACE ">" "$<ANGLE-R>" value "${value}")
  string(REPLACE "," "$<COMMA>" value "${value}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# _tune_json_array(<out-var> <items>...): a JSON array of strings.
function(_tune_json_array out)
  set(items)
  foreach(item IN LISTS ARGN)
    _tune_json(quoted "${item}")
    list(APPEND items "${quoted}")
  endforeach()
  list(JOIN items ", " joined)
  set(${out} "[${joined}]" PARENT_SCOPE)
endfunction()

# _tune_check_arch(<fn> <arch> <from> <known>): stops unless <arch> is one of the <known>
# architectures, optionally with an 'a' or 'f' suffix.
function(_tune_check_arch fn arch from known)
  list(JOIN known ", " known_text)
  if(arch MATCHES "^(native|all|all-major)$")
    message(FATAL_ERROR
      "${fn}: ${from} '${arch}' is not an architecture a record can be tuned for: pass "
      "ARCH sm_90 or -DTUNE_ARCH=sm_90 (the architectures of the GPUs you tune on)")
  endif()
  if(arch MATCHES "^[0-9]+[af]?$")
    message(FATAL_ERROR "${fn}: ${from} '${arch}' is not of the form sm_XX: did you mean "
      "'sm_${arch}'?")
  endif()
  if(NOT arch MATCHES "^(sm_[0-9]+)[af]?$")
    message(FATAL_ERROR "${fn}: ${from} '${arch}' is not of the form sm_XX (for example "
      "sm_90); known: ${known_text}")
  endif()
  set(base "${CMAKE_MATCH_1}")
  if(NOT base IN_LIST known)
    message(FATAL_ERROR "${fn}: unknown architecture '${arch}' in ${from}; known: "
      "${known_text} (optionally with an 'a' or 'f' suffix)")
  endif()
endfunction()

# _tune_resolve_archs(<fn> <tuner> <out-var> <ARCH values>...): the kernel's architectures,
# checked against what <tuner> knows.
function(_tune_resolve_archs fn tuner out)
  set(archs ${ARGN})
  set(from "ARCH")
  if(NOT archs AND NOT "${TUNE_ARCH}" STREQUAL "")
    set(archs ${TUNE_ARCH})
    set(from "TUNE_ARCH")
  endif()
  if(NOT archs AND DEFINED CMAKE_CUDA_ARCHITECTURES
     AND NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "")
    set(from "CMAKE_CUDA_ARCHITECTURES")
    if(CMAKE_CUDA_ARCHITECTURES MATCHES "^(native|all|all-major)$")
      message(FATAL_ERROR
        "${fn}: CMAKE_CUDA_ARCHITECTURES='${CMAKE_CUDA_ARCHITECTURES}' does not name the "
        "architectures a record is tuned for: pass ARCH sm_90 or -DTUNE_ARCH=sm_90")
    endif()
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      message(FATAL_ERROR
        "${fn}: CMAKE_CUDA_ARCHITECTURES='${CMAKE_CUDA_ARCHITECTURES}' names no architecture: "
        "pass ARCH sm_90 or -DTUNE_ARCH=sm_90")
    endif()
    # enable_language(CUDA) fills in the compiler's default when the user set nothing; that is
    # not a choice anyone made for this kernel. CMake 3.25 leaves no variable saying so: its
    # default is the cache entry it writes with the help text "CUDA architectures", whereas
    # -D on the command line gives another help text and set() in a CMakeLists.txt a normal
    # variable. Later versions name their default CMAKE_CUDA_ARCHITECTURES_DEFAULT.
    get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
    set(cmake_default OFF)
    if(DEFINED CMAKE_CUDA_ARCHITECTURES_DEFAULT
       AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${CMAKE_CUDA_ARCHITECTURES_DEFAULT}")
      set(cmake_default ON)
    elseif(help STREQUAL "CUDA architectures"
           AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
      set(cmake_default ON)
    endif()
    if(cmake_default AND "$ENV{CUDAARCHS}" STREQUAL "")
      message(FATAL_ERROR
        "${fn}: no architecture chosen (CMAKE_CUDA_ARCHITECTURES is CMake's default "
        "'${CMAKE_CUDA_ARCHITECTURES}'): pass ARCH sm_90 or -DTUNE_ARCH=sm_90")
    endif()
    foreach(a IN LISTS CMAKE_CUDA_ARCHITECTURES)
      if(NOT a MATCHES "^([0-9]+[af]?)(-real|-virtual)?$")
        message(FATAL_ERROR
          "${fn}: cannot read an architecture from CMAKE_CUDA_ARCHITECTURES entry '${a}': "
          "pass ARCH sm_90 or -DTUNE_ARCH=sm_90")
      endif()
      list(APPEND archs "sm_${CMAKE_MATCH_1}")
    endforeach()
    list(REMOVE_DUPLICATES archs)
  endif()
  if(NOT archs)
    message(FATAL_ERROR
      "${fn}: no architecture chosen: pass ARCH sm_90 or -DTUNE_ARCH=sm_90 (or set "
      "CMAKE_CUDA_ARCHITECTURES explicitly)")
  endif()
  _tune_known_archs("${fn}" "${tuner}" known)
  set(seen)
  foreach(a IN LISTS archs)
    _tune_check_arch("${fn}" "${a}" "${from}" "${known}")
    if(a IN_LIST seen)
      message(FATAL_ERROR "${fn}: ${from} lists '${a}' twice")
    endif()
    list(APPEND seen "${a}")
  endforeach()
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# _tune_candidates(<fn> <tuner> <name> <space> <out-ids> <entry> <names-header>): validates the
# space with the tuner and returns the candidate ids warm compiles: the union of every bucket's
# pruned configs, in order of first appearance, and writes the kernel's names header to
# <names-header> (rewritten only when it changes). `tuner warm --list-candidates` prints them one
# per line (Space::load, the
# same reader and diagnostics as `tuner space`); lines keep this linear in the number of
# candidates, where string(JSON) over `tuner space --json` would re-parse the document per id.
# With --kernel it also refuses what can never give a record (tuner/core/space/space_checks.hpp): a
# space of another kernel, a bucket that keeps no config, a bucket shadowed by earlier ones.
# Ids cannot hold ';' or '[' (param values are restricted to [A-Za-z0-9_.:+-]), so they are
# safe list elements.
function(_tune_candidates fn tuner name space out entry names_header)
  set(entry_args)
  if(entry MATCHES "<")
    set(entry_args --entry "${entry}")
  endif()
  execute_process(COMMAND "${tuner}" warm --list-candidates "${space}" --kernel "${name}"
                          ${entry_args} --names-header "${names_header}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    if(err MATCHES "^tuner warm: error: ENTRY ")
      string(REGEX REPLACE "^tuner warm: error: " "" err "${err}")
      message(FATAL_ERROR "${fn}: ${err}")
    endif()
    message(FATAL_ERROR "${fn}: SPACE '${space}' is not a valid space:\n${err}\n"
      "(read by '${tuner}'; fix the space file and configure again)")
  endif()
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(ids)
  foreach(id IN LISTS lines)
    string(SHA256 h "${id}")
    string(SUBSTRING "${h}" 0 16 h)
    if(DEFINED seen_${h})
      message(FATAL_ERROR "${fn}: configs '${seen_${h}}' and '${id}' share the stamp name "
        "c-${h}: rename a param")
    endif()
    set(seen_${h} "${id}")
    list(APPEND ids "${id}")
  endforeach()
  set(${out} "${ids}" PARENT_SCOPE)
endfunction()

# _tune_store_location(<fn> <tuner> <out>): TUNE_REMOTE_STORE as the tuner reads it
# (`tuner store check`, the reader every command uses: blanks dropped, credentials, control
# characters, queries, parameters and '.' segments refused), checked once per configure; "" for
# none. The manifests get this text, so a password never reaches them. The value goes to the
# tuner in its environment, not on a command line that other users' `ps` shows, and no message
# echoes it.
function(_tune_store_location fn tuner out)
  get_property(checked GLOBAL PROPERTY _TUNE_STORE_CHECKED)
  if(NOT checked STREQUAL "${TUNE_REMOTE_STORE}")
    set(location "")
    if(NOT TUNE_REMOTE_STORE STREQUAL "")
      set(had_env OFF)
      if(DEFINED ENV{TUNE_REMOTE_STORE})
        set(had_env ON)
        set(saved_env "$ENV{TUNE_REMOTE_STORE}")
      endif()
      set(ENV{TUNE_REMOTE_STORE} "${TUNE_REMOTE_STORE}")
      execute_process(COMMAND "${tuner}" store check
        RESULT_VARIABLE rc OUTPUT_VARIABLE location ERROR_VARIABLE err)
      if(had_env)
        set(ENV{TUNE_REMOTE_STORE} "${saved_env}")
      else()
        unset(ENV{TUNE_REMOTE_STORE})
      endif()
      if(NOT rc EQUAL 0)
        string(STRIP "${err}" err)
        message(FATAL_ERROR "${fn}: ${err} (the value is not shown: it may hold a secret; "
          "docs/store.md says how to pass credentials)")
      endif()
      string(STRIP "${location}" location)
      if(location STREQUAL "off")
        set(location "")
      endif()
    endif()
    set_property(GLOBAL PROPERTY _TUNE_STORE_CHECKED "${TUNE_REMOTE_STORE}")
    set_property(GLOBAL PROPERTY _TUNE_STORE_LOCATION "${location}")
  endif()
  get_property(location GLOBAL PROPERTY _TUNE_STORE_LOCATION)
  set(${out} "${location}" PARENT_SCOPE)
endfunction()

# _tune_add_tool_dependencies(<target> <tool-depends>): <target> runs the tuner, so it depends
# on the targets among <tool-depends> (the host tool's refresh).
function(_tune_add_tool_dependencies target depends)
  foreach(d IN LISTS depends)
    if(TARGET "${d}")
      add_dependencies(${target} ${d})
    endif()
  endforeach()
endfunction()

# _tune_budget_args(<out-var>): `--total-budget <s>` when TUNE_BUDGET_S is set, else nothing.
function(_tune_budget_args out)
  set(args)
  if(NOT TUNE_BUDGET_S STREQUAL "")
    set(args --total-budget "${TUNE_BUDGET_S}")
  endif()
  set(${out} "${args}" PARENT_SCOPE)
endfunction()

# _tune_global_targets(<tool> <tool-depends>): the aggregates warm, tune and tune-runners, the
# tune-check target and the warm job pool, made once by the first tune_add_kernel.
function(_tune_global_targets tool tool_depends)
  get_property(done GLOBAL PROPERTY _TUNE_GLOBAL_TARGETS)
  if(done)
    return()
  endif()
  set_property(GLOBAL PROPERTY _TUNE_GLOBAL_TARGETS ON)
  # The tuner's range for --compile-jobs, which the tune rule passes TUNE_WARM_JOBS to
  # (max_jobs in tuner/core/base/input_limits.hpp): a value past it would configure and warm,
  # and then fail the tune target.
  set(_TUNE_MAX_JOBS 1024)
  string(LENGTH "${TUNE_WARM_JOBS}" jobs_digits)
  if(NOT TUNE_WARM_JOBS MATCHES "^[1-9][0-9]*$" OR jobs_digits GREATER 4
     OR TUNE_WARM_JOBS GREATER _TUNE_MAX_JOBS)
    message(FATAL_ERROR "tune_add_kernel: TUNE_WARM_JOBS='${TUNE_WARM_JOBS}' must be a "
      "whole number of jobs in [1, ${_TUNE_MAX_JOBS}] (the tuner's --compile-jobs range): set "
      "-DTUNE_WARM_JOBS=${_TUNE_MAX_JOBS} or fewer")
  endif()
  set_property(GLOBAL APPEND PROPERTY JOB_POOLS tune_warm=${TUNE_WARM_JOBS})
  add_custom_target(warm)
  # One process for every kernel of the build (tuner tune --build-dir), so that TUNE_BUDGET_S is
  # split across the stale buckets of all of them; it depends on every kernel's runner.
  _tune_budget_args(budget_args)
  add_custom_target(tune
    COMMAND "${tool}" tune --build-dir "${CMAKE_BINARY_DIR}" --cmake "${CMAKE_COMMAND}"
            --compile-jobs "${TUNE_WARM_JOBS}" ${budget_args}
    COMMENT "Checking the record of every tuned kernel"
    USES_TERMINAL VERBATIM)
  _tune_add_tool_dependencies(tune "${tool_depends}")
  # Only the runners the shard jobs of a CI matrix need (docs/scaling.md): host code, no kernel
  # and nothing else of the project.
  add_custom_target(tune-runners)
  # status reads every manifest under <build>/tune; USES_TERMINAL keeps its output unbuffered.
  add_custom_target(tune-check
    COMMAND "${tool}" status --check --build-dir "${CMAKE_BINARY_DIR}"
    COMMENT "Checking every tuned kernel's record"
    USES_TERMINAL VERBATIM)
  _tune_add_tool_dependencies(tune-check "${tool_depends}")
endfunction()

# _tune_write_kernel_list(): run once at the end of the configure (cmake_language(DEFER) from the
# first tune_add_kernel). Writes <build>/tune/kernels.list, the kernels this configure declared,
# one a line, which `tuner status` (and so tune-check) reads instead of every manifest it finds,
# and removes the manifest of a kernel no longer declared: a kernel taken out of the CMakeLists
# would otherwise leave a manifest that fails `tuner status --check` forever.
function(_tune_write_kernel_list)
  get_property(kernels GLOBAL PROPERTY _TUNE_KERNEL_LIST)
  set(tune_dir "${CMAKE_BINARY_DIR}/tune")
  list(JOIN kernels "\n" text)
  file(WRITE "${tune_dir}/kernels.list.tmp" "${text}\n")
  file(RENAME "${tune_dir}/kernels.list.tmp" "${tune_dir}/kernels.list")
  file(GLOB old_manifests LIST_DIRECTORIES false "${tune_dir}/*/manifest.json")
  foreach(old IN LISTS old_manifests)
    cmake_path(GET old PARENT_PATH dir)
    cmake_path(GET dir FILENAME old_name)
    if(NOT old_name IN_LIST kernels)
      file(REMOVE "${old}")
      message(STATUS "tune: removed the manifest of '${old_name}', no longer declared")
    endif()
  endforeach()
  _tune_check_testing_enabled()
endfunction()

# _tune_check_testing_enabled(): at the end of the configure, warns once when the record tests
# of some kernels will not reach ctest: add_test does nothing in a directory without
# enable_testing() (ctest reads a directory's tests only when it and every directory above it
# enabled testing), so `ctest -L records` would find no test and pass. A project that turned
# BUILD_TESTING off chose so, and is not warned.
function(_tune_check_testing_enabled)
  if(DEFINED BUILD_TESTING AND NOT BUILD_TESTING)
    return()
  endif()
  get_property(declared GLOBAL PROPERTY _TUNE_KERNEL_DIRS)
  set(untested)
  foreach(item IN LISTS declared)
    string(REPLACE "|" ";" item "${item}")
    list(GET item 0 kernel)
    list(GET item 1 dir)
    while(TRUE)
      get_directory_property(enabled DIRECTORY "${dir}" DEFINITION CMAKE_TESTING_ENABLED)
      if(NOT enabled)
        list(APPEND untested "${kernel}")
        break()
      endif()
      get_directory_property(parent DIRECTORY "${dir}" PARENT_DIRECTORY)
      if(parent STREQUAL "")
        break()
      endif()
      set(dir "${parent}")
    endwhile()
  endforeach()
  if(untested)
    list(JOIN untested ", " names)
    message(WARNING "tune: testing is not enabled where kernel(s) ${names} are declared, so "
      "their record tests (record.<name>, label records) are not registered: `ctest -L records` "
      "would find no test and pass without checking a record. Call enable_testing() in the "
      "top-level CMakeLists.txt, before the tune_add_kernel calls (or include(CTest)), and run "
      "the gate as `ctest --no-tests=error -L records`.")
  endif()
endfunction()

# _tune_check_inherited_definitions(<fn> <lib> <target> <chain>): stops when <target> (reached
# from LINK_LIBRARIES <lib> along the targets <chain>, <lib> first) or any target it links to
# in its INTERFACE_LINK_LIBRARIES, at any depth, defines something holding '"' or '\'. Inherited
# definitions go into the manifest's JSON unescaped (they are generator expressions, evaluated
# at generate time, and CMake 3.25 has no generator expression that escapes a string), so one
# such definition would make a manifest no step can read. Definitions that only a generator
# expression produces cannot be seen here; the tuner then reports the manifest by name.
# _tune_manifest_condition(<out-var>): empty under a single-config generator; under a
# multi-config one, the CONDITION arguments of file(GENERATE) that write a manifest for one
# configuration only: _tune_manifest_config's.
function(_tune_manifest_condition out)
  get_property(multi GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT multi)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  _tune_manifest_config(config)
  set(${out} CONDITION "$<CONFIG:${config}>" PARENT_SCOPE)
endfunction()

# _tune_manifest_config(<out-var>): the configuration whose usage requirements a multi-config
# build tree's manifests carry: TUNE_MANIFEST_CONFIG when set, else CMAKE_DEFAULT_BUILD_TYPE
# (Ninja Multi-Config's default), else the first of CMAKE_CONFIGURATION_TYPES.
function(_tune_manifest_config out)
  if(TUNE_MANIFEST_CONFIG)
    set(config "${TUNE_MANIFEST_CONFIG}")
    if(NOT config IN_LIST CMAKE_CONFIGURATION_TYPES)
      list(JOIN CMAKE_CONFIGURATION_TYPES ", " types)
      message(FATAL_ERROR "tune_add_kernel: TUNE_MANIFEST_CONFIG '${config}' is not one of "
        "this build tree's configurations (CMAKE_CONFIGURATION_TYPES: ${types}): set it to one "
        "of them, or leave it empty for the default")
    endif()
  elseif(CMAKE_DEFAULT_BUILD_TYPE)
    set(config "${CMAKE_DEFAULT_BUILD_TYPE}")
  else()
    list(GET CMAKE_CONFIGURATION_TYPES 0 config)
  endif()
  set(${out} "${config}" PARENT_SCOPE)
endfunction()

function(_tune_check_inherited_definitions fn lib target chain)
  get_target_property(aliased "${target}" ALIASED_TARGET)
  if(aliased)
    set(target "${aliased}")
  endif()
  get_property(checked GLOBAL PROPERTY _TUNE_DEFS_CHECKED_${lib})
  if("${target}" IN_LIST checked)
    return()  # a diamond, or a cycle of interface libraries
  endif()
  set_property(GLOBAL APPEND PROPERTY _TUNE_DEFS_CHECKED_${lib} "${target}")
  get_target_property(defs "${target}" INTERFACE_COMPILE_DEFINITIONS)
  foreach(def IN LISTS defs)
    string(FIND "${def}" "\"" quote_at)
    string(FIND "${def}" "\\" backslash_at)
    if(NOT quote_at EQUAL -1 OR NOT backslash_at EQUAL -1)
      set(via "")
      list(LENGTH chain depth)
      if(depth GREATER 1)
        list(JOIN chain "' -> '" chain_text)
        set(via " (through '${chain_text}')")
      endif()
      message(FATAL_ERROR "${fn}: the definition '${def}' inherited from LINK_LIBRARIES "
        "'${lib}'${via} holds a quote or a backslash, which the kernel manifest cannot carry: "
        "define it without them (e.g. through a header), or pass it in DEFINITIONS")
    endif()
  endforeach()
  get_target_property(deps "${target}" INTERFACE_LINK_LIBRARIES)
  foreach(dep IN LISTS deps)
    if(dep MATCHES "^\\$<LINK_ONLY:")
      continue()  # linking only: no usage requirements reach the kernel
    endif()
    if(TARGET "${dep}")
      _tune_check_inherited_definitions("${fn}" "${lib}" "${dep}" "${chain};${dep}")
    endif()
  endforeach()
endfunction()

function(tune_add_kernel name)
  set(fn "tune_add_kernel(${name})")
  cmake_parse_arguments(PARSE_ARGV 1 arg ""
    "SOURCE;SPACE;RECORD;ENTRY"
    "HARNESS;ARCH;LINK_LIBRARIES;COMPILE_OPTIONS;INCLUDE_DIRECTORIES;DEFINITIONS")

  # --- arguments -------------------------------------------------------------------------
  if(arg_UNPARSED_ARGUMENTS)
    list(JOIN arg_UNPARSED_ARGUMENTS " " unknown)
    message(FATAL_ERROR "${fn}: unknown arguments: ${unknown} (expected SOURCE, SPACE, RECORD, "
      "HARNESS, ENTRY, ARCH, LINK_LIBRARIES, COMPILE_OPTIONS, INCLUDE_DIRECTORIES, "
      "DEFINITIONS)")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    list(JOIN arg_KEYWORDS_MISSING_VALUES ", " missing)
    message(FATAL_ERROR "${fn}: ${missing} given without a value")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")
    message(FATAL_ERROR "tune_add_kernel: kernel name '${name}' may hold only letters, digits, "
      "'_', '.' and '-', and may not start with '.'")
  endif()
  foreach(required SOURCE SPACE RECORD)
    if(NOT DEFINED arg_${required})
      message(FATAL_ERROR "${fn}: ${required} is required: tune_add_kernel(<name> "
        "SOURCE <kernel.cu> SPACE <space.toml> RECORD <record.json> ...)")
    endif()
  endforeach()
  if(TARGET warm.${name})
    message(FATAL_ERROR "${fn}: a kernel named '${name}' is already declared")
  endif()

  cmake_path(ABSOLUTE_PATH arg_SOURCE BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    NORMALIZE OUTPUT_VARIABLE source)
  cmake_path(ABSOLUTE_PATH arg_SPACE BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    NORMALIZE OUTPUT_VARIABLE space)
  cmake_path(ABSOLUTE_PATH arg_RECORD BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    NORMALIZE OUTPUT_VARIABLE record)
  if(IS_DIRECTORY "${source}")
    message(FATAL_ERROR "${fn}: SOURCE '${arg_SOURCE}' is a directory, expected a .cu file")
  endif()
  if(NOT EXISTS "${source}")
    message(FATAL_ERROR "${fn}: SOURCE '${arg_SOURCE}' does not exist (looked for '${source}')")
  endif()
  cmake_path(GET source EXTENSION LAST_ONLY source_ext)
  set(source_exts .cu)
  if(NOT source_ext IN_LIST source_exts)
    message(FATAL_ERROR "${fn}: SOURCE '${arg_SOURCE}' must be a CUDA file (${source_exts}): "
      "it is compiled to a cubin per candidate")
  endif()
  if(NOT EXISTS "${space}" OR IS_DIRECTORY "${space}")
    message(FATAL_ERROR "${fn}: SPACE '${arg_SPACE}' does not exist (looked for '${space}')")
  endif()
  if(IS_DIRECTORY "${record}")
    message(FATAL_ERROR "${fn}: RECORD '${arg_RECORD}' is a directory, expected a .json file")
  endif()
  # Two kernels writing one record would overwrite each other's winners on every tune.
  get_property(records_taken GLOBAL PROPERTY _TUNE_RECORDS)
  foreach(taken IN LISTS records_taken)
    string(REPLACE "|" ";" taken "${taken}")
    list(GET taken 0 taken_record)
    list(GET taken 1 taken_kernel)
    if(taken_record STREQUAL record)
      message(FATAL_ERROR "${fn}: RECORD '${arg_RECORD}' is already the record of kernel "
        "'${taken_kernel}': give each kernel its own record")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY _TUNE_RECORDS "${record}|${name}")
  get_property(kernels_declared GLOBAL PROPERTY _TUNE_KERNEL_LIST)
  if(NOT kernels_declared)
    # The first kernel of this configure: the list is written once every kernel is declared.
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" ID _tune_kernel_list
      CALL _tune_write_kernel_list)
  endif()
  set_property(GLOBAL APPEND PROPERTY _TUNE_KERNEL_LIST "${name}")
  # Where its record tests are added: _tune_check_testing_enabled looks there at the end.
  set_property(GLOBAL APPEND PROPERTY _TUNE_KERNEL_DIRS "${name}|${CMAKE_CURRENT_SOURCE_DIR}")

  set(harness)
  foreach(h IN LISTS arg_HARNESS)
    cmake_path(ABSOLUTE_PATH h BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE
      OUTPUT_VARIABLE h_abs)
    if(NOT EXISTS "${h_abs}")
      message(FATAL_ERROR "${fn}: HARNESS '${h}' does not exist (looked for '${h_abs}')")
    endif()
    list(APPEND harness "${h_abs}")
  endforeach()

  if(DEFINED arg_ENTRY)
    set(entry "${arg_ENTRY}")
    set(entry_from "ENTRY")
  else()
    set(entry "${name}")
    set(entry_from "the kernel name (the default ENTRY)")
  endif()
  # A template entry (`tile_gemm<{BM}, {LAYOUT}>`) is checked against the space by the tuner
  # (_tune_candidates); here only its shape.
  if(entry MATCHES "<")
    if(NOT entry MATCHES "^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)* *<.*>$")
      message(FATAL_ERROR "${fn}: ENTRY '${entry}' is not a template entry: write the template's "
        "name and its arguments with placeholders, such as 'tile_gemm<{BM}, {BN}>'")
    endif()
  elseif(NOT entry MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${fn}: ${entry_from} '${entry}' is not a C identifier: pass "
      "ENTRY <symbol> with the kernel's extern \"C\" name, or a template entry such as "
      "'tile_gemm<{BM}, {BN}>'")
  endif()

  foreach(lib IN LISTS arg_LINK_LIBRARIES)
    if(NOT TARGET "${lib}" AND lib MATCHES "^[A-Z][A-Z_]*$")
      # An upper-case word after LINK_LIBRARIES is more likely a mistyped keyword.
      message(FATAL_ERROR "${fn}: LINK_LIBRARIES '${lib}' is not a target, nor a keyword of "
        "tune_add_kernel (SOURCE, SPACE, RECORD, HARNESS, ENTRY, ARCH, LINK_LIBRARIES, "
        "COMPILE_OPTIONS, INCLUDE_DIRECTORIES, DEFINITIONS)")
    endif()
    if(NOT TARGET "${lib}")
      message(FATAL_ERROR "${fn}: LINK_LIBRARIES '${lib}' is not a target (declare it before "
        "tune_add_kernel)")
    endif()
    _tune_check_inherited_definitions("${fn}" "${lib}" "${lib}" "${lib}")
  endforeach()

  set(refused_options -arch --gpu-architecture -gencode --generate-code -code --gpu-code
    -o --output-file -c --compile -cubin --cubin -ptx --ptx -fatbin --fatbin)
  foreach(opt IN LISTS arg_COMPILE_OPTIONS)
    string(REGEX REPLACE "=.*$" "" opt_name "${opt}")
    if(opt_name IN_LIST refused_options)
      message(FATAL_ERROR "${fn}: COMPILE_OPTIONS may not choose the architecture or the "
        "output ('${opt}'): warm compiles a cubin per ARCH")
    endif()
  endforeach()

  set(includes)
  foreach(dir IN LISTS arg_INCLUDE_DIRECTORIES)
    cmake_path(ABSOLUTE_PATH dir BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE
      OUTPUT_VARIABLE dir_abs)
    list(APPEND includes "${dir_abs}")
  endforeach()

  foreach(def IN LISTS arg_DEFINITIONS)
    if(def MATCHES "^-D")
      message(FATAL_ERROR "${fn}: DEFINITIONS takes NAME or NAME=value, without -D: got '${def}'")
    endif()
    if(NOT def MATCHES "^[A-Za-z_][A-Za-z0-9_]*(=.*)?$")
      message(FATAL_ERROR "${fn}: DEFINITIONS entry '${def}' is not NAME or NAME=value")
    endif()
  endforeach()

  # --- tools, architectures and paths ----------------------------------------------------
  # The tuner before the architectures: it knows them (`tuner archs`). After the checks above,
  # so that a malformed call fails before a first configure builds the host tool.
  _tune_find_nvcc("${fn}" nvcc)
  _tune_configure_tuner("${fn}" configure_tuner)
  _tune_store_location("${fn}" "${configure_tuner}" remote_store)
  _tune_resolve_archs("${fn}" "${configure_tuner}" archs ${arg_ARCH})
  _tune_build_tuner("${fn}" tool tool_depends)

  if(DEFINED TUNE_PROJECT_ROOT AND NOT "${TUNE_PROJECT_ROOT}" STREQUAL "")
    set(project_root "${TUNE_PROJECT_ROOT}")
  else()
    set(project_root "${PROJECT_SOURCE_DIR}")
  endif()
  if(TUNE_CACHE_DIR)
    # Absolute in the manifest, as the tuner makes TUNE_CACHE_DIR from the environment: `~` is
    # $HOME (not a folder named `~`), a relative path the build tree's.
    set(cache_dir "${TUNE_CACHE_DIR}")
    if(cache_dir MATCHES "^~(/|$)" AND NOT "$ENV{HOME}" STREQUAL "")
      string(REGEX REPLACE "^~" "$ENV{HOME}" cache_dir "${cache_dir}")
    endif()
    cmake_path(ABSOLUTE_PATH cache_dir BASE_DIRECTORY "${CMAKE_BINARY_DIR}" NORMALIZE)
  else()
    set(cache_dir "${CMAKE_BINARY_DIR}/tune/cache")
  endif()
  set(kernel_dir "${CMAKE_BINARY_DIR}/tune/${name}")
  set(manifest "${kernel_dir}/manifest.json")
  set(compile_log "${CMAKE_BINARY_DIR}/tune/compile.log")

  list(LENGTH archs narchs)
  _tune_record_paths(records "${record}" "${archs}")
  set(records_json)
  foreach(arch arch_record IN ZIP_LISTS archs records)
    _tune_json(k "${arch}")
    _tune_json(v "${arch_record}")
    list(APPEND records_json "${k}: ${v}")
  endforeach()
  list(JOIN records_json ", " records_json)

  if(CMAKE_CXX_COMPILER_ID)
    set(host_compiler "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  elseif(CMAKE_CUDA_HOST_COMPILER_ID)
    set(host_compiler "${CMAKE_CUDA_HOST_COMPILER_ID} ${CMAKE_CUDA_HOST_COMPILER_VERSION}")
  else()
    set(host_compiler "")
  endif()

  # --- the space: validated now, and the candidate list for the build graph ----------------
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${space}")
  # The names header of the harness (tune::kernel::<name>::param::X), written with the list.
  set(names_dir "${kernel_dir}/include")
  _tune_candidates("${fn}" "${configure_tuner}" "${name}" "${space}" candidates "${entry}"
    "${names_dir}/tune/kernel/${name}.hpp")
  # The kernel's C++ name, as the tuner made it for the names header's namespace (the winners
  # headers use the same one): two kernels with one C++ name (`sax-py`, `sax_py`) would define
  # the same namespace, and a program including both headers would not compile.
  file(STRINGS "${names_dir}/tune/kernel/${name}.hpp" ns_line
    REGEX "^namespace tune::kernel::[A-Za-z0-9_]+ {$" LIMIT_COUNT 1)
  string(REGEX REPLACE "^namespace tune::kernel::([A-Za-z0-9_]+) {$" "\\1" cxx_name "${ns_line}")
  get_property(cxx_taken GLOBAL PROPERTY _TUNE_KERNEL_CXX_NAME_${cxx_name})
  if(cxx_taken)
    message(FATAL_ERROR "${fn}: kernels '${cxx_taken}' and '${name}' have one C++ name, "
      "'${cxx_name}' (the namespaces tune::kernel::${cxx_name} and "
      "tune_winners::${cxx_name} of their generated headers): rename one of them")
  endif()
  set_property(GLOBAL PROPERTY _TUNE_KERNEL_CXX_NAME_${cxx_name} "${name}")
  set_property(GLOBAL PROPERTY _TUNE_KERNEL_${name}_cxx_name "${cxx_name}")
  # For other targets that compile the harness (a build check, a test): link tune_names.<name>.
  add_library(tune_names.${name} INTERFACE)
  target_include_directories(tune_names.${name} INTERFACE "$<BUILD_INTERFACE:${names_dir}>")
  list(LENGTH candidates ncandidates)

  # --- the manifest ----------------------------------------------------------------------
  # Inherited include directories and definitions are generator expressions (usage
  # requirements may hold $<BUILD_INTERFACE:...>), so the manifest is written at generate time.
  # Our own values are escaped for JSON and for the generator expression they sit in; inherited
  # values are placed in JSON strings as they are: a definition holding '"' or '\' anywhere in
  # the LINK_LIBRARIES graph is refused above (_tune_check_inherited_definitions).
  foreach(kind inc def)
    set(${kind}_items)
  endforeach()
  foreach(item IN LISTS includes)
    _tune_json_genex_literal(item "${item}")
    list(APPEND inc_items "${item}")
  endforeach()
  foreach(item IN LISTS arg_DEFINITIONS)
    _tune_json_genex_literal(item "${item}")
    list(APPEND def_items "${item}")
  endforeach()
  foreach(lib IN LISTS arg_LINK_LIBRARIES)
    list(APPEND inc_items "$<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>")
    list(APPEND def_items "$<TARGET_PROPERTY:${lib},INTERFACE_COMPILE_DEFINITIONS>")
  endforeach()
  foreach(kind inc def)
    set(list_genex "$<FILTER:$<REMOVE_DUPLICATES:${${kind}_items}>,EXCLUDE,^$>")
    set(${kind}_json
      "[$<$<NOT:$<STREQUAL:${list_genex},>>:\"$<JOIN:${list_genex},\"$<COMMA> \">\">]")
  endforeach()

  _tune_json(j_name "${name}")
  _tune_json(j_entry "${entry}")
  _tune_json(j_root "${project_root}")
  _tune_json(j_build "${CMAKE_BINARY_DIR}")
  _tune_json(j_source "${source}")
  _tune_json(j_space "${space}")
  _tune_json_array(j_archs ${archs})
  _tune_json_array(j_options ${arg_COMPILE_OPTIONS})
  _tune_json(j_nvcc "${nvcc}")
  _tune_json(j_host "${host_compiler}")
  _tune_json(j_cache "${cache_dir}")
  _tune_json(j_logdir "${kernel_dir}")
  _tune_json(j_compile_log "${compile_log}")
  _tune_json_array(j_harness ${harness})
  _tune_json(j_tool "${tool}")
  _tune_json(j_remote "${remote_store}")
  # What CMake puts in front of nvcc runs warm's and compile-ahead's compiles too (ccache,
  # sccache, icecc, srun ...). CMake sets the variable from the environment variable of the same
  # name only where the CUDA language is enabled; a project without it gets the environment's.
  if(DEFINED CMAKE_CUDA_COMPILER_LAUNCHER)
    set(launcher "${CMAKE_CUDA_COMPILER_LAUNCHER}")
  else()
    set(launcher "$ENV{CMAKE_CUDA_COMPILER_LAUNCHER}")
  endif()
  _tune_json_array(j_launcher ${launcher})
  _tune_add_runner("${name}" j_runner "${names_dir}" ${harness})
  # The runner (cmake/TuneRunner.cmake) is named through $<TARGET_FILE>, when there is one.
  # One manifest serves every configuration of a multi-config generator: the runner's path is
  # the same in all of them, and the generator expressions of the inherited usage requirements
  # are evaluated for one configuration (_tune_manifest_config), so that a `$<CONFIG>` in a
  # linked target's definitions cannot make file(GENERATE) write the file twice.
  _tune_manifest_condition(condition)
  file(GENERATE OUTPUT "${manifest}" CONTENT "{
  \"schema_version\": 1,
  \"kernel\": ${j_name},
  \"entry\": ${j_entry},
  \"project_root\": ${j_root},
  \"build_dir\": ${j_build},
  \"sources\": [${j_source}],
  \"space\": ${j_space},
  \"archs\": ${j_archs},
  \"records\": {${records_json}},
  \"include_directories\": ${inc_json},
  \"definitions\": ${def_json},
  \"compile_options\": ${j_options},
  \"nvcc\": ${j_nvcc},
  \"compiler_launcher\": ${j_launcher},
  \"host_compiler\": ${j_host},
  \"cache_dir\": ${j_cache},
  \"log_dir\": ${j_logdir},
  \"compile_log\": ${j_compile_log},
  \"harness\": ${j_harness},
  \"runner\": ${j_runner},
  \"tuner\": ${j_tool},
  \"remote_store\": ${j_remote}
}
" ${condition})

  # --- warm: one step per candidate and architecture --------------------------------------
  _tune_global_targets("${tool}" "${tool_depends}")
  set(all_stamps)
  foreach(arch IN LISTS archs)
    set(stamps)
    foreach(id IN LISTS candidates)
      string(SHA256 h "${id}")
      string(SUBSTRING "${h}" 0 16 h)
      set(stamp "${kernel_dir}/${arch}/warm/c-${h}.stamp")
      add_custom_command(
        OUTPUT "${stamp}"
        COMMAND "${tool}" warm --manifest "${manifest}" --arch "${arch}" --config "${id}"
                --stamp "${stamp}" --depfile "${stamp}.d"
        DEPENDS "${manifest}" "${space}" "${source}" ${tool_depends}
        DEPFILE "${stamp}.d"
        JOB_POOL tune_warm
        COMMENT "warm ${name} ${arch} ${id}"
        VERBATIM)
      list(APPEND stamps "${stamp}")
    endforeach()
    add_custom_target(warm.${name}.${arch} DEPENDS ${stamps})
    list(APPEND all_stamps "${stamps}")
  endforeach()
  # After the steps, one line per architecture says what they did (tuner warm --summary).
  add_custom_target(warm.${name}
    COMMAND "${tool}" warm --manifest "${manifest}" --summary
    VERBATIM)
  foreach(arch IN LISTS archs)
    add_dependencies(warm.${name} warm.${name}.${arch})
  endforeach()
  _tune_add_tool_dependencies(warm.${name} "${tool_depends}")
  add_dependencies(warm warm.${name})

  # --- tune: the staleness check, then the runner (never depends on warm) -------------------
  _tune_budget_args(budget_args)
  add_custom_target(tune.${name}
    COMMAND "${tool}" tune --manifest "${manifest}" --cmake "${CMAKE_COMMAND}"
            --compile-jobs "${TUNE_WARM_JOBS}" ${budget_args}
    COMMENT "Checking the record of ${name}"
    USES_TERMINAL VERBATIM)
  _tune_add_tool_dependencies(tune.${name} "${tool_depends}")
  if(TARGET ${name}.runner)
    add_dependencies(tune.${name} ${name}.runner)  # host code only: compiles no kernel
    add_dependencies(tune ${name}.runner)
    add_dependencies(tune-runners ${name}.runner)
  endif()

  # --- record tests ----------------------------------------------------------------------
  foreach(arch IN LISTS archs)
    if(narchs GREATER 1)
      set(test record.${name}.${arch})
    else()
      set(test record.${name})
    endif()
    add_test(NAME ${test} COMMAND "${tool}" verify --manifest "${manifest}" --arch "${arch}")
    set_tests_properties(${test} PROPERTIES LABELS records)
  endforeach()

  _tune_header_remember("${name}" "${manifest}" "${space}" "${source}" "${tool}" "${tool_depends}"
    "${records}")  # for tune_generate_header (TuneHeader.cmake)
  list(JOIN archs ", " archs_text)
  message(STATUS "tune: ${name}: ${ncandidates} candidates for ${archs_text}")
endfunction()

endblock()  # SCOPE_FOR POLICIES
