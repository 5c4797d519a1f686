// Where something is in a JSON text, as a line and column, for messages about a hand-edited
// file: nlohmann reports a parse error as a byte offset and knows no positions at all once the
// text is parsed, so a field of the wrong type is found again in the text by its path.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tune {

/// A 1-based line and column (in characters: a UTF-8 sequence counts once).
struct TextPosition {
  int line = 1;
  int column = 1;
};

/// The line and column of byte `offset` of `text` (clamped to its end).
TextPosition text_position(std::string_view text, std::size_t offset);

/// The byte offset in the valid JSON `text` of the value at `path`: keys separated by '.', array
/// indices as `[n]` (`entries[1].config.params.BM`, `context`); "" is the whole document. The
/// longest prefix of the path that exists is followed, so a missing field points at the object
/// that lacks it. nullopt when the text does not scan as JSON.
std::optional<std::size_t> json_value_offset(std::string_view text, std::string_view path);

/// Where the valid JSON `text` first repeats a key inside one object: the byte offset of the
/// second occurrence and the key (escapes decoded, so `"a"` and `"\u0061"` are one key), or
/// nullopt. A JSON parser keeps the last of two equal keys without a word; a hand-edited file
/// that says a thing twice is refused instead.
std::optional<std::pair<std::size_t, std::string>> json_duplicate_key(std::string_view text);

/// json_duplicate_key as every reader says it (records, shard summaries, bucket results, trial
/// logs, cache entries): the byte offset of the second occurrence and `key 'median_ms' appears
/// twice in one object: keep one of them (a reader would silently take the last)`, the key
/// escaped for a terminal; nullopt when no key is said twice.
std::optional<std::pair<std::size_t, std::string>> duplicate_key_problem(std::string_view text);

}  // namespace tune
