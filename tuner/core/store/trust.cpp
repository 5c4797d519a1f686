#include <tuner/core/store/trust.hpp>

#include <fmt/core.h>

#include <tuner/core/base/text.hpp>
#include <tuner/core/build/cache_key.hpp>

namespace tune {

std::optional<std::string> entry_mismatch(const CacheEntry& entry, const CompileRequest& request,
                                          EntryOrigin origin) {
  auto differs = [](const char* field, const std::string& has, const std::string& want) {
    return fmt::format("its {} is '{}', the key's is '{}'", field, shorten(printable(has), 120),
                       shorten(printable(want), 120));
  };
  if (entry.key != request.key) return differs("key", entry.key, request.key);
  if (entry.key_schema != request.key_schema)
    return differs("key schema", entry.key_schema, request.key_schema);
  if (entry.arch != request.arch) return differs("arch", entry.arch, request.arch);
  if (entry.config_id != request.config_id)
    return differs("config", entry.config_id, request.config_id);
  if ((origin == EntryOrigin::remote || !entry.argv.empty()) && entry.argv != request.argv_keyed)
    return differs("compile command", shell_join(entry.argv), shell_join(request.argv_keyed));
  return std::nullopt;
}

bool verdict_believed(const CacheEntry& entry, EntryOrigin origin) {
  return entry.valid() || origin == EntryOrigin::local;
}

std::optional<Trial> as_hint(Trial trial) {
  if (!trial.is_measured()) return std::nullopt;
  trial.rejected_early = false;
  trial.same_binary.reset();
  trial.checks.reset();
  trial.runoff = nullptr;
  trial.prior_rank.reset();
  trial.cached = false;
  return trial;
}

}  // namespace tune
