// The function symbols a compiled cubin defines, read from its ELF symbol table.
//
// warm uses it to catch an ENTRY that the source does not define: nvcc compiles such a source
// to a valid cubin, so without this check every candidate would be `ok` in the kernel cache and
// only the runner, on the GPU, would fail to find the function. A cubin is a little-endian
// ELF64 file; only the section headers, the symbol table and its string table are read, every
// offset checked against the file's size.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/base/result.hpp>

namespace tune {

/// The names of the defined function symbols (STT_FUNC, section index not 0) of the ELF64
/// image `bytes`, in table order. `path` labels diagnostics: not an ELF64 little-endian file,
/// or a header, section or symbol that points outside the image.
result<std::vector<std::string>> elf_function_symbols(std::string_view bytes,
                                                      const std::string& path);

/// As above, from the file at `path` (a diagnostic when it cannot be read).
result<std::vector<std::string>> elf_function_symbols_of_file(const std::filesystem::path& path);

}  // namespace tune
