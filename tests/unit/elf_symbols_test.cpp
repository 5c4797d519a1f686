// The cubin's function symbols (tuner/core/build/elf_symbols.hpp) and warm's use of them: a cubin
// that does not define the kernel's ENTRY is stored as a failed candidate, with the reason.
#include <tuner/core/build/elf_symbols.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <tuner/core/build/kernel_cache.hpp>
#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

void put(std::string& b, std::size_t at, std::uint64_t v, int size) {
  if (b.size() < at + static_cast<std::size_t>(size)) b.resize(at + static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i)
    b[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

struct Sym {
  std::string name;
  unsigned type;  // 2 = function, 1 = object
  std::uint16_t shndx;
};

// A minimal ELF64 little-endian image: a null section, .symtab and .strtab, as a cubin has them
// (among many more).
std::string elf_with(const std::vector<Sym>& syms) {
  std::string strtab(1, '\0');
  std::string symtab(24, '\0');  // the null symbol
  for (const Sym& s : syms) {
    std::string e(24, '\0');
    put(e, 0, strtab.size(), 4);
    e[4] = static_cast<char>(0x10 | s.type);  // global binding
    put(e, 6, s.shndx, 2);
    symtab += e;
    strtab += s.name + '\0';
  }
  std::string b(64, '\0');
  b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F', b[4] = 2, b[5] = 1, b[6] = 1;
  const std::size_t sym_at = 64, str_at = sym_at + symtab.size();
  const std::size_t sh_at = str_at + strtab.size();
  b += symtab + strtab;
  put(b, 0x28, sh_at, 8);
  put(b, 0x3A, 64, 2);
  put(b, 0x3C, 3, 2);
  std::string sh(3 * 64, '\0');
  put(sh, 64 + 4, 2, 4);  // SHT_SYMTAB
  put(sh, 64 + 0x18, sym_at, 8);
  put(sh, 64 + 0x20, symtab.size(), 8);
  put(sh, 64 + 0x28, 2, 4);  // its strings: section 2
  put(sh, 64 + 0x38, 24, 8);
  put(sh, 128 + 4, 3, 4);  // SHT_STRTAB
  put(sh, 128 + 0x18, str_at, 8);
  put(sh, 128 + 0x20, strtab.size(), 8);
  return b + sh;
}

TEST(ElfSymbolsTest, ListsTheDefinedFunctions) {
  const std::string img = elf_with({{"scale", 2, 1}, {"scale_tile", 1, 1}, {"printf", 2, 0}});
  auto functions = elf_function_symbols(img, "k.cubin");
  ASSERT_TRUE(functions) << functions.error().str();
  EXPECT_EQ(*functions, std::vector<std::string>{"scale"});
}

TEST(ElfSymbolsTest, RefusesWhatIsNotAnElfImageWithoutReadingOutsideIt) {
  EXPECT_EQ(elf_function_symbols("BLOCK=128", "k.cubin").error().str(),
            "k.cubin: error: not a readable cubin: no ELF header");
  const std::string img = elf_with({{"scale", 2, 1}});
  // Every cut of the image either reads or is refused; none reads past its end (ASan checks).
  for (std::size_t n = 0; n < img.size(); ++n)
    (void)elf_function_symbols(std::string_view(img).substr(0, n), "k.cubin");
  std::string bad = img;
  put(bad, 0x28, 1ULL << 62, 8);
  EXPECT_EQ(elf_function_symbols(bad, "k.cubin").error().message,
            "not a readable cubin: section headers outside the file");
}

TEST(ElfSymbolsTest, AWarmedCubinWithoutTheEntryIsAFailedCandidate) {
  const fs::path dir = test::fresh_test_dir("ElfSymbolsTest");
  const fs::path cubin = dir / "made.cubin";
  std::ofstream(cubin, std::ios::binary) << elf_with({{"scael", 2, 1}, {"helper", 2, 1}});
  const fs::path script = dir / "fake-nvcc.sh";
  std::ofstream(script) << "#!/bin/sh\ncp '" << cubin.string() << "' \"$1\"\n";
  fs::permissions(script, fs::perms::owner_all);
  CompileRequest r;
  r.key = "k1:00";
  r.arch = "sm_90";
  r.config_id = "BLOCK=128";
  r.entry = "scale";
  r.command = [script](const fs::path& out) {
    return std::vector<std::string>{"/bin/sh", script.string(), out.string()};
  };
  const KernelCache cache(dir / "cache");
  CompileOutcome got = compile_into_cache(cache, r, dir / "compile.log");
  EXPECT_EQ(got.entry.status, CacheStatus::failed);
  EXPECT_EQ(got.entry.reason,
            "the cubin defines no function 'scale' (the kernel's ENTRY), only 'scael', "
            "'helper', did you mean 'scael'?; declare it extern \"C\" __global__ in the "
            "source, or pass ENTRY <symbol>");
  EXPECT_FALSE(fs::exists(cache.cubin_path(r.key)));

  r.key = "k1:01";
  r.entry = "scael";
  EXPECT_EQ(compile_into_cache(cache, r, dir / "compile.log").entry.status, CacheStatus::ok);
}

}  // namespace
}  // namespace tune
