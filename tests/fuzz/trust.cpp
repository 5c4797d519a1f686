// Fuzz target: the trust boundary's inputs (tuner/core/store/trust.hpp), as anyone who can PUT
// to the remote store writes them. The first byte picks the object, the rest is its text:
// - even: a cache entry (`ac/<key>`), read by read_cache_entry as the store's fetch reads it,
//   then bound to a request: one made of the entry's own fields must match, a request for
//   another key or config must not, with a one-line, terminal-safe, bounded reason; a negative
//   verdict is never believed from the store;
// - odd: a shared trial, read as the store's trials are (parse_store_json,
//   shared_trial_from_json); as_hint keeps its times and drops every mark only this tune's
//   measurements may make.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tuner/core/base/text.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/store/remote_store.hpp>
#include <tuner/core/store/shared_trials.hpp>
#include <tuner/core/store/trust.hpp>

#include "fuzz_check.hpp"

namespace {

void check_reason(const std::optional<std::string>& why, const std::string& what) {
  tune::fuzz::check(why.has_value(), what + ": a foreign entry was taken for the request's");
  tune::fuzz::check(why->size() < 1000, what + ": a reason longer than a line");
  tune::fuzz::check_terminal_safe(*why, what);
}

void check_entry(std::string_view text) {
  tune::CacheEntryText read = tune::read_cache_entry(text);
  tune::fuzz::check(read.entry.has_value() == (read.kind == tune::CacheEntryText::Kind::entry),
                    "an entry without the kind that says so");
  if (!read.entry) {
    tune::fuzz::check(read.kind == tune::CacheEntryText::Kind::not_json || !read.why.empty(),
                      "a refused entry without a reason");
    return;
  }
  const tune::CacheEntry& e = *read.entry;
  tune::CompileRequest own;
  own.key = e.key;
  own.key_schema = e.key_schema;
  own.arch = e.arch;
  own.config_id = e.config_id;
  own.argv_keyed = e.argv;
  for (auto origin : {tune::EntryOrigin::local, tune::EntryOrigin::remote})
    tune::fuzz::check(!tune::entry_mismatch(e, own, origin), "an entry is not its own request's");
  tune::CompileRequest other = own;
  other.key = e.key + "0";
  check_reason(tune::entry_mismatch(e, other, tune::EntryOrigin::remote), "another key");
  other = own;
  other.config_id = e.config_id + ",X=1";
  check_reason(tune::entry_mismatch(e, other, tune::EntryOrigin::local), "another config");
  other = own;
  other.argv_keyed.push_back("-DX=1");
  check_reason(tune::entry_mismatch(e, other, tune::EntryOrigin::remote), "another command");
  tune::fuzz::check(tune::verdict_believed(e, tune::EntryOrigin::remote) == e.valid(),
                    "a negative verdict believed from the store");
  tune::fuzz::check(tune::verdict_believed(e, tune::EntryOrigin::local),
                    "the local cache's verdict not believed");
}

void check_trial(std::string_view text) {
  std::optional<nlohmann::json> j = tune::parse_store_json(text);
  if (!j) return;
  tune::result<tune::SharedTrial> shared = tune::shared_trial_from_json(*j);
  if (!shared) return;
  const tune::Trial before = shared->trial;
  std::optional<tune::Trial> hint = tune::as_hint(shared->trial);
  tune::fuzz::check(hint.has_value() == before.is_measured(), "an invalid trial made a hint");
  if (!hint) return;
  const tune::MeasuredState* m = before.state.measured();
  const tune::MeasuredState* h = hint->state.measured();
  tune::fuzz::check(
      h != nullptr && h->median_ms == m->median_ms && h->min_ms == m->min_ms && h->reps == m->reps,
      "a hint changed the times");
  tune::fuzz::check(m->min_ms <= m->median_ms, "a shared trial's minimum above its median");
  tune::fuzz::check(!hint->rejected_early && !hint->same_binary && !hint->checks &&
                        hint->runoff == nullptr && !hint->prior_rank && !hint->cached,
                    "a hint carries a mark only this tune may make");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    check_entry(text);
  else
    check_trial(text);
  return 0;
}
