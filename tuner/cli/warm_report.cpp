#include <tuner/cli/warm_report.hpp>

#include <set>

#include <fmt/core.h>

#include <tuner/core/base/hash.hpp>

namespace tune::cli {

namespace {

// The ids of a group, the first three named: `A, B, C and 10 more`.
std::string some_ids(const std::vector<std::string>& ids) {
  constexpr std::size_t named = 3;
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < named; ++i)
    out += (i == 0 ? "" : ", ") + ids[i];
  if (ids.size() > named) out += fmt::format(" and {} more", ids.size() - named);
  return out;
}

}  // namespace

std::vector<std::string> describe_invalid(const std::string& kernel, const std::string& arch,
                                          const std::vector<CandidateOutcome>& outcomes) {
  struct Group {
    std::string status, reason;
    std::vector<std::string> ids;
    std::filesystem::path entry;
  };
  std::vector<Group> groups;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const CandidateOutcome& o : outcomes) {
    if (o.missing || o.valid) continue;
    auto [it, added] = index.try_emplace({o.status, o.reason}, groups.size());
    if (added) groups.push_back({o.status, o.reason, {}, o.entry});
    groups[it->second].ids.push_back(o.config_id);
  }
  std::vector<std::string> lines;
  for (const Group& g : groups) {
    if (g.ids.size() == 1)
      lines.push_back(fmt::format("tuner warm: {} {} {}: invalid ({}): {} (see {})", kernel, arch,
                                  g.ids[0], g.status, g.reason, g.entry.string()));
    else
      lines.push_back(fmt::format(
          "tuner warm: {} {}: {} candidates invalid ({}) the same way: {} ({}; see {})", kernel,
          arch, g.ids.size(), g.status, g.reason, some_ids(g.ids), g.entry.string()));
  }
  return lines;
}

std::vector<std::string> buckets_without_valid(const std::string& kernel, const std::string& arch,
                                               const Space& space,
                                               const std::vector<CandidateOutcome>& outcomes) {
  std::map<std::string, const CandidateOutcome*> by_id;
  for (const CandidateOutcome& o : outcomes)
    by_id.emplace(o.config_id, &o);
  std::vector<std::string> lines;
  for (const Bucket& bucket : space.buckets()) {
    const std::vector<Config> configs = space.configs(bucket).value();
    std::size_t invalid = 0;
    bool open = configs.empty();  // no config: the configure refuses that, not warm
    for (const Config& c : configs) {
      auto it = by_id.find(c.id());
      if (it == by_id.end() || it->second->missing || it->second->valid) {
        open = true;
        break;
      }
      ++invalid;
    }
    if (open) continue;
    lines.push_back(fmt::format(
        "tuner warm: {} {}: error: bucket '{}' has no valid candidate (all {} invalid, above): "
        "it can never be tuned or pinned; fix the kernel, its flags or its space",
        kernel, arch, bucket.name, invalid));
  }
  return lines;
}

std::filesystem::path warm_stamp(const Manifest& manifest, const std::string& arch,
                                 const std::string& config_id) {
  return manifest.log_dir / arch / "warm" /
         fmt::format("c-{}.stamp", sha256_hex(config_id).substr(0, 16));
}

}  // namespace tune::cli
