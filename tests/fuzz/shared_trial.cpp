// Fuzz target: a shared trial as the remote store answers it (`ac/<trial key>`, written by any
// machine that can PUT to the store). The bytes go through the store's JSON reading and
// shared_trial_from_json; a trial that reads must survive its JSON (to_json, read again) and
// its names must print safely on a terminal.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <tuner/core/base/text.hpp>
#include <tuner/core/store/remote_store.hpp>
#include <tuner/core/store/shared_trials.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<nlohmann::json> j = tune::parse_store_json(text);
  if (!j) return 0;
  tune::result<tune::SharedTrial> shared = tune::shared_trial_from_json(*j);
  if (!shared) {
    tune::fuzz::check(!shared.error().message.empty(), "a diagnostic without a message");
    return 0;
  }
  const nlohmann::json back_json = tune::to_json(*shared);
  std::optional<nlohmann::json> reread = tune::parse_store_json(back_json.dump(2) + "\n");
  tune::fuzz::check(reread.has_value(), "a shared trial's JSON does not read");
  tune::result<tune::SharedTrial> back = tune::shared_trial_from_json(*reread);
  tune::fuzz::check(back.has_value(), "a shared trial does not survive its JSON");
  tune::fuzz::check(back->trial.id() == shared->trial.id() && back->host == shared->host &&
                        back->device == shared->device && back->driver == shared->driver,
                    "a shared trial reads back different");
  for (const std::string& name : {shared->host, shared->device, shared->driver}) {
    const std::string shown = tune::printable(name);
    tune::fuzz::check_terminal_safe(shown, "a remote name");
  }
  return 0;
}
