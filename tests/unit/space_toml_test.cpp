// The TOML source helpers of the space reader (tuner/core/space/space_parser.hpp): the byte offset
// of a file position and the file position of each byte of a decoded string value. The space
// corpus covers them through expression columns; these cases are what it does not reach:
// CRLF line ends, 8-digit escapes, and the count every mapping must have
// (one place per decoded byte, plus the closing quote), checked against what TOML++ decodes.
#include <tuner/core/space/space_parser.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace {

using tune::SourcePos;
using tune::detail::offset_of;
using tune::detail::place_string;

std::vector<std::pair<int, int>> lines_columns(const std::vector<SourcePos>& places) {
  std::vector<std::pair<int, int>> out;
  for (const auto& p : places)
    out.emplace_back(p.line, p.column);
  return out;
}

// The value of key `s` in `doc` as TOML++ decodes it, and where TOML++ says it starts.
std::pair<std::string, SourcePos> decoded(std::string_view doc) {
  toml::table t = toml::parse(doc);
  const toml::node& n = *t.get("s");
  return {*n.value<std::string>(),
          {static_cast<int>(n.source().begin.line), static_cast<int>(n.source().begin.column)}};
}

TEST(SpaceTomlTest, OffsetOfCountsColumnsInCharacters) {
  const std::string_view doc = "a\nxé = 1\n";
  EXPECT_EQ(offset_of(doc, {1, 1}), 0u);
  EXPECT_EQ(offset_of(doc, {2, 1}), 2u);
  EXPECT_EQ(offset_of(doc, {2, 3}), 5u);  // 'é' is two bytes, one column
  EXPECT_EQ(offset_of(doc, {9, 9}), doc.size());
}

TEST(SpaceTomlTest, EachDecodedByteHasAPlace) {
  for (std::string_view doc : {
           "s = \"a\\\"b\"\n",
           "s = 'a\\b'\n",
           "s = \"x\\U0001F600y\"\n",
           "s = \"\"\"\r\nab\ncd\"\"\"\n",
           "s = \"\"\"\r\nab\r\ncd\"\"\"\n",
           "s = '''a\r\nb'''\n",
           "s = \"\"\"a \\\r\n   b\"\"\"\n",
           "s = '''\nA > 1 &&\n  é'''\n",
       }) {
    const auto [text, begin] = decoded(doc);
    EXPECT_EQ(place_string(doc, begin).size(), text.size() + 1) << doc;
  }
}

TEST(SpaceTomlTest, EscapesAndLineEndsMapToTheFile) {
  // The 4 bytes of U+1F600 all sit at its escape; 'y' follows the 10-character escape.
  EXPECT_EQ(
      lines_columns(place_string("s = \"x\\U0001F600y\"\n", {1, 5})),
      (std::vector<std::pair<int, int>>{{1, 6}, {1, 7}, {1, 7}, {1, 7}, {1, 7}, {1, 17}, {1, 18}}));
  // A CRLF right after the opening delimiter is trimmed; the next line end is text.
  EXPECT_EQ(lines_columns(place_string("s = \"\"\"\r\nab\nc\"\"\"\n", {1, 5})),
            (std::vector<std::pair<int, int>>{{2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}}));
  // A CRLF inside decodes to one '\n': one place, at the '\r'.
  EXPECT_EQ(lines_columns(place_string("s = '''ab\r\nc'''\n", {1, 5})),
            (std::vector<std::pair<int, int>>{{1, 8}, {1, 9}, {1, 10}, {2, 1}, {2, 2}}));
}

TEST(SpaceTomlTest, NoPlacesAwayFromAQuote) {
  EXPECT_TRUE(place_string("s = 12\n", {1, 5}).empty());
  EXPECT_TRUE(place_string("s = 'x'\n", {7, 1}).empty());
}

}  // namespace
