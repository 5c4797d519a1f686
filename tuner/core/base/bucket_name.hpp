// Bucket labels are free text. Where one becomes a file name it is percent-encoded with one
// shared, reversible encoding: bytes outside [A-Za-z0-9._-] become %XX (uppercase hex), and a
// leading '.' is encoded too so no label becomes `.` or `..` or a hidden file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tune {

std::string encode_bucket(std::string_view label);
/// The label back; nullopt for text that is not a valid encoding.
std::optional<std::string> decode_bucket(std::string_view encoded);

}  // namespace tune
