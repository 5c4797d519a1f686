#include <tuner/core/store/candidate_store.hpp>

#include <tuner/core/base/atomic_file.hpp>

namespace tune {

namespace fs = std::filesystem;

CompileRequest compile_request(const Manifest& manifest, const CacheKeyer& keyer,
                               const Config& config, const std::string& arch) {
  const CacheKey key = keyer.key(config, arch);
  CompileRequest request;
  request.key = key.digest;
  request.key_schema = key.schema;
  request.arch = arch;
  request.config_id = config.id();
  request.entry = manifest.entry;
  request.entry_template = keyer.entry_template();
  request.argv_keyed = keyer.keyed_argv(config, arch);
  for (const KeyedFile& f : keyer.files())
    request.dependencies.push_back(f.name);
  // Copies: the request may outlive the caller's loop variables.
  request.command = [&keyer, config, arch](const fs::path& output) {
    CompileCommand command = keyer.compile_command(config, arch, output);
    if (command.params_header)
      write_file_atomic(*command.params_header, command.params_header_text);
    if (command.entry_unit) write_file_atomic(*command.entry_unit, command.entry_unit_text);
    return command.argv;
  };
  return request;
}

CandidateStore::CandidateStore(KernelCache cache, RemoteStore* remote, fs::path compile_log,
                               std::optional<double> compile_timeout_s)
    : cache_(std::move(cache)),
      remote_(remote),
      compile_log_(std::move(compile_log)),
      compile_timeout_s_(compile_timeout_s) {}

std::optional<CacheEntry> CandidateStore::find(std::string_view key) const {
  if (std::optional<CacheEntry> local = cache_.lookup(key)) return local;
  if (remote_ != nullptr) return remote_->fetch_entry(cache_, key);
  return std::nullopt;
}

CompileOutcome CandidateStore::get(const CompileRequest& request) const {
  std::optional<CacheEntry> local = cache_.lookup(request.key);
  if (local && entry_serves(*local, compile_timeout_s_)) return {std::move(*local)};
  if (remote_ != nullptr && !local)
    if (std::optional<CacheEntry> fetched = remote_->fetch_entry(cache_, request.key))
      if (entry_serves(*fetched, compile_timeout_s_)) return {std::move(*fetched), false, true};
  CompileRequest timed = request;
  timed.timeout_s = compile_timeout_s_;
  CompileOutcome outcome = compile_into_cache(cache_, timed, compile_log_);
  if (remote_ != nullptr && outcome.compiled) remote_->upload_entry(cache_, outcome.entry);
  return outcome;
}

}  // namespace tune
