// Template entries (tuner/core/space/entry_template.hpp): the space's [entry] table, placeholders,
// maps, the generated unit, the symbol choice and the cache key.
#include <tuner/core/build/kernel_entry.hpp>
#include <tuner/core/space/entry_template.hpp>

#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

const char* space_text = R"(schema = 1
kernel = "tile"
[params]
BM = [16, 32]
LAYOUT = ["row", "col"]

[entry]
template = "tile_gemm<{BM}, {LAYOUT}>"

[entry.map.LAYOUT]
row = "Layout::Row"
col = "Layout::Col"
)";

Space parse(const std::string& text) {
  result<Space> s = Space::parse(text, "tile.toml");
  EXPECT_TRUE(s) << (s ? "" : s.error().str());
  return std::move(*s);
}

Config config(std::int64_t bm, const std::string& layout) {
  return Config{{"BM", ParamValue(bm)}, {"LAYOUT", ParamValue(layout)}};
}

TEST(EntryTemplate, SpaceDeclaresTemplateAndMap) {
  Space s = parse(space_text);
  ASSERT_TRUE(s.entry_template());
  EXPECT_EQ(*s.entry_template(), "tile_gemm<{BM}, {LAYOUT}>");
  EXPECT_EQ(s.entry_maps().at("LAYOUT").at("col"), "Layout::Col");
  result<EntryTemplate> t = parse_entry_template(*s.entry_template(), s);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->name, "tile_gemm");
  EXPECT_EQ(t->instantiate(config(32, "col")), "tile_gemm<32, Layout::Col>");
  const std::string unit = t->unit_text(config(16, "row"), "kernels/tile.cu");
  EXPECT_NE(unit.find("#include \"kernels/tile.cu\"\n"), std::string::npos);
  EXPECT_NE(unit.find("&tile_gemm<16, Layout::Row>"), std::string::npos);
}

TEST(EntryTemplate, EntryChangesTheSpaceHashOnlyWhenDeclared) {
  const std::string plain = "schema = 1\nkernel = \"tile\"\n[params]\nBM = [16, 32]\n";
  EXPECT_NE(parse(plain).space_hash(),
            parse(plain + "[entry]\ntemplate = \"k<{BM}>\"\n").space_hash());
}

TEST(EntryTemplate, PlaceholderNamingNoParamIsAnErrorAtItsColumn) {
  std::string text = space_text;
  text.replace(text.find("{BM}"), 4, "{BX}");
  result<Space> s = Space::parse(text, "tile.toml");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().path, "tile.toml");
  EXPECT_EQ(s.error().line, 8);
  EXPECT_EQ(s.error().column, 24);
  EXPECT_NE(s.error().message.find("placeholder '{BX}'"), std::string::npos);
  EXPECT_NE(s.error().message.find("did you mean 'BM'?"), std::string::npos);
}

TEST(EntryTemplate, MapMissingAValueNamesItAndTheFix) {
  std::string text = space_text;
  text.erase(text.find("col = \"Layout::Col\"\n"));
  result<Space> s = Space::parse(text, "tile.toml");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().line, 10);
  EXPECT_EQ(s.error().message,
            "[entry.map.LAYOUT] has no C++ text for value 'col' of param 'LAYOUT': add col = "
            "\"<C++ text>\" to it");
}

TEST(EntryTemplate, MapOfAnUnknownParam) {
  std::string text = space_text;
  text.replace(text.find("[entry.map.LAYOUT]"), 18, "[entry.map.LAYOT]");
  result<Space> s = Space::parse(text, "tile.toml");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("did you mean 'LAYOUT'?"), std::string::npos);
}

TEST(EntryTemplate, BadShapes) {
  Space s = parse(space_text);
  EXPECT_FALSE(parse_entry_template("<{BM}>", s));
  EXPECT_FALSE(parse_entry_template("tile_gemm", s));
  result<EntryTemplate> unclosed = parse_entry_template("k<{BM>", s);
  ASSERT_FALSE(unclosed);
  EXPECT_EQ(unclosed.error().column, 3);
}

TEST(EntryTemplate, MangledPrefixAndSymbolChoice) {
  Space s = parse(space_text);
  EntryTemplate t = *parse_entry_template("tile_gemm<{BM}, {LAYOUT}>", s);
  EXPECT_EQ(t.mangled_prefix(), "_Z9tile_gemmI");
  EXPECT_EQ(parse_entry_template("ns::in::tile_gemm<{BM}>", s)->mangled_prefix(),
            "_ZN2ns2in9tile_gemmI");
  const std::string mine = "_Z9tile_gemmILi32EL6Layout1EEvPKfPfi";
  EXPECT_EQ(*t.pick_symbol({"helper", mine}), mine);
  EXPECT_FALSE(t.pick_symbol({"helper"}));
  result<std::string> two = t.pick_symbol({mine, "_Z9tile_gemmILi16EL6Layout0EEvPKfPfi"});
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("2 instances"), std::string::npos);
  // The way out, not only the reason: a launcher beside the template is the usual cause.
  EXPECT_NE(two.error().message.find("keep SOURCE to the template (the header that defines it) "
                                     "and move the code that launches or instantiates it to "
                                     "another source file"),
            std::string::npos);
}

TEST(EntryTemplate, CacheKeyCoversTheUnitAndLeavesPlainKernelsAlone) {
  const fs::path top = fs::temp_directory_path() / ("tune_entry_test." + std::to_string(getpid()));
  fs::create_directories(top / "kernels");
  std::ofstream(top / "kernels" / "tile.cu") << "template <int BM> __global__ void k() {}\n";
  Manifest m;
  m.kernel = "tile";
  m.entry = "tile_gemm<{BM}, {LAYOUT}>";
  m.project_root = top;
  m.build_dir = top / "build";
  m.sources = {top / "kernels" / "tile.cu"};
  m.archs = {"sm_90"};
  m.nvcc = "/nonexistent/bin/nvcc";
  m.log_dir = top / "build" / "tune" / "tile";
  Space with_template = parse(space_text);
  const char* fp = "nvcc 13.0.88, ptxas 13.0.88";
  CacheKeyer keyer(m, with_template, fp);
  const CacheKey k = keyer.key(config(16, "row"), "sm_90");
  bool has_unit = false;
  for (const auto& [name, value] : k.inputs)
    if (name == "entry_unit") {
      has_unit = true;
      EXPECT_NE(value.find("#include \"kernels/tile.cu\""), std::string::npos) << value;
    }
  EXPECT_TRUE(has_unit);
  const std::vector<std::string> argv = keyer.keyed_argv(config(16, "row"), "sm_90");
  EXPECT_EQ(argv.back(), "<entry.cu>");
  for (const std::string& a : argv)  // no -DBM=16: it would rewrite `template <int BM>`
    EXPECT_EQ(a.rfind("-DBM", 0), std::string::npos) << a;
  EXPECT_NE(k.digest, keyer.key(config(16, "col"), "sm_90").digest);
  const CompileCommand c = keyer.compile_command(config(16, "row"), "sm_90", top / "o.cubin");
  ASSERT_TRUE(c.entry_unit);
  EXPECT_EQ(c.argv.back(), c.entry_unit->string());
  EXPECT_EQ(*c.entry_unit, entry_unit_path(m, config(16, "row")));

  // A plain kernel: the space overload keys exactly as the params_as one always did.
  Manifest plain = m;
  plain.entry = "tile";
  const Space no_template = parse("schema = 1\nkernel = \"tile\"\n[params]\nBM = [16, 32]\n");
  const Config c16{{"BM", ParamValue(std::int64_t{16})}};
  EXPECT_EQ(CacheKeyer(plain, no_template, fp).key(c16, "sm_90").digest,
            CacheKeyer(plain, ParamsAs::defines, fp).key(c16, "sm_90").digest);
  fs::remove_all(top);
}

TEST(EntryTemplate, CacheEntryKeepsTheSymbolOnlyWhenSet) {
  CacheEntry e;
  e.key = "k";
  nlohmann::json j = e;
  EXPECT_FALSE(j.contains("entry_symbol"));
  e.entry_symbol = "_Z1kILi1EEvv";
  j = e;
  EXPECT_EQ(j.get<CacheEntry>().entry_symbol, "_Z1kILi1EEvv");
  EXPECT_EQ(e.function_name("k"), "_Z1kILi1EEvv");
}

}  // namespace
}  // namespace tune
