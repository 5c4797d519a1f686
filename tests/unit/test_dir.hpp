// A fresh scratch folder per test: `<gtest TempDir>/<suite>.<pid>/<test name>`, emptied and
// created. The pid keeps parallel ctest runs of one binary apart; the parent is per process, so
// a fixture's TearDown may remove it whole.
#pragma once

#include <filesystem>
#include <string_view>

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace tune::test {

inline std::filesystem::path fresh_test_dir(std::string_view suite) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    fmt::format("{}.{}", suite, ::getpid()) / info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace tune::test
