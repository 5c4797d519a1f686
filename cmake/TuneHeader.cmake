#[=======================================================================[.rst:
TuneHeader
----------

Included by ``Tune.cmake``.

.. command:: tune_generate_header

  Generate a C++17 header with a kernel's winning configs::

    tune_generate_header(<name> OUTPUT <file.hpp> [NAMESPACE <ns>] [TARGETS <target>...]
                         [INCLUDES <header>...] [TYPE_PARAMS <param>...])

  ``<name>``
    A kernel declared earlier with :command:`tune_add_kernel`; one header per kernel (the
    target ``tune_header.<name>``).

  ``OUTPUT <file.hpp>``
    The header to write, in the build tree (a relative path is relative to the current binary
    directory). Targets include it by its file name (``#include "gemm_winners.hpp"``).

  ``NAMESPACE <ns>``
    The header's namespace, identifiers joined by ``::``; default ``tune_winners::<name>``
    (the name with other characters than letters, digits and ``_`` as ``_``).

  ``TARGETS <target>...``
    Targets (defined before this call) that use the header: each gets the header's folder as a
    private include directory and a dependency on its generation, so that the header exists
    before they compile. A target defined later links the INTERFACE library
    ``tune_winners.<name>`` instead (``target_link_libraries(app PRIVATE
    tune_winners.gemm)``), which carries the same two.

  ``INCLUDES <header>...``
    Headers the generated header includes first (``"layouts.hpp"``, or ``<lib/layouts.hpp>``
    as written): they declare what the space's ``[entry.map.<PARAM>]`` text names. A string
    param with such a map is that C++ text in the header (``static constexpr auto LAYOUT =
    Layout::Col;``), so that a template kernel takes a winner's members as its template
    arguments (docs/embed.md "The winners header of a template kernel").

  ``TYPE_PARAMS <param>...``
    Mapped params whose text is a type (``float``, ``__half``): ``using DTYPE = float;``.

  Unknown arguments, a keyword without a value, a missing ``OUTPUT``, an undeclared kernel, a
  second header for one kernel, a ``NAMESPACE`` that is not a namespace name and a ``TARGETS``
  entry that is not a target (yet) stop the configure with a message that starts with
  ``tune_generate_header(<name>):``.

  The header (``tuner header``) holds, per architecture and bucket, the winning config as
  ``static constexpr`` members of ``Winner<Arch::sm_90, Bucket::...>``, an ``enum class
  Bucket``, a ``Shape`` struct with the buckets' shape names, ``select(const Shape&)`` built
  from the buckets' ``when`` predicates (first match; ``std::nullopt`` for a shape no bucket
  takes) and ``dispatch(int sm, Bucket, f)``, which calls ``f`` with the winner of that
  architecture.

  It is regenerated when a record, the space, the kernel's source, a header the kernel's cache
  keys read (a depfile), nvcc or the manifest changes.
  A stale record still generates, with the verification's reasons printed as warnings (the
  ``record.<name>`` test still fails); a missing record falls back to the space's first
  ``require`` config, with a warning. A comment in the header says where each value came from.
#]=======================================================================]
include_guard(GLOBAL)
# Everything below runs under tune's policy settings, not the calling project's: CMake records
# the policies in effect where a function is defined and applies them whenever it is called.
block(SCOPE_FOR POLICIES)
cmake_policy(VERSION 3.25...4.4)

# _tune_header_remember(<name> <manifest> <space> <source> <tool> <tool-depends> <records>):
# called by tune_add_kernel; keeps what the header step needs. <records> is the list of record
# files, one per architecture (_tune_record_paths in TuneKernel.cmake).
# Sets `out` to the records of `records` that exist, the Ninja dependencies of a step that reads
# them. A record that does not exist yet cannot be a dependency (nothing makes it); its folder
# (or the nearest existing parent) is watched instead, so that creating the record re-runs the
# configure, which then depends on it.
function(_tune_record_depends records out)
  set(depends)
  foreach(r IN LISTS records)
    if(EXISTS "${r}")
      list(APPEND depends "${r}")
    else()
      cmake_path(GET r PARENT_PATH dir)
      while(NOT EXISTS "${dir}")
        cmake_path(GET dir PARENT_PATH dir)
      endwhile()
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${dir}")
    endif()
  endforeach()
  set(${out} "${depends}" PARENT_SCOPE)
endfunction()

function(_tune_header_remember name manifest space source tool tool_depends records)
  foreach(field manifest space source tool tool_depends records)
    set_property(GLOBAL PROPERTY _TUNE_KERNEL_${name}_${field} "${${field}}")
  endforeach()
  set_property(GLOBAL PROPERTY _TUNE_KERNEL_${name}_declared ON)
  set_property(GLOBAL APPEND PROPERTY _TUNE_KERNELS "${name}")
endfunction()

# Sets manifest, space, source, tool, tool_depends and records in the caller's scope to what
# tune_add_kernel remembered of kernel `name`; stops the configure, naming the kernels that are
# declared, when it is not (`caller`: the function to call after tune_add_kernel).
function(_tune_recall_kernel fn name caller)
  get_property(declared GLOBAL PROPERTY _TUNE_KERNEL_${name}_declared)
  if(NOT declared)
    get_property(kernels GLOBAL PROPERTY _TUNE_KERNELS)
    if(kernels)
      list(JOIN kernels ", " known)
      set(known "declared: ${known}")
    else()
      set(known "none is declared yet")
    endif()
    message(FATAL_ERROR "${fn}: no kernel '${name}' (${known}): declare it with "
      "tune_add_kernel before ${caller}")
  endif()
  foreach(field manifest space source tool tool_depends records)
    get_property(value GLOBAL PROPERTY _TUNE_KERNEL_${name}_${field})
    set(${field} "${value}" PARENT_SCOPE)
  endforeach()
endfunction()

function(tune_generate_header name)
  set(fn "tune_generate_header(${name})")
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "OUTPUT;NAMESPACE" "TARGETS;INCLUDES;TYPE_PARAMS")

  # --- arguments, checked as tune_add_kernel checks its own ----------------------------------
  if(arg_UNPARSED_ARGUMENTS)
    list(JOIN arg_UNPARSED_ARGUMENTS " " unknown)
    message(FATAL_ERROR "${fn}: unknown arguments: ${unknown} (expected OUTPUT, NAMESPACE, "
      "TARGETS, INCLUDES, TYPE_PARAMS)")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    list(JOIN arg_KEYWORDS_MISSING_VALUES ", " missing)
    message(FATAL_ERROR "${fn}: ${missing} given without a value")
  endif()
  if(NOT name MATCHES "^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")
    message(FATAL_ERROR "tune_generate_header: kernel name '${name}' may hold only letters, "
      "digits, '_', '.' and '-', and may not start with '.'")
  endif()
  if(NOT DEFINED arg_OUTPUT)
    message(FATAL_ERROR "${fn}: OUTPUT is required: tune_generate_header(<name> "
      "OUTPUT <file.hpp> [NAMESPACE <ns>] [TARGETS <target>...])")
  endif()
  _tune_recall_kernel("${fn}" "${name}" tune_generate_header)
  if(TARGET tune_header.${name})
    message(FATAL_ERROR "${fn}: the header of '${name}' is already generated (target "
      "tune_header.${name}): call tune_generate_header once per kernel")
  endif()
  # The header opens `namespace <ns> {`, so <ns> must be a (nested) namespace name.
  if(DEFINED arg_NAMESPACE
     AND NOT arg_NAMESPACE MATCHES "^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
    message(FATAL_ERROR "${fn}: NAMESPACE '${arg_NAMESPACE}' is not a C++ namespace name "
      "(identifiers joined by '::', such as 'app::winners')")
  endif()
  foreach(t IN LISTS arg_TARGETS)
    if(NOT TARGET "${t}")
      message(FATAL_ERROR "${fn}: TARGETS '${t}' is not a target: define it before "
        "tune_generate_header, or link the library tune_winners.${name} where you define it")
    endif()
  endforeach()
  cmake_path(ABSOLUTE_PATH arg_OUTPUT BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE
    OUTPUT_VARIABLE output)
  if(IS_DIRECTORY "${output}")
    message(FATAL_ERROR "${fn}: OUTPUT '${arg_OUTPUT}' is a directory, expected a header file "
      "(looked at '${output}')")
  endif()

  # --- the header step ----------------------------------------------------------------------
  _tune_record_depends("${records}" depends)
  set(ns_args)
  if(DEFINED arg_NAMESPACE)
    set(ns_args --namespace "${arg_NAMESPACE}")
  endif()
  foreach(inc IN LISTS arg_INCLUDES)
    list(APPEND ns_args --include "${inc}")
  endforeach()
  foreach(p IN LISTS arg_TYPE_PARAMS)
    list(APPEND ns_args --type-param "${p}")
  endforeach()
  # The depfile names what the verification of the records read (the headers the cache keys
  # read, nvcc): after a header edit the header says the record is stale, as a clean build's.
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${tool}" header --manifest "${manifest}" --output "${output}"
            --depfile "${output}.d" ${ns_args}
    DEPENDS ${depends} "${space}" "${source}" "${manifest}" ${tool_depends}
    DEPFILE "${output}.d"
    COMMENT "Generating the winners header of ${name}"
    VERBATIM)
  add_custom_target(tune_header.${name} DEPENDS "${output}")

  # --- its users: the folder to include and the step to wait for --------------------------
  cmake_path(GET output PARENT_PATH output_dir)
  add_library(tune_winners.${name} INTERFACE)
  target_include_directories(tune_winners.${name} INTERFACE "$<BUILD_INTERFACE:${output_dir}>")
  add_dependencies(tune_winners.${name} tune_header.${name})
  foreach(t IN LISTS arg_TARGETS)
    target_include_directories(${t} PRIVATE "${output_dir}")
    add_dependencies(${t} tune_header.${name})
  endforeach()
endfunction()

endblock()  # SCOPE_FOR POLICIES
