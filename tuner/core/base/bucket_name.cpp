#include <tuner/core/base/bucket_name.hpp>

#include <tuner/core/base/safe_file.hpp>

namespace tune {

std::string encode_bucket(std::string_view label) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (std::size_t i = 0; i < label.size(); ++i) {
    auto c = static_cast<unsigned char>(label[i]);
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || (c == '.' && i != 0);
    if (safe) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (out.empty()) out.push_back('%');  // the empty label; decodes back to ""
  return out;
}

std::string bucket_file_name(std::string_view label, std::string_view suffix) {
  return bounded_file_name(encode_bucket(label), suffix);
}

std::optional<std::string> decode_bucket(std::string_view encoded) {
  if (encoded == "%") return std::string();
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      out += encoded[i];
      continue;
    }
    if (i + 2 >= encoded.size()) return std::nullopt;
    int hi = val(encoded[i + 1]);
    int lo = val(encoded[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (encode_bucket(out) != encoded) return std::nullopt;  // only the canonical form decodes
  return out;
}

}  // namespace tune
