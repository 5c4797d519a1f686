#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/build/elf_symbols.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/core.h>

namespace tune {

namespace {

// Little-endian reads at checked offsets: `fits` first, then `u16`/`u32`/`u64`.
struct Image {
  std::string_view bytes;
  bool fits(std::uint64_t offset, std::uint64_t size) const {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  }
  std::uint64_t read(std::uint64_t offset, int size) const {
    std::uint64_t v = 0;
    for (int i = size - 1; i >= 0; --i)
      v = (v << 8) | static_cast<unsigned char>(bytes[offset + static_cast<std::uint64_t>(i)]);
    return v;
  }
};

constexpr std::uint32_t sht_symtab = 2;
constexpr unsigned stt_func = 2;
constexpr std::uint64_t ehdr_size = 64, shdr_size = 64, sym_size = 24;

}  // namespace

result<std::vector<std::string>> elf_function_symbols(std::string_view bytes,
                                                      const std::string& path) {
  const Image img{bytes};
  auto bad = [&](std::string_view what) {
    return fail(path, 0, 0, fmt::format("not a readable cubin: {}", what));
  };
  if (!img.fits(0, ehdr_size) || bytes.substr(0, 4) !=
                                     "\x7f"
                                     "ELF")
    return bad("no ELF header");
  if (bytes[4] != 2 || bytes[5] != 1) return bad("not a little-endian 64-bit ELF file");
  const std::uint64_t shoff = img.read(0x28, 8);
  const std::uint64_t shentsize = img.read(0x3A, 2);
  const std::uint64_t shnum = img.read(0x3C, 2);
  if (shentsize < shdr_size || !img.fits(shoff, shentsize * shnum))
    return bad("section headers outside the file");
  std::vector<std::string> out;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t sh = shoff + i * shentsize;
    if (img.read(sh + 4, 4) != sht_symtab) continue;
    const std::uint64_t offset = img.read(sh + 0x18, 8), size = img.read(sh + 0x20, 8);
    const std::uint64_t link = img.read(sh + 0x28, 4);
    const std::uint64_t entsize = img.read(sh + 0x38, 8);
    if (!img.fits(offset, size) || link >= shnum || (entsize != 0 && entsize < sym_size))
      return bad("symbol table outside the file");
    const std::uint64_t str = shoff + link * shentsize;
    const std::uint64_t str_offset = img.read(str + 0x18, 8), str_size = img.read(str + 0x20, 8);
    if (!img.fits(str_offset, str_size)) return bad("string table outside the file");
    const std::uint64_t step = entsize == 0 ? sym_size : entsize;
    for (std::uint64_t s = offset; s + sym_size <= offset + size; s += step) {
      const std::uint64_t name = img.read(s, 4);
      const unsigned info = static_cast<unsigned char>(bytes[s + 4]);
      const std::uint64_t shndx = img.read(s + 6, 2);
      if ((info & 0xF) != stt_func || shndx == 0) continue;
      if (name >= str_size) return bad("a symbol name outside the string table");
      std::string_view names = bytes.substr(str_offset + name, str_size - name);
      out.emplace_back(names.substr(0, names.find('\0')));
    }
  }
  return out;
}

result<std::vector<std::string>> elf_function_symbols_of_file(const std::filesystem::path& path) {
  if (auto d = not_regular_problem(path)) return fail(*d);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path.string(), 0, 0, "cannot open the cubin");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return elf_function_symbols(bytes, path.string());
}

}  // namespace tune
