// Fuzz target: text from outside (a child's stderr, compiler output, a file name, a bucket
// label) on its way into JSON, onto a terminal and into a file name. The bytes are
// - the reason of an invalid trial, appended to a trial log and read back (a non-UTF-8 byte
//   once aborted every run at this write);
// - a string in JSON written by dump_json, which must parse back as valid_utf8 of the bytes;
// - text for the terminal (printable): valid UTF-8 on one line, with no control character, no
//   bidi control and no line separator;
// - a bucket label made a file name (encode_bucket, bounded_file_name): at most
//   max_file_name_bytes, one path component, creatable with its lock (a 243-character label
//   once made `File name too long` after a whole tune).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/search/trial_log.hpp>

#include "fuzz_check.hpp"

namespace {

const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                      "/tune-fuzz-outside-text-XXXXXX";
    tune::fuzz::check(::mkdtemp(dir.data()) != nullptr, "cannot create a scratch directory");
    return std::filesystem::path(dir);
  }();
  return path;
}

void check_json(std::string_view text) {
  const std::string valid = tune::valid_utf8(text);
  tune::fuzz::check(tune::valid_utf8(valid) == valid, "valid_utf8 is not idempotent");
  const std::string dumped = tune::dump_json(nlohmann::json{{"text", std::string(text)}});
  const nlohmann::json back = nlohmann::json::parse(dumped, nullptr, false);
  tune::fuzz::check(!back.is_discarded() && back["text"] == valid,
                    "dump_json did not write valid_utf8 of the text: " + dumped);
}

void check_terminal(std::string_view text) {
  const std::string shown = tune::printable(text);
  tune::fuzz::check(tune::valid_utf8(shown) == shown, "printable text is not UTF-8");
  tune::fuzz::check_terminal_safe(shown, "printable");
}

void check_log(std::string_view text) {
  const std::filesystem::path log = scratch_dir() / "trials.jsonl";
  std::filesystem::remove(log);
  tune::LogHeader header;
  header.tuner = "fuzz/outside";
  header.space_hash = "0123abcd";
  tune::Trial trial = tune::Trial::invalid(std::string(text));
  {
    tune::result<tune::TrialLog> opened = tune::TrialLog::open(log, header);
    tune::fuzz::check(opened.has_value(), "cannot open a fresh log");
    opened->append(trial);  // threw json type_error 316 on a non-UTF-8 byte
  }
  tune::result<tune::TrialLog> again = tune::TrialLog::open(log, header);
  tune::fuzz::check(again.has_value() && again->trials().size() == 1,
                    "the appended trial does not read back");
  tune::fuzz::check(again->trials()[0].state.invalid()->reason == tune::valid_utf8(text),
                    "the reason read back is not valid_utf8 of the text");
}

void check_file_name(std::string_view label) {
  const std::string enc = tune::encode_bucket(label);
  const std::string name = tune::bounded_file_name(enc, ".trials.jsonl");
  tune::fuzz::check(name.size() <= tune::max_file_name_bytes,
                    "a file name over the bound: " + name);
  tune::fuzz::check(name.find('/') == std::string::npos && name.find('\0') == std::string::npos,
                    "a file name that is not one path component: " + name);
  tune::fuzz::check(name == tune::bounded_file_name(enc, ".trials.jsonl"), "an unstable name");
  if (enc.size() + 13 <= tune::max_file_name_bytes)
    tune::fuzz::check(tune::decode_bucket(enc) == std::string(label), "a short label changed");
  const std::filesystem::path path = scratch_dir() / name;
  {
    tune::result<tune::FileLock> lock = tune::FileLock::try_lock(path, "log");
    tune::fuzz::check(lock.has_value(), "cannot lock " + path.string());
    std::ofstream out(path);
    tune::fuzz::check(static_cast<bool>(out), "cannot create " + path.string());
  }
  std::filesystem::remove(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.size() > (std::size_t{1} << 16)) return 0;  // longer adds nothing but time
  check_json(text);
  check_terminal(text);
  check_log(text);
  check_file_name(text);
  return 0;
}
