#include <tuner/core/base/atomic_file.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AtomicFile, WriteIfChangedLeavesTheSameBytesAlone) {
  const fs::path path = test::fresh_test_dir("AtomicFile") / "out" / "winners.hpp";
  EXPECT_TRUE(write_file_if_changed(path, "one\n"));  // creates the folder
  EXPECT_EQ(read(path), "one\n");
  const fs::file_time_type old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(path, old_time);
  EXPECT_FALSE(write_file_if_changed(path, "one\n"));
  EXPECT_EQ(fs::last_write_time(path), old_time);
  EXPECT_TRUE(write_file_if_changed(path, "two\n"));
  EXPECT_EQ(read(path), "two\n");
  EXPECT_NE(fs::last_write_time(path), old_time);
  EXPECT_TRUE(write_file_if_changed(path, ""));
  EXPECT_EQ(read(path), "");
}

}  // namespace
}  // namespace tune
