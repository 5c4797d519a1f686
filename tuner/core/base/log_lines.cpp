#include <tuner/core/base/log_lines.hpp>

#include <filesystem>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/safe_file.hpp>

namespace tune {

std::optional<diagnostic> log_file_problem(const std::string& path) {
  if (auto d = not_regular_problem(path)) return d;
  std::error_code ec;
  if (const std::uintmax_t size = std::filesystem::file_size(path, ec); !ec)
    return size_problem(path, size, max_log_bytes, "a trial log");
  return std::nullopt;
}

LogLines::LogLines(std::string path, std::istream& in) : path_(std::move(path)), in_(&in) {}

bool LogLines::next(std::string& line) {
  line.clear();
  if (bytes_ > max_log_bytes) return false;
  std::streambuf* buf = in_->rdbuf();
  int c = buf->sbumpc();
  if (c == std::char_traits<char>::eof()) return false;
  ++bytes_;
  while (c != std::char_traits<char>::eof() && c != '\n') {
    // A 300 MB line costs no more memory than a long one.
    if (line.size() <= max_log_line_bytes) line.push_back(static_cast<char>(c));
    c = buf->sbumpc();
    if (c != std::char_traits<char>::eof()) ++bytes_;
  }
  unterminated_ = c == std::char_traits<char>::eof();
  if (bytes_ > max_log_bytes) return false;
  ++number_;
  return true;
}

bool LogLines::too_long(const std::string& line) const noexcept {
  return line.size() > max_log_line_bytes;
}

std::optional<diagnostic> LogLines::overflow() const {
  if (bytes_ <= max_log_bytes) return std::nullopt;
  return size_problem(path_, bytes_, max_log_bytes, "a trial log");
}

}  // namespace tune
