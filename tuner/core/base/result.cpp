#include <tuner/core/base/result.hpp>

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

}  // namespace tune
