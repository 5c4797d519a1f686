// Hostile input: every reader refuses path traversal, absurd sizes, deep nesting and numbers out
// of range with a diagnostic (file, place, what is wrong), never a crash. The limits are those
// of tuner/core/base/input_limits.hpp and expr.hpp.
#include <tuner/core/base/input_limits.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/json_whole.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/build/manifest.hpp>
#include <tuner/core/record/record.hpp>
#include <tuner/core/search/trial_log.hpp>
#include <tuner/core/space/expr.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += s;
  return out;
}

// A valid record around one entry's JSON.
std::string record_with_entry(const std::string& entry) {
  return R"({"schema_version":1,"kernel":"gemm","arch":"sm_90","source_hash":"s","space_hash":"h",)"
         R"("toolchain":"t","tuner_version":"0.1.0","entries":[)" +
         entry + "]}";
}

std::string entry(const std::string& median, const std::string& samples,
                  const std::string& bm = "64") {
  return R"({"bucket":"b","pruned_space_hash":"p","config":{"id":"BM=)" + bm +
         R"(","params":{"BM":)" + bm + R"(}},"median_ms":)" + median + R"(,"samples":)" + samples +
         "}";
}

std::string record_error(const std::string& text) {
  result<Record> r = Record::parse(text, "r.json");
  return r ? std::string("loaded") : r.error().str();
}

std::string expr_error(const std::string& text) {
  result<Expr> e = Expr::parse(text);
  return e ? std::string("parsed")
           : "column " + std::to_string(e.error().column) + ": " + e.error().message;
}

class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "tune-hostile-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
  }
  void TearDown() override { fs::remove_all(dir); }
  void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  fs::path dir;
};

TEST(HostileInput, BucketLabelsNeverBecomePaths) {
  EXPECT_EQ(encode_bucket("../../etc"), "%2E.%2F..%2Fetc");
  EXPECT_EQ(encode_bucket(".."), "%2E.");
  EXPECT_EQ(encode_bucket("/abs"), "%2Fabs");
  EXPECT_EQ(decode_bucket("%2E.%2F..%2Fetc"), "../../etc");
}

TEST(HostileInput, SpaceRefusesTraversalInNamesAndValues) {
  auto error = [](const std::string& text) {
    result<Space> s = Space::parse(text, "s.toml");
    return s ? std::string("parsed") : s.error().str();
  };
  EXPECT_EQ(error("schema = 1\nkernel = \"../../x\"\n[params]\nA = [1]\n"),
            "s.toml:2:10: error: kernel name '../../x' may hold only letters, digits, '_', '.' and "
            "'-', and may not start with '.'");
  EXPECT_EQ(error("schema = 1\nkernel = \"k\"\n[params]\nA = [\"../x\"]\n"),
            "s.toml:4:6: error: param 'A' value '../x' may hold only letters, digits, '_', '.', "
            "':', '+' and '-' (it becomes a -D token)");
}

TEST(HostileInput, MapTextIsOneTemplateArgumentNothingElse) {
  // The corpus file: a directive after a line break, which nvcc would follow.
  const std::string path = std::string(TUNE_TEST_DATA) + "/hostile/map_include.toml";
  result<Space> corpus = Space::load(path);
  ASSERT_FALSE(corpus);
  EXPECT_EQ(corpus.error().str(),
            path +
                ":15:7: error: value 'col' in [entry.map.LAYOUT] holds a line break: map text is "
                "one C++ template argument such as \"Layout::Row\", nothing else");
  const std::string head =
      "schema = 1\nkernel = \"t\"\n[params]\nL = [\"a\"]\n[entry]\ntemplate = "
      "\"k<{L}>\"\n[entry.map.L]\n";
  auto error = [&](const std::string& value) {
    result<Space> s = Space::parse(head + "a = " + value + "\n", "s.toml");
    return s ? std::string("parsed") : s.error().str();
  };
  EXPECT_EQ(error(R"("Layout::Row")"), "parsed");
  EXPECT_EQ(error(R"("std::pair<int, float>")"), "parsed");
  for (const char* bad : {R"("A #include <x>")", R"("A; int x")", R"("A{}")", R"("A // x")",
                          R"("A /* x */")", R"("A\rB")", R"("A\u001bB")"}) {
    const std::string e = error(bad);
    EXPECT_EQ(e.rfind("s.toml:8:5: error: value 'a' in [entry.map.L] holds ", 0), 0) << e;
  }
  // One argument, a type or a constant expression: directives without '#', a second argument,
  // an argument list closed early, literals left open.
  const std::string pragma = std::string(TUNE_TEST_DATA) + "/hostile/map_pragma.toml";
  result<Space> p = Space::load(pragma);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().str(),
            pragma +
                ":15:7: error: value 'col' in [entry.map.LAYOUT] holds '_Pragma' (a directive or "
                "an assembly statement): map text is one C++ template argument such as "
                "\"Layout::Row\", nothing else");
  for (const char* good :
       {R"x("std::array<int, 4>")x", R"x("Foo<Bar<int>>")x", R"x("sizeof(float) * 2")x",
        R"x("(1 << 4)")x", R"x("1 << 4")x", R"x("(A > B)")x", "\"'a'\"", "\"1'000\"", R"x("-1")x",
        R"x("0x1p-3")x", R"x("&g")x", R"x("u8\"x\"")x", R"x("s->x")x", R"x("a[2]")x",
        R"x("f(1, 2)")x"})
    EXPECT_EQ(error(good), "parsed") << good;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"x("__pragma(x) 1")x", "'__pragma' (a directive or an assembly statement)"},
      {R"x("asm(\"x\")")x", "'asm' (a directive or an assembly statement)"},
      {R"x("0>), system(\"id\"), (&saxpy_t<64, 0")x",
       "a '>' that closes no '<' (it would end the template argument list)"},
      {R"x("A, B")x", "a ',' outside brackets (a second template argument)"},
      {R"x("\"abc")x", "an unterminated string literal"},
      {"\"'a\"", "an unterminated character literal"},
      {R"x("R\"x(")x", "a raw string literal"},
      {R"x("LR\"x()x\"")x", "a raw string literal"},
      {R"x("f(1")x", "an unclosed '('"},
      {R"x("std::array<int, 4")x", "an unclosed '<'"},
      {R"x("a)")x", "an unbalanced ')'"},
      {R"x("a]")x", "an unbalanced ']'"},
      {R"x("a @ b")x", "'@', which is not C++ punctuation here"},
      {R"x("a \\ b")x", "'\\', which is not C++ punctuation here"}};
  for (const auto& [bad, what] : refused)
    EXPECT_EQ(error(bad), "s.toml:8:5: error: value 'a' in [entry.map.L] holds " + what +
                              ": map text is one C++ template argument such as "
                              "\"Layout::Row\", nothing else")
        << bad;
  // The template itself: its placeholders take braces, nothing else does.
  result<Space> t = Space::parse(
      "schema = 1\nkernel = \"t\"\n[params]\nL = [1]\n[entry]\ntemplate = \"k<{L}>;\"\n", "s.toml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().str(),
            "s.toml:6:19: error: template entry holds ';' (a statement): it is a C++ template "
            "argument list, nothing else");
}

TEST(HostileInput, RecordRefusesADuplicateKeyAtItsLine) {
  // The corpus file: a second median_ms that a parser would take silently.
  const std::string path = std::string(TUNE_TEST_DATA) + "/hostile/record_duplicate_key.json";
  result<Record> r = Record::load(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().str(), path +
                                 ":4:37: error: key 'median_ms' appears twice in one object: keep "
                                 "one of them (a reader would silently take the last)");
  // Escapes decode before the comparison; equal keys in different objects are fine.
  EXPECT_EQ(json_duplicate_key(R"({"a": 1, "\u0061": 2})")->first, 9u);
  EXPECT_FALSE(json_duplicate_key(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})"));
  EXPECT_FALSE(json_duplicate_key(R"({"a,": "\"a\"", "a": 1})"));
}

TEST(HostileInput, SpaceRefusesATooLargeText) {
  std::string text = "schema = 1\nkernel = \"k\"\n[params]\nA = [1]\n#";
  text += std::string(max_space_bytes - text.size() + 1, 'x');
  result<Space> s = Space::parse(text, "s.toml");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().str(),
            "s.toml: error: the file is 1048577 bytes, more than the 1 MiB a space file may "
            "hold");
}

TEST(HostileInput, SpaceRefusesDeepTomlNesting) {
  const std::string text =
      "schema = 1\nkernel = \"k\"\n[params]\nA = " + repeat("[", 100000) + "\n";
  result<Space> s = Space::parse(text, "s.toml");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().str(),
            "s.toml:4:261: error: invalid TOML: error while parsing value: exceeded maximum nested "
            "value depth of 256 (TOML_MAX_NESTED_VALUES)");
}

TEST(HostileInput, ExpressionsRefuseDeepNesting) {
  EXPECT_EQ(expr_error(repeat("(", 128) + "1" + repeat(")", 128)), "parsed");
  const std::string too_deep =
      "the expression nests deeper than 128 levels; split it into several prune entries or "
      "simplify it";
  EXPECT_EQ(expr_error(repeat("(", 100000) + "1" + repeat(")", 100000)), "column 129: " + too_deep);
  EXPECT_EQ(expr_error(repeat("-", 127) + "1"), "parsed");
  EXPECT_EQ(expr_error(repeat("-", 100000) + "1"), "column 128: " + too_deep);
  // A flat chain is a tree as tall as it is long: the 128th '+' (column 256) is one too many.
  EXPECT_EQ(expr_error("A" + repeat("+A", 127)), "parsed");
  EXPECT_EQ(expr_error("A" + repeat("+A", 100000)), "column 256: " + too_deep);
}

TEST(HostileInput, ExpressionStringsMustBeUtf8) {
  EXPECT_EQ(expr_error("S == 'a\xff'"), "column 6: string literal is not valid UTF-8");
  EXPECT_EQ(expr_error("S == 'h\xc3\xa9'"), "parsed");
}

TEST(HostileInput, RecordRefusesDeepNesting) {
  EXPECT_EQ(record_error(repeat("[", 100000)),
            "r.json:1:65: error: arrays and objects nest deeper than 64 levels");
  EXPECT_EQ(record_error(record_with_entry(R"({"runoff":)" + repeat("{\"a\":", 70))),
            "r.json:1:453: error: arrays and objects nest deeper than 64 levels");
}

TEST(HostileInput, RecordRefusesNumbersOutOfRange) {
  EXPECT_EQ(record_error(record_with_entry(entry("0.5", "10"))), "loaded");
  EXPECT_EQ(record_error(record_with_entry(entry("-1", "10"))),
            "r.json:1:231: error: field 'entries[0].median_ms' must be a finite number >= 0 or "
            "null, "
            "got -1");
  EXPECT_EQ(record_error(record_with_entry(entry("1e999", "10"))),
            "r.json: error: not valid JSON: [json.exception.out_of_range.406] number overflow "
            "parsing '1e999'");
  EXPECT_EQ(record_error(record_with_entry(entry("0.5", "-3"))),
            "r.json:1:245: error: field 'entries[0].samples' must be an integer >= 0, got -3");
  EXPECT_EQ(record_error(record_with_entry(entry("0.5", "18446744073709551615"))),
            "r.json:1:245: error: field 'entries[0].samples' must be an integer >= 0, got "
            "18446744073709551615");
  EXPECT_EQ(record_error(record_with_entry(entry("0.5", "1", "9223372036854775808"))),
            "r.json:1:231: error: field 'entries[0].config.params.BM' must be an integer that fits "
            "in "
            "64 bits, got 9223372036854775808");
  EXPECT_EQ(record_error(R"({"schema_version":4294967297,"kernel":"k","arch":"a"})"),
            "r.json:1:19: error: field 'schema_version' must be an integer, got 4294967297");
}

TEST_F(ScratchDir, RecordRefusesATooLargeFileBeforeReadingIt) {
  const fs::path path = dir / "big.json";
  { std::ofstream out(path, std::ios::binary); }
  fs::resize_file(path, 100 << 20);
  result<Record> r = Record::load(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().str(), path.string() +
                                 ": error: the file is 104857600 bytes, more than "
                                 "the 16 MiB a record may hold");
  EXPECT_EQ(record_error(std::string(max_record_bytes + 1, ' ')),
            "r.json: error: the file is 16777217 bytes, more than the 16 MiB a record may hold");
}

TEST(HostileInput, ManifestRefusesATraversingKernelName) {
  result<Manifest> m = Manifest::parse(
      R"({"schema_version":1,"kernel":"../../x","project_root":"/p","build_dir":"/p/b",)"
      R"("sources":["a.cu"],"space":"s.toml","archs":["sm_90"],"nvcc":"nvcc"})",
      "/p/b/manifest.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().str(),
            "/p/b/manifest.json: error: field 'kernel' must be a kernel name ([A-Za-z0-9_.-]+, "
            "not starting with '.'), got \"../../x\"");
  m = Manifest::parse(R"({"schema_version":4294967297})", "/p/m.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().str(),
            "/p/m.json: error: schema_version 4294967297 is not supported (this tuner reads 1): "
            "re-run the CMake configure step");
  m = Manifest::parse(repeat("{\"a\":", 100000), "/p/m.json");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().str(),
            "/p/m.json:1:321: error: arrays and objects nest deeper than 64 levels");
}

TEST_F(ScratchDir, TrialLogSkipsDeepAndLongLinesAndRefusesADeepHeader) {
  LogHeader h;
  h.tuner = "k/b";
  h.space_hash = "x";
  const std::string header = to_json(h).dump() + "\n";
  const std::string trial =
      R"({"config_id":"A=1","params":{"A":1},"state":"invalid","reason":"r","phase":"search"})";
  const fs::path path = dir / "t.jsonl";
  write(path, header + repeat("[", 100000) + "\n" + "\"" + std::string(max_log_line_bytes, 'x') +
                  "\"\n" + trial + "\n");
  {
    result<TrialLog> log = TrialLog::open(path, h);
    ASSERT_TRUE(log) << log.error().str();
    EXPECT_EQ(log->trials().size(), 1u);
    ASSERT_EQ(log->warnings().size(), 2u);
    EXPECT_EQ(log->warnings()[0],
              path.string() + ":2: warning: skipped a line nesting deeper than 64 levels");
    EXPECT_EQ(log->warnings()[1], path.string() + ":3: warning: skipped a line longer than 1 MiB");
  }
  write(path, repeat("[", 100000) + "\n" + trial + "\n");
  result<TrialLog> log = TrialLog::open(path, h);
  ASSERT_FALSE(log);
  EXPECT_EQ(log.error().str(),
            path.string() +
                ":1: error: not a trial log: the first line is longer than 1 MiB or "
                "nests deeper than 64 levels");
  write(path, R"({"log_schema":4294967297,"tuner":"k/b","space_hash":"x","arch":""})"
              "\n");
  log = TrialLog::open(path, h);
  ASSERT_FALSE(log);
  EXPECT_EQ(log.error().str(),
            path.string() +
                ":1: error: log belongs to another search: log_schema 4294967297 "
                "(log) vs 1 (this run); it was left untouched: move it away or use "
                "another log path");
}

TEST(HostileInput, WholeNumbersFromOutsideAreCheckedBeforeTheyAreCast) {
  // The fuzz target `trust` (2026-12-05): a store's cache entry with `"shared_bytes": 2.2e20`
  // was cast to int64 by nlohmann's get<>: undefined behaviour (UBSan). json_whole reads every
  // count of outside JSON (cache entries, runoffs, shard summaries, bucket results, worker
  // answers) and words the refusal.
  using nlohmann::json;
  EXPECT_EQ(json_whole(json{{"n", 5}}, "n", 0), 5);
  EXPECT_EQ(json_whole(json{{"n", -3}}, "n", -3, 3), -3);
  for (const json& bad : {json(2.2e20), json(1.5), json(-1), json(18446744073709551615u), json("5"),
                          json(nullptr), json(true)}) {
    try {
      json_whole(json{{"n", bad}}, "n", 0, 100);
      ADD_FAILURE() << bad.dump();
    } catch (const json::other_error& e) {
      EXPECT_NE(std::string(e.what()).find("'n' must be a whole number from 0 to 100"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(json_whole(json::object(), "n", 0), json::out_of_range);

  CacheEntry e;
  e.key = std::string(64, 'a');
  e.key_schema = "k1";
  e.status = CacheStatus::failed;
  e.resources = KernelResources{32, 0, 0, 0};
  json j = e;
  j["schema_version"] = kernel_cache_schema_version;
  ASSERT_EQ(read_cache_entry(j.dump()).kind, CacheEntryText::Kind::entry);
  j["resources"]["shared_bytes"] = 2.2e20;
  const CacheEntryText forged = read_cache_entry(j.dump());
  EXPECT_NE(forged.kind, CacheEntryText::Kind::entry);
  EXPECT_NE(forged.why.find("'shared_bytes' must be a whole number from 0 to"), std::string::npos)
      << forged.why;
}

TEST(HostileInput, JsonNestingIgnoresBracketsInStrings) {
  EXPECT_FALSE(json_nesting_problem("[\"" + repeat("[", 100) + "\\\"]\"]", "x"));
  EXPECT_TRUE(json_nesting_problem(repeat("[", 65), "x"));
  EXPECT_FALSE(json_nesting_problem(repeat("[", 64), "x"));
}

}  // namespace
}  // namespace tune
