// Bucket labels are free text. Where one becomes a file name it is percent-encoded with one
// shared, reversible encoding: bytes outside [A-Za-z0-9._-] become %XX (uppercase hex), and a
// leading '.' is encoded too so no label becomes `.` or `..` or a hidden file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tune {

std::string encode_bucket(std::string_view label);
/// The one way a bucket label becomes a file name: `encode_bucket(label)` then `suffix`,
/// bounded by bounded_file_name (safe_file.hpp), so that no label makes a name the file system
/// cannot hold (`<bucket>.trials.jsonl`, `<bucket>.shard-K-of-N.trials.jsonl`, their locks).
/// tests/layout/bounded_names_test.py checks that no other code builds such names.
std::string bucket_file_name(std::string_view label, std::string_view suffix);
/// The label back; nullopt for text that is not a valid encoding.
std::optional<std::string> decode_bucket(std::string_view encoded);

}  // namespace tune
