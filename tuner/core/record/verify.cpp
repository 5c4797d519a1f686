#include <tuner/core/record/verify.hpp>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include <tuner/core/base/text.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/build/toolchain.hpp>

namespace tune {

result<Workspace> current_workspace(const Manifest& manifest, const Space& space,
                                    std::string_view arch, const std::string& toolchain) {
  Workspace w;
  w.kernel = manifest.kernel;
  w.arch = std::string(arch);
  w.source_hash = source_hash(manifest);
  w.space_hash = space.space_hash();
  w.toolchain = toolchain;
  w.identity = CacheKeyer(manifest, space, toolchain).identity(arch);
  if (!manifest.host_compiler.empty()) w.context.host_compiler = manifest.host_compiler;
  w.retune_command = manifest.retune_command();
  for (const auto& b : space.buckets()) {
    result<std::vector<Config>> configs = space.configs(b);
    if (!configs) return fail(configs.error());
    Workspace::Bucket wb;
    wb.name = b.name;
    wb.pruned_space_hash = Space::pruned_space_hash(*configs);
    for (const auto& c : *configs)
      wb.config_ids.push_back(c.id());
    w.buckets.push_back(std::move(wb));
  }
  return w;
}

namespace {

// What differs between two argument vectors or file lists: `'-DX=1' is gone, '-DX=2' is new`.
std::string difference(const std::vector<std::string>& before,
                       const std::vector<std::string>& now) {
  std::vector<std::string> gone, added;
  for (const std::string& b : before)
    if (std::find(now.begin(), now.end(), b) == now.end()) gone.push_back(b);
  for (const std::string& n : now)
    if (std::find(before.begin(), before.end(), n) == before.end()) added.push_back(n);
  std::string out;
  if (!gone.empty()) out += quoted_list(gone) + (gone.size() == 1 ? " is gone" : " are gone");
  if (!added.empty())
    out += (out.empty() ? "" : ", ") + quoted_list(added) +
           (added.size() == 1 ? " is new" : " are new");
  return out;
}

// `argv` as one line to paste into a shell: a word with anything but [A-Za-z0-9_./=,:+@%-] in
// single quotes (a bucket named `m<=512` would otherwise be a redirection; shell_join, for
// showing compile commands, leaves `<` and `>` bare).
std::string shell_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("_./=,:+@%-").find(c) != std::string_view::npos;
    });
    std::string word = plain ? a : "'";
    if (!plain) {
      for (char c : a)
        word += c == '\'' ? std::string("'\\''") : std::string(1, c);
      word += '\'';
    }
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

// Why the key of `e` moved from the recorded digest, in words. The kernel cache still holds
// the entry of the recorded key when this tree (or the store) compiled it: its argument vector
// and file list name a changed flag or header. Without it, what the key reads is listed.
std::string key_change(const KernelBuild& build, const CacheKeyer& keyer, const std::string& arch,
                       const RecordEntry& e, bool source_changed,
                       const std::optional<BuildIdentity>& tuned_for) {
  const Manifest& m = build.manifest;
  // The record names the inputs it was tuned for: exactly what changed (the source itself is
  // named above already).
  if (tuned_for) {
    BuildIdentity was = *tuned_for;
    BuildIdentity now = keyer.identity(arch);
    if (source_changed && !keyer.files().empty()) {
      const std::string& source = keyer.files().front().name;
      std::erase_if(was.files, [&](const auto& f) { return f.first == source; });
      std::erase_if(now.files, [&](const auto& f) { return f.first == source; });
    }
    if (std::vector<std::string> changes = identity_changes(was, now); !changes.empty())
      return join(changes, ", ");
  }
  std::vector<std::string> files;
  for (const KeyedFile& f : keyer.files())
    files.push_back(f.name);
  std::vector<std::string> headers(files.begin() + (files.empty() ? 0 : 1), files.end());
  const std::optional<CacheEntry> old =
      KernelCache(effective_cache_dir(m.cache_dir)).lookup(e.cache_key->digest);
  if (old) {
    const std::vector<std::string> argv = keyer.keyed_argv(e.config, arch);
    if (old->argv != argv) return "its compile command changed: " + difference(old->argv, argv);
    if (old->dependencies != files)
      return "the files it includes changed: " + difference(old->dependencies, files);
  }
  if (source_changed) return "its source changed (above)";
  if (old) {
    if (headers.empty()) return "what it reads changed";
    return "a header it includes changed (it reads " + quoted_list(headers) + ")";
  }
  return fmt::format(
      "a header it includes ({}), a compile flag or the params changed: `{}` lists what the key "
      "reads",
      headers.empty() ? std::string("none") : quoted_list(headers),
      shell_line(m.archs.size() > 1
                     ? std::vector<std::string>{"tuner", "key", "--explain", "--manifest",
                                                m.path.string(), "--arch", arch, "--config",
                                                e.config.id()}
                     : std::vector<std::string>{"tuner", "key", "--explain", "--manifest",
                                                m.path.string(), "--config", e.config.id()}));
}

// Fills in `changes` (what drifted, in words) and `pin_commands` of a record that is not fresh.
void explain(Verification& v, const KernelBuild& build, const std::string& arch,
             const CacheKeyer& keyer, const Workspace& w, const std::optional<Record>& record) {
  if (v.ok() || v.state == RecordState::unreadable) return;
  const Manifest& m = build.manifest;
  bool source_changed = false;
  if (record && record->schema_version == record_schema_version) {
    if (record->source_hash != w.source_hash) {
      std::vector<std::string> sources;
      for (const auto& src : m.sources)
        sources.push_back(display_path(m, src));
      v.changes.push_back("the kernel's source changed since the record was tuned: " +
                          quoted_list(sources));
      source_changed = true;
    }
    if (record->space_hash != w.space_hash)
      v.changes.push_back("the space changed since the record was tuned: " +
                          quoted_list({display_path(m, m.space)}));
    if (record->toolchain != w.toolchain)
      v.changes.push_back(
          fmt::format("the CUDA toolchain changed: tuned with '{}', this host has '{}'",
                      record->toolchain, w.toolchain));
    else {
      // Entries whose key moved, grouped by why (every bucket usually moves for one reason).
      std::vector<std::pair<std::string, std::vector<std::string>>> why;
      for (const RecordEntry& e : record->entries()) {
        const Workspace::Bucket* b = w.bucket(e.bucket);
        if (!e.cache_key || b == nullptr || e.config_id != e.config.id() ||
            std::find(b->config_ids.begin(), b->config_ids.end(), e.config_id) ==
                b->config_ids.end())
          continue;
        const CacheKey now = keyer.key(e.config, arch);
        if (e.cache_key->schema != now.schema || e.cache_key->digest == now.digest) continue;
        const std::string text =
            key_change(build, keyer, arch, e, source_changed, record->identity);
        auto it =
            std::find_if(why.begin(), why.end(), [&](const auto& p) { return p.first == text; });
        if (it == why.end())
          why.push_back({text, {e.bucket}});
        else
          it->second.push_back(e.bucket);
      }
      for (const auto& [text, buckets] : why)
        v.changes.push_back(fmt::format("the cache key of {} {} changed: {}",
                                        buckets.size() == 1 ? "entry" : "entries",
                                        quoted_list(buckets), text));
    }
  }
  // Without a GPU: pin each bucket's recorded config again (its keys are then the current ones),
  // or, for a bucket without one, the space's first required config in it (else its first).
  std::vector<std::string> archs_arg;
  if (m.archs.size() > 1) archs_arg = {"--arch", arch};
  for (const Workspace::Bucket& b : w.buckets) {
    std::optional<std::string> id;
    if (record)
      if (const RecordEntry* e = record->get(b.name))
        if (std::find(b.config_ids.begin(), b.config_ids.end(), e->config.id()) !=
            b.config_ids.end())
          id = e->config.id();
    for (const Config& c : build.space.require())
      if (!id && std::find(b.config_ids.begin(), b.config_ids.end(), c.id()) != b.config_ids.end())
        id = c.id();
    if (!id && !b.config_ids.empty()) id = b.config_ids.front();
    if (!id) continue;
    std::vector<std::string> cmd = {"tuner", "record", "set", "--manifest", m.path.string()};
    cmd.insert(cmd.end(), archs_arg.begin(), archs_arg.end());
    cmd.insert(cmd.end(), {"--bucket", b.name, "--config", *id});
    v.pin_commands.push_back(shell_line(cmd));
  }
}

// The workspace of `arch` and a key recomputation for it, handed to `check`; then what changed
// and how to pin, for a record that is not fresh (`record`: the one checked, when it reads).
template <typename Check>
result<Verification> with_workspace(const KernelBuild& build, std::string_view arch,
                                    const std::optional<Record>& record, Check&& check) {
  CacheKeyer keyer(build.manifest, build.space);
  result<Workspace> w = current_workspace(build.manifest, build.space, arch, keyer.toolchain());
  if (!w) return fail(w.error());
  std::string a(arch);
  RecomputeKey recompute = [&](const RecordEntry& e) {
    CacheKey k = keyer.key(e.config, a);
    return L2Key{k.schema, k.digest};
  };
  Verification v = check(*w, recompute);
  explain(v, build, a, keyer, *w, record);
  return v;
}

}  // namespace

result<Verification> verify_kernel_record(const KernelBuild& build, std::string_view arch,
                                          const std::filesystem::path& record_path,
                                          const VerifyOptions& options) {
  std::optional<Record> record;
  std::error_code ec;
  if (std::filesystem::exists(record_path, ec))
    if (result<Record> r = Record::load(record_path)) record = std::move(*r);
  return with_workspace(build, arch, record,
                        [&](const Workspace& w, const RecomputeKey& recompute) {
                          return load_verified(record_path, w, recompute, options);
                        });
}

result<Verification> verify_kernel_record(const KernelBuild& build, std::string_view arch,
                                          Record record, const VerifyOptions& options) {
  const std::optional<Record> copy = record;
  return with_workspace(build, arch, copy, [&](const Workspace& w, const RecomputeKey& recompute) {
    return verify_record(std::move(record), w, recompute, options);
  });
}

}  // namespace tune
