// Positions in JSON text (tuner/core/base/json_position.hpp): what record errors name.
#include <tuner/core/base/json_position.hpp>

#include <string>

#include <gtest/gtest.h>

namespace tune {
namespace {

TEST(JsonPositionTest, LinesAndColumnsCountCharacters) {
  const std::string text = "{\n  \"k\": \"\xc3\xa9t\xc3\xa9\", \"n\": 3\n}";
  EXPECT_EQ(text_position(text, 0).line, 1);
  const TextPosition n = text_position(text, text.find("3"));
  EXPECT_EQ(n.line, 2);
  EXPECT_EQ(n.column, 20);  // the two two-byte characters count once each
  EXPECT_EQ(text_position(text, 10'000).line, 3);
}

TEST(JsonPositionTest, FollowsKeysAndIndices) {
  const std::string text =
      R"({"a": {"x": "}]\"{"}, "entries": [{"s": 1}, {"config": {"params": {"BM": [1]}}, "s": 2}]})";
  EXPECT_EQ(json_value_offset(text, ""), 0u);
  EXPECT_EQ(json_value_offset(text, "entries[1].s"), text.find("2}"));
  EXPECT_EQ(json_value_offset(text, "entries[1].config.params.BM"), text.find("[1]"));
  EXPECT_EQ(json_value_offset(text, "entries[0]"), text.find("{\"s\": 1}"));
  // A missing field: the object that lacks it; a path past the end of an array: the array.
  EXPECT_EQ(json_value_offset(text, "entries[0].missing"), text.find("{\"s\": 1}"));
  EXPECT_EQ(json_value_offset(text, "entries[7].s"), text.find("[{"));
  EXPECT_EQ(json_value_offset("", "a"), std::nullopt);
}

TEST(JsonPositionTest, DeepTextCostsNoStack) {
  const std::string deep =
      "{\"a\": " + std::string(100'000, '[') + std::string(100'000, ']') + ", \"b\": 1}";
  EXPECT_EQ(json_value_offset(deep, "b"), deep.size() - 2);
}

}  // namespace
}  // namespace tune
