// Fuzz target: a re-tune's prior (`<bucket>.prior.jsonl`, or the log a `[search] prior` names),
// a log another build wrote and anyone may have edited. The bytes are written as a file and
// read by read_prior, both objectives, for one bucket and for any bucket of the kernel. A prior
// that reads is ranked best first, each config once with a finite median above 0, its
// warnings bounded and each on one line; nothing reads past the file.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include <tuner/core/search/prior.hpp>

#include "fuzz_check.hpp"

namespace {

const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tune-fuzz-prior-XXXXXX";
    tune::fuzz::check(::mkdtemp(dir.data()) != nullptr, "cannot create a scratch directory");
    return std::filesystem::path(dir);
  }();
  return path;
}

void check_prior(const std::filesystem::path& path, bool any_bucket, bool maximize) {
  tune::result<tune::Prior> p = tune::read_prior(path, "fuzz/b", any_bucket, maximize);
  if (!p) {
    tune::fuzz::check(!p.error().message.empty(), "a refusal without a message");
    tune::fuzz::check(p.error().message.find('\n') == std::string::npos, "a refusal on two lines");
    return;
  }
  tune::fuzz::check(!p->ranked.empty(), "a prior without a measured config");
  tune::fuzz::check(p->warnings.size() <= tune::max_prior_warnings + 1,
                    "more warnings than a prior names");
  for (const std::string& w : p->warnings)
    tune::fuzz::check(w.find('\n') == std::string::npos, "a warning on two lines");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < p->ranked.size(); ++i) {
    const double v = p->ranked[i].second;
    tune::fuzz::check(std::isfinite(v) && v > 0, "a prior value that is not a finite time");
    tune::fuzz::check(ids.insert(p->ranked[i].first.id()).second, "a config ranked twice");
    if (i > 0) {
      const double before = p->ranked[i - 1].second;
      tune::fuzz::check(maximize ? before >= v : before <= v, "a prior not ranked best first");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = scratch_dir() / "b.prior.jsonl";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  for (bool any_bucket : {false, true})
    for (bool maximize : {false, true})
      check_prior(path, any_bucket, maximize);
  return 0;
}
