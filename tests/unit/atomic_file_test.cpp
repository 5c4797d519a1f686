#include <tuner/core/base/atomic_file.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <tuner/core/base/result.hpp>

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

// The streamed form writes what its producer writes; a producer that throws leaves the old file
// and no temporary behind.
TEST(AtomicFile, AStreamedWriteIsAllOrNothing) {
  const fs::path dir = test::fresh_test_dir("AtomicFileStream");
  const fs::path path = dir / "export.json";
  const std::string big(300000, 'x');  // more than one 64 KiB block
  write_file_atomic(path, [&](std::ostream& out) { out << "[" << big << "]\n"; });
  EXPECT_EQ(read(path), "[" + big + "]\n");
  EXPECT_THROW(write_file_atomic(path,
                                 [&](std::ostream& out) {
                                   out << big;
                                   throw error("the log went away");
                                 }),
               error);
  EXPECT_EQ(read(path), "[" + big + "]\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace tune
