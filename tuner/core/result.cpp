#include <tuner/core/result.hpp>

namespace tune {

std::string diagnostic::str() const {
  std::string out;
  if (!path.empty()) {
    out += path;
    if (line > 0) {
      out += ':' + std::to_string(line);
      if (column > 0) out += ':' + std::to_string(column);
    }
    out += ": ";
  }
  out += "error: ";
  out += message;
  return out;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items)
    out += (out.empty() ? "'" : ", '") + item + "'";
  return out;
}

}  // namespace tune
