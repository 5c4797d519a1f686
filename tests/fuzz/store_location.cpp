// Fuzz target: text the environment and the configure hand to tune as names of places:
// - a store location (TUNE_REMOTE_STORE, --remote, a manifest's remote_store, the configure's
//   `tuner store check`), read by parse_store_location: a location it accepts holds no
//   credentials, no query, fragment or parameter, no control or bidi character, reads back as
//   itself, and is an http(s) URL with a host or an absolute directory; a refusal never echoes
//   the location (it may hold a secret);
// - CUDA_VISIBLE_DEVICES, counted by visible_device_count as the driver reads it: at most one
//   device per entry.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <tuner/core/base/text.hpp>
#include <tuner/core/scale/shard.hpp>
#include <tuner/core/store/store.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tune::result<tune::StoreLocation> loc = tune::parse_store_location(text, "fuzz");
  if (!loc) {
    const std::string& m = loc.error().message;
    tune::fuzz::check(!m.empty(), "a refusal without a message");
    tune::fuzz::check_terminal_safe(m, "a refusal");
    // Nothing of the location is in the message: it is one of the reader's fixed messages.
    static const std::set<std::string> fixed = [] {
      std::set<std::string> out;
      for (const char* sample : {"http://u:p@h/x", "http://h/\x1b", "http://h/x?t", "http://h/../x",
                                 "http:///x", "http://a b/x", "relative/dir", ""})
        out.insert(tune::parse_store_location(sample, "fuzz").error().message);
      return out;
    }();
    tune::fuzz::check(fixed.count(m) == 1, "a refusal that is not a fixed message: " + m);
  } else {
    const std::string& t = loc->text;
    tune::fuzz::check(!t.empty(), "an empty location accepted");
    tune::fuzz::check(tune::printable(t) == t, "a location that does not print as itself");
    tune::fuzz::check(t.find_first_of("?#;") == std::string::npos,
                      "a query, a fragment or a parameter accepted");
    if (loc->http) {
      tune::fuzz::check(t.starts_with("http://") || t.starts_with("https://"),
                        "an HTTP store without its scheme");
      const std::string_view rest = std::string_view(t).substr(t.find("://") + 3);
      const std::string_view host = rest.substr(0, rest.find('/'));
      tune::fuzz::check(!host.empty(), "an HTTP store without a host");
      tune::fuzz::check(host.find('@') == std::string_view::npos, "credentials accepted");
      tune::fuzz::check(t.back() != '/', "a trailing '/' kept");
    } else {
      tune::fuzz::check(t.front() == '/', "a directory store that is not absolute");
    }
    tune::result<tune::StoreLocation> again = tune::parse_store_location(t, "fuzz");
    tune::fuzz::check(again && again->text == t && again->http == loc->http,
                      "a location does not read back as itself");
  }
  const std::size_t entries =
      1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), ','));
  tune::fuzz::check(tune::visible_device_count(text) <= entries,
                    "more visible devices than entries");
  return 0;
}
