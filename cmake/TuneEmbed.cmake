#[=======================================================================[.rst:
TuneEmbed
---------

Included by ``Tune.cmake``.

.. command:: tune_embed_winners

  Link the committed winners' cubins into a target, with a C++ API that loads them::

    tune_embed_winners(<target> KERNELS <name>... [NAMESPACE <ns>]
                       [FALLBACK error|first_incumbent])

  ``<target>``
    An executable or library defined earlier. It gets one generated source per kernel (the
    images as data), the generated headers' folder as a private include directory and
    ``tune::runtime``.

  ``KERNELS <name>...``
    Kernels declared earlier with :command:`tune_add_kernel`. Per kernel the header
    ``<name>_embedded.hpp`` holds, in namespace ``<ns>::<name>``, everything of the winners
    header (``Bucket``, ``Shape``, ``select``, ``Winner``, ``dispatch``) and ``image(b)``,
    ``function(b)``, ``function(shape)`` and ``bucket_for(shape)``: the winner of the current
    device's architecture, its module loaded once per context with ``cuModuleLoadData``.

  ``NAMESPACE <ns>``
    The kernel's namespace is ``<ns>::<name>`` (the name as a C++ identifier, as
    :command:`tune_generate_header` spells it: ``sax-py`` is ``sax_py``, a name that is a macro
    such as ``linux`` gets a ``_``). Default: ``tune_winners::<target>`` (the
    target's name as an identifier), so ``tune_embed_winners(mylib KERNELS scale)`` declares
    ``tune_winners::mylib::scale``, apart from the library's own ``mylib::scale`` and from
    :command:`tune_generate_header`'s ``tune_winners::scale``.

  ``FALLBACK``
    What ``function`` does on a device whose architecture has no record: ``error`` (default,
    a ``tune::error`` naming the device's and the recorded architectures) or
    ``first_incumbent`` (the first recorded architecture's image of the space's first
    ``require`` config; it loads where that cubin runs, a later GPU of the same major version).

  At build time ``tuner embed`` verifies each record as ``tuner verify`` does: a stale record
  stops the build with the verification's reasons, unless ``TUNE_ALLOW_STALE`` is on (then
  they are warnings); a missing record stops it naming the record and the command that makes
  it. Each winner is found in the kernel cache by its cache key (compiled as warm would when it
  is missing) and its bytes checked against the entry's SHA-256 (docs/embed.md). The step runs
  again when anything it read changes (a depfile): the records, the space, the manifest, the
  sources and every header their cache keys read, the cache entries and cubins, nvcc; so an
  incremental build after a header edit fails on the stale record as a clean build does.
#]=======================================================================]
include_guard(GLOBAL)
block(SCOPE_FOR POLICIES)
cmake_policy(VERSION 3.25...4.4)

option(TUNE_ALLOW_STALE "tune_embed_winners: embed a stale record's winners with warnings" OFF)

function(tune_embed_winners target)
  set(fn "tune_embed_winners(${target})")
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAMESPACE;FALLBACK" "KERNELS")
  if(arg_UNPARSED_ARGUMENTS)
    list(JOIN arg_UNPARSED_ARGUMENTS " " unknown)
    message(FATAL_ERROR "${fn}: unknown arguments: ${unknown} (expected KERNELS, NAMESPACE, "
      "FALLBACK)")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    list(JOIN arg_KEYWORDS_MISSING_VALUES ", " missing)
    message(FATAL_ERROR "${fn}: ${missing} given without a value")
  endif()
  if(NOT TARGET "${target}")
    message(FATAL_ERROR "${fn}: no target '${target}': define it (add_executable or "
      "add_library) before tune_embed_winners")
  endif()
  if(NOT arg_KERNELS)
    message(FATAL_ERROR "${fn}: KERNELS is required: tune_embed_winners(<target> KERNELS "
      "<name>...)")
  endif()
  if(NOT DEFINED arg_FALLBACK)
    set(arg_FALLBACK error)
  elseif(NOT arg_FALLBACK MATCHES "^(error|first_incumbent)$")
    message(FATAL_ERROR "${fn}: FALLBACK '${arg_FALLBACK}' is not 'error' or "
      "'first_incumbent'")
  endif()
  if(NOT DEFINED arg_NAMESPACE)
    # Under tune's own namespace: a library's namespace is usually its target's name, and its
    # API functions are often named like its kernels (mylib::scale).
    string(MAKE_C_IDENTIFIER "${target}" arg_NAMESPACE)
    set(arg_NAMESPACE "tune_winners::${arg_NAMESPACE}")
  elseif(NOT arg_NAMESPACE MATCHES "^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
    message(FATAL_ERROR "${fn}: NAMESPACE '${arg_NAMESPACE}' is not a C++ namespace name "
      "(identifiers joined by '::', such as 'app::winners')")
  endif()
  if(NOT TARGET tune::runtime)
    message(FATAL_ERROR "${fn}: tune::runtime is not available (tune built without its CUDA "
      "backend?)")
  endif()
  set(stale_args)
  if(TUNE_ALLOW_STALE)
    set(stale_args --allow-stale)
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/tune_embed/${target}")
  foreach(name IN LISTS arg_KERNELS)
    _tune_recall_kernel("${fn}" "${name}" tune_embed_winners)
    # The kernel's C++ name, as the tuner made it (tune_add_kernel): `sax-py` is `sax_py`, and
    # `linux` is `linux_` (a macro under -std=gnu++17).
    get_property(cxx_name GLOBAL PROPERTY _TUNE_KERNEL_${name}_cxx_name)
    # A record that does not exist yet is no dependency (tuner embed then says how to make it).
    _tune_record_depends("${records}" depends)
    set(header "${dir}/${name}_embedded.hpp")
    set(cpp "${dir}/${name}_embedded.cpp")
    set(digests "${dir}/${name}_embedded.json")
    # The depfile names everything embed read: the headers the winners' cache keys read, the
    # cache entries and cubins, nvcc. An edit of any of them runs the step again, as a clean
    # build would (CMP0116 is NEW here; the paths are absolute, so no generator rewrites them).
    add_custom_command(
      OUTPUT "${header}" "${cpp}" "${digests}"
      COMMAND "${tool}" embed --manifest "${manifest}" --header "${header}" --source "${cpp}"
              --digests "${digests}" --namespace "${arg_NAMESPACE}::${cxx_name}"
              --fallback "${arg_FALLBACK}" --depfile "${dir}/${name}_embedded.d" ${stale_args}
      DEPENDS ${depends} "${space}" "${source}" "${manifest}" ${tool_depends}
      DEPFILE "${dir}/${name}_embedded.d"
      COMMENT "Embedding the winners of ${name} into ${target}"
      VERBATIM)
    target_sources(${target} PRIVATE "${cpp}" "${header}")
  endforeach()
  target_include_directories(${target} PRIVATE "${dir}")
  target_link_libraries(${target} PRIVATE tune::runtime)
endfunction()

endblock()  # SCOPE_FOR POLICIES
