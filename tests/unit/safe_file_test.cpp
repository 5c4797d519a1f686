// Issue 21's byte, link and name problems at the unit level: text that is not UTF-8 reaching
// JSON, files opened through symbolic links or that are not regular, and bucket labels too long
// for a file name.
#include <tuner/core/base/safe_file.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/search/trial.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ValidUtf8Test, ReplacesEachInvalidByteAndKeepsValidText) {
  EXPECT_EQ(valid_utf8("plain"), "plain");
  EXPECT_EQ(valid_utf8("caf\xC3\xA9 \xE6\x97\xA5"), "caf\xC3\xA9 \xE6\x97\xA5");
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf\xEF\xBF\xBD");  // Latin-1
  EXPECT_EQ(valid_utf8("\xE6\x97"), "\xEF\xBF\xBD");    // a cut sequence: one
  EXPECT_EQ(valid_utf8("\xE6\x97x"), "\xEF\xBF\xBDx");
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(ValidUtf8Test, PrintableShowsControlCharactersInsteadOfSendingThem) {
  // A line feed broke `show`'s table; U+202E reversed the rest of the line (`measured on
  // \u202eevil`): both are escaped, as every C0 control and the bidi controls are.
  EXPECT_EQ(printable("ok\tline\n"), "ok\\x09line\\x0a");
  EXPECT_EQ(printable("on \u202Eevil\u202C host"), "on \\u202eevil\\u202c host");
  EXPECT_EQ(printable("\u2066\u2069\u200E\u200F\u061C\u2028\u2029"),
            "\\u2066\\u2069\\u200e\\u200f\\u061c\\u2028\\u2029");
  EXPECT_EQ(printable("\u2027\u2030\u2065\u206A\u061B"), "\u2027\u2030\u2065\u206A\u061B");
  EXPECT_EQ(printable("\x1b[2J\x1b]0;owned\x07"), "\\x1b[2J\\x1b]0;owned\\x07");
  EXPECT_EQ(printable("a\rb\x7f"), "a\\x0db\\x7f");
  EXPECT_EQ(printable("\xC2\x9B"
                      "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(printable("\xC3\xA9\xFF"), "\xC3\xA9\xEF\xBF\xBD");
}

TEST(JsonTextTest, InvalidBytesInAnyStringBecomeReplacementCharacters) {
  const nlohmann::json j = {{"reason", "exit status 1: caf\xE9"}, {"k\xFF", {"\xE6\x97"}}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what aborted whole runs
  const std::string text = dump_json(j);
  const nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back["reason"], "exit status 1: caf\xEF\xBF\xBD");
  EXPECT_EQ(back["k\xEF\xBF\xBD"][0], "\xEF\xBF\xBD");  // one for the cut sequence
}

TEST(JsonTextTest, AnInvalidTrialReasonSurvivesItsLogLine) {
  const Trial t =
      Trial::invalid("killed by signal SIGSEGV: \xE9\xE8 " + shorten("\xE6\x97\xA5", 1));
  const std::string line = to_json_line(t);
  result<Trial> back = trial_from_json(nlohmann::json::parse(line));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->state.invalid()->reason,
            "killed by signal SIGSEGV: \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD...");
}

class SafeFileTest : public ::testing::Test {
 protected:
  void SetUp() override { dir = test::fresh_test_dir("SafeFileTest"); }
  fs::path dir;
};

TEST_F(SafeFileTest, WritingThroughASymbolicLinkIsRefused) {
  const fs::path target = dir / "precious.txt";
  std::ofstream(target) << "keep me\n";
  fs::create_symlink(target, dir / "log.jsonl");
  result<int> fd = open_for_writing(dir / "log.jsonl", O_RDWR | O_CREAT | O_APPEND, "trial log");
  ASSERT_FALSE(fd.has_value());
  EXPECT_EQ(fd.error().str(), (dir / "log.jsonl").string() +
                                  ": error: is a symbolic link; tune never writes through one "
                                  "(it could point anywhere): remove it");
  // A dangling link too (O_CREAT would otherwise create its target).
  fs::create_symlink(dir / "nowhere", dir / "dangling");
  EXPECT_FALSE(open_for_writing(dir / "dangling", O_RDWR | O_CREAT, "lock file").has_value());
  EXPECT_FALSE(fs::exists(dir / "nowhere"));
  EXPECT_EQ(slurp(target), "keep me\n");
}

TEST_F(SafeFileTest, ASymlinkedLockIsRefusedAndItsTargetKept) {
  const fs::path target = dir / "precious.txt";
  std::ofstream(target) << "keep me\n";
  fs::create_symlink(target, dir / "record.json.lock");
  result<FileLock> lock = FileLock::try_lock(dir / "record.json", "record");
  ASSERT_FALSE(lock.has_value());
  EXPECT_EQ(lock.error().path, FileLock::lock_path(dir / "record.json").string());
  EXPECT_NE(lock.error().message.find("is a symbolic link"), std::string::npos);
  EXPECT_EQ(slurp(target), "keep me\n");
}

TEST_F(SafeFileTest, DevicesAreNotUserFiles) {
  ASSERT_TRUE(not_regular_problem("/dev/zero").has_value());
  EXPECT_EQ(not_regular_problem("/dev/zero")->str(),
            "/dev/zero: error: is not a regular file (a device, a FIFO or a socket)");
  EXPECT_FALSE(not_regular_problem(dir).has_value());              // the caller's message
  EXPECT_FALSE(not_regular_problem(dir / "missing").has_value());  // the caller's message
  EXPECT_FALSE(open_for_writing("/dev/full", O_RDWR | O_CREAT | O_APPEND, "trial log"));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  EXPECT_TRUE(not_regular_problem(dir / "fifo").has_value());
  EXPECT_FALSE(open_for_writing(dir / "fifo", O_RDWR | O_CREAT, "trial log"));  // no hang
}

TEST(BoundedFileNameTest, ShortNamesAreUnchanged) {
  EXPECT_EQ(bounded_file_name("m%3C%3D512", ".trials.jsonl"), "m%3C%3D512.trials.jsonl");
  const std::string fits(max_file_name_bytes - 5, 'a');
  EXPECT_EQ(bounded_file_name(fits, ".json"), fits + ".json");
}

TEST(BoundedFileNameTest, LongNamesKeepAReadablePrefixAndAHash) {
  for (const std::string& label : {std::string(243, 'x'), std::string(600, 'y'), [] {
                                     std::string cjk;
                                     for (int i = 0; i < 30; ++i)
                                       cjk += "\xE6\x97\xA5";
                                     return cjk;
                                   }()}) {
    const std::string enc = encode_bucket(label);
    const std::string name = bounded_file_name(enc, ".trials.jsonl");
    EXPECT_LE(name.size(), max_file_name_bytes) << name;
    EXPECT_TRUE(name.starts_with(enc.substr(0, 40))) << name;
    EXPECT_TRUE(name.ends_with(".trials.jsonl"));
    EXPECT_NE(name.find('~'), std::string::npos);
    EXPECT_EQ(name, bounded_file_name(enc, ".trials.jsonl"));  // stable
    // Never cut inside a %XX escape.
    const std::string stem = name.substr(0, name.find('~'));
    const auto pct = stem.rfind('%');
    if (pct != std::string::npos) {
      EXPECT_LE(pct + 3, stem.size()) << stem;
    }
  }
  // Two labels with one long common start stay apart.
  const std::string a = encode_bucket(std::string(300, 'q') + "a");
  const std::string b = encode_bucket(std::string(300, 'q') + "b");
  EXPECT_NE(bounded_file_name(a, ".json"), bounded_file_name(b, ".json"));
}

TEST_F(SafeFileTest, ABoundedNameCanBeCreatedWithItsLockAndTemporaries) {
  const std::string name = bounded_file_name(encode_bucket(std::string(250, 'z')), ".trials.jsonl");
  result<FileLock> lock = FileLock::try_lock(dir / name, "log");
  ASSERT_TRUE(lock.has_value());
  std::ofstream out(dir / name);
  EXPECT_TRUE(static_cast<bool>(out));
}

}  // namespace
}  // namespace tune
