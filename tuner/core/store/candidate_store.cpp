#include <tuner/core/store/candidate_store.hpp>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/store/trust.hpp>

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
                               std::optional<double> compile_timeout_s, CompilerLauncher launcher)
    : cache_(std::move(cache)),
      remote_(remote),
      compile_log_(std::move(compile_log)),
      compile_timeout_s_(compile_timeout_s),
      launcher_(std::move(launcher)) {}

std::optional<CacheEntry> CandidateStore::find(const CompileRequest& request) const {
  if (std::optional<CacheEntry> local = lookup_local(request)) return local;
  if (remote_ != nullptr) return remote_->fetch_entry(cache_, request);
  return std::nullopt;
}

// The local cache's entry of the request, when it is the request's candidate (an entry copied
// under another key is a miss, docs/trust.md).
std::optional<CacheEntry> CandidateStore::lookup_local(const CompileRequest& request) const {
  std::optional<CacheEntry> local = cache_.lookup(request.key);
  if (local && entry_mismatch(*local, request, EntryOrigin::local)) return std::nullopt;
  return local;
}

CompileOutcome CandidateStore::get(const CompileRequest& request) const {
  CompileRequest timed = request;
  // The request's own timeout (the adaptive compile cap) when it is the shorter.
  if (!request.timeout_s || (compile_timeout_s_ && *compile_timeout_s_ < *request.timeout_s))
    timed.timeout_s = compile_timeout_s_;
  timed.launcher = launcher_;
  std::optional<CacheEntry> local = cache_.lookup(request.key);
  if (local && entry_mismatch(*local, request, EntryOrigin::local)) {
    timed.cached_refused = true;
    local.reset();
  }
  if (local && entry_serves(*local, timed)) return {std::move(*local)};
  // The store's entry is only ever a valid one of this candidate (fetch_entry): with
  // retry_invalid it may stand in for a local invalid one.
  if (remote_ != nullptr && (!local || request.retry_invalid))
    if (std::optional<CacheEntry> fetched = remote_->fetch_entry(cache_, request))
      if (entry_serves(*fetched, timed)) return {std::move(*fetched), false, true};
  CompileOutcome outcome = compile_into_cache(cache_, timed, compile_log_);
  if (remote_ != nullptr && outcome.compiled) remote_->upload_entry(cache_, outcome.entry);
  return outcome;
}

}  // namespace tune
