// The one way tune writes JSON text. A JSON string holds only UTF-8, but much of what tune
// writes comes from outside: a child's output (the reason of an invalid trial), compiler output
// (a kernel cache entry), file names and the environment (a record's paths, a lock's host).
// nlohmann::json's dump throws on the first invalid byte, which once aborted a whole run on
// every resume; dump_json writes each invalid byte as U+FFFD instead (as valid_utf8 in text.hpp
// does: it is that function), so every writer of outside text goes through here.
#pragma once

#include <cstddef>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <tuner/core/base/result.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

/// `j` with every string, keys included, passed through valid_utf8 (for nlohmann::json and
/// nlohmann::ordered_json alike, keeping the order of the latter).
template <class Json>
Json valid_utf8_json(const Json& j) {
  switch (j.type()) {
    case Json::value_t::string:
      return valid_utf8(j.template get_ref<const std::string&>());
    case Json::value_t::array: {
      Json out = Json::array();
      for (const auto& item : j)
        out.push_back(valid_utf8_json(item));
      return out;
    }
    case Json::value_t::object: {
      Json out = Json::object();
      for (auto it = j.begin(); it != j.end(); ++it)
        out[valid_utf8(it.key())] = valid_utf8_json(it.value());
      return out;
    }
    default:
      return j;
  }
}

/// `j` as JSON text (compact for indent -1, else pretty with `indent` spaces), every string
/// written as valid_utf8 of itself. Never throws for invalid text.
template <class Json>
std::string dump_json(const Json& j, int indent = -1) {
  return valid_utf8_json(j).dump(indent);
}

/// Writes `element` as an element of a top-level array of a JSON object that dump_json writes
/// with an indent of 2: after `,` unless it is the `first`, on lines four spaces in.
inline void write_json_element(std::ostream& out, const nlohmann::json& element, bool first) {
  out << (first ? "\n" : ",\n");
  const std::string text = dump_json(element, 2);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out << "    ";
    out.write(text.data() + pos, static_cast<std::streamsize>(nl - pos));
    if (nl < text.size()) out << '\n';
    pos = nl + 1;
  }
}

/// A JSON object written as `dump_json(object, 2)` would be, but with one top-level array
/// written an element at a time, so that a long array (an export's results, a log's trials) is
/// never held: `frame` is the object with that array empty.
///
/// Example:
///   JsonArrayWriter w(std::cout, json{{"header", h}, {"trials", json::array()}}, "trials");
///   for (...) w.add(trial);
///   w.finish();
class JsonArrayWriter {
 public:
  JsonArrayWriter(std::ostream& out, const nlohmann::json& frame, std::string_view key)
      : out_(out), text_(dump_json(frame, 2)) {
    // The key at the top level: two spaces in, at the start of a line (a string holds no raw
    // line break, so this is never inside one).
    const std::string empty = "\n  " + nlohmann::json(std::string(key)).dump() + ": []";
    const std::size_t at = text_.find(empty);
    if (at == std::string::npos)
      throw error("JsonArrayWriter: no empty array '" + std::string(key) + "'");
    open_ = at + empty.size() - 1;  // just after the '['
  }

  /// The text before the first element (written by the first add, or by finish).
  void start() {
    if (started_) return;
    out_.write(text_.data(), static_cast<std::streamsize>(open_));
    started_ = true;
  }
  /// Writes `element` (of the array, four spaces in).
  void add(const nlohmann::json& element) {
    start();
    write_json_element(out_, element, count_++ == 0);
  }
  /// Writes `count` elements that write_json_element wrote to `text` (a scratch file), the
  /// first of them as the first.
  void add_written(std::istream& text, std::size_t count) {
    if (count == 0) return;
    start();
    out_ << text.rdbuf();
    count_ += count;
  }
  /// The rest of the object, after the last element.
  void finish() {
    start();
    if (count_ > 0) out_ << "\n  ";
    out_.write(text_.data() + open_, static_cast<std::streamsize>(text_.size() - open_));
  }
  std::size_t count() const noexcept { return count_; }

 private:
  std::ostream& out_;
  std::string text_;
  std::size_t open_ = 0;
  std::size_t count_ = 0;
  bool started_ = false;
};

}  // namespace tune
