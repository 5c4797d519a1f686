// The prior of a bucket's re-tune (docs/search.md "Re-tunes start from what was measured"):
// where its log and fallbacks are, and what `tuner status` says is available, judged as the
// tune judges it (kernel_tune.hpp).
#include <tuner/core/tune/kernel_tune.hpp>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/search/trial_log.hpp>

namespace tune {

namespace fs = std::filesystem;

fs::path prior_log_path(const fs::path& dir, const std::string& bucket) {
  return dir / bucket_file_name(bucket, ".prior.jsonl");
}

namespace {

// How far apart two buckets' shapes are: per value, the distance of the log2 of two positive
// ints, else 0 when equal and 4 when not; a value only one has counts 4.
double shape_distance(const Shape& a, const Shape& b) {
  double d = 0;
  // Lambdas capture `key`, not the binding: clang 14 (the fuzz preset) cannot capture one.
  for (const auto& [name, v] : a) {
    const std::string& key = name;
    auto it = std::find_if(b.begin(), b.end(), [&](const auto& p) { return p.first == key; });
    if (it == b.end()) {
      d += 4;
    } else if (v.is_int() && it->second.is_int() && v.as_int() > 0 && it->second.as_int() > 0) {
      d += std::abs(std::log2(static_cast<double>(v.as_int())) -
                    std::log2(static_cast<double>(it->second.as_int())));
    } else if (!(v == it->second)) {
      d += 4;
    }
  }
  for (const auto& entry : b)
    if (std::none_of(a.begin(), a.end(), [&](const auto& p) { return p.first == entry.first; }))
      d += 4;
  return d;
}

}  // namespace

std::vector<fs::path> prior_fallbacks(const KernelBuild& build, const Bucket& bucket,
                                      const std::string& arch) {
  const std::optional<std::string>& want = build.space.search().prior;
  std::vector<fs::path> out;
  if (!want) return out;
  const fs::path& root = build.manifest.log_dir;
  auto both = [&](const fs::path& dir, const std::string& b) {
    out.push_back(dir / bucket_file_name(b, ".trials.jsonl"));
    out.push_back(dir / bucket_file_name(b, ".prior.jsonl"));
  };
  if (want->starts_with("bucket:")) {
    both(root / arch, want->substr(7));
  } else if (want->starts_with("arch:")) {
    both(root / want->substr(5), bucket.name);
  } else {  // auto: the same bucket on another arch, then the nearest other bucket here
    std::vector<std::string> archs;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root, ec))
      if (e.is_directory(ec) && e.path().filename().string().starts_with("sm_") &&
          e.path().filename() != arch)
        archs.push_back(e.path().filename().string());
    std::sort(archs.begin(), archs.end());
    for (const std::string& a : archs)
      both(root / a, bucket.name);
    std::vector<std::pair<double, std::size_t>> near;
    const std::vector<Bucket>& buckets = build.space.buckets();
    for (std::size_t i = 0; i < buckets.size(); ++i)
      if (buckets[i].name != bucket.name)
        near.emplace_back(shape_distance(bucket.shape, buckets[i].shape), i);
    std::stable_sort(near.begin(), near.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [d, i] : near)
      both(root / arch, buckets[i].name);
  }
  return out;
}

LogHeader bucket_log_header(const KernelBuild& build, const Bucket& bucket, const std::string& arch,
                            const CacheKeyer& keyer) {
  LogHeader h;
  h.tuner = build.manifest.kernel + "/" + bucket.name;
  const std::vector<Config> configs = build.space.configs(bucket).value();
  h.space_hash = Space::pruned_space_hash(configs);
  h.arch = arch;
  h.source_hash = source_hash(build.manifest);
  h.toolchain = keyer.toolchain();
  const BuildIdentity identity = keyer.identity(arch);
  h.identity = identity.digest();
  h.identity_inputs = to_json(identity);
  h.search = build.space.search().resolved(configs.size()).identity();
  return h;
}

std::optional<Prior> available_prior(const KernelBuild& build, const Bucket& bucket,
                                     const std::string& arch) {
  const fs::path dir = build.manifest.log_dir / arch;
  const std::string tuner = build.manifest.kernel + "/" + bucket.name;
  // The bucket's log, when the re-tune sets it aside: the same judgement as the tune's
  // (judge_log); then, with the same checks as the run's (SearchRun::load_prior), the bucket's
  // prior and the fallbacks, none of which may be the log a re-tune writes.
  const fs::path log = dir / bucket_file_name(bucket.name, ".trials.jsonl");
  std::error_code ec;
  if (fs::is_regular_file(log, ec))
    if (result<LogContents> logged = read_log(log)) {
      const CacheKeyer keyer(build.manifest, build.space);
      if (judge_log(logged->header, bucket_log_header(build, bucket, arch, keyer)).fate ==
          LogFate::prior)
        if (result<Prior> p = read_prior(log, tuner, false, false)) return std::move(*p);
    }
  std::vector<std::pair<fs::path, bool>> candidates = {{prior_log_path(dir, bucket.name), false}};
  for (fs::path& p : prior_fallbacks(build, bucket, arch))
    candidates.emplace_back(std::move(p), true);
  for (const auto& [path, any_bucket] : candidates) {
    if (prior_absent(path)) continue;
    if (result<Prior> p = read_prior(path, tuner, any_bucket, false, log)) return std::move(*p);
  }
  return std::nullopt;
}

}  // namespace tune
