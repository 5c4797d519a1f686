// The Autotuner's builder: each setter keeps its setting for run_objective (autotuner.cpp).
#include <tuner/core/search/autotuner.hpp>

namespace tune {

Autotuner::Autotuner(std::string name) {
  settings_.name = std::move(name);
}

Autotuner& Autotuner::prune(std::function<bool(const Config&)> keep) {
  settings_.prune = std::move(keep);
  return *this;
}
Autotuner& Autotuner::require(std::vector<Config> incumbents) {
  settings_.require = std::move(incumbents);
  return *this;
}
Autotuner& Autotuner::soft_incumbent(Config config) {
  settings_.soft_incumbent = std::move(config);
  return *this;
}
Autotuner& Autotuner::runoff_policy(RunoffPolicy policy) {
  settings_.runoff_policy = policy;
  return *this;
}
Autotuner& Autotuner::early_reject(std::optional<double> margin_pct, double alpha) {
  settings_.reject_margin_pct = margin_pct;
  settings_.reject_alpha = alpha;
  return *this;
}
Autotuner& Autotuner::budget(double seconds) {
  settings_.budget_s = seconds;
  return *this;
}
Autotuner& Autotuner::search(SearchSettings settings) {
  settings_.search = std::move(settings);
  return *this;
}
Autotuner& Autotuner::arch(std::string arch) {
  settings_.arch = std::move(arch);
  return *this;
}
Autotuner& Autotuner::log(std::filesystem::path path) {
  settings_.log_path = std::move(path);
  return *this;
}
Autotuner& Autotuner::prior_log(std::filesystem::path path) {
  settings_.prior_log = std::move(path);
  return *this;
}
Autotuner& Autotuner::prior_fallbacks(std::vector<std::filesystem::path> paths) {
  settings_.prior_fallbacks = std::move(paths);
  return *this;
}
Autotuner& Autotuner::space_hash(std::string hash) {
  settings_.space_hash = std::move(hash);
  return *this;
}
Autotuner& Autotuner::source_hash(std::string hash) {
  settings_.source_hash = std::move(hash);
  return *this;
}
Autotuner& Autotuner::toolchain(std::string fingerprint) {
  settings_.toolchain = std::move(fingerprint);
  return *this;
}
Autotuner& Autotuner::identity(const BuildIdentity& identity) {
  settings_.identity = identity.digest();
  settings_.identity_inputs = to_json(identity);
  return *this;
}
Autotuner& Autotuner::maximize(bool on) {
  settings_.maximize = on;
  return *this;
}
Autotuner& Autotuner::compile_bound(bool on) {
  settings_.compile_bound = on;
  return *this;
}

Autotuner& Autotuner::think_beside(bool on) {
  settings_.think_beside = on;
  return *this;
}
Autotuner& Autotuner::on_progress(std::function<void(const Progress&)> fn) {
  settings_.on_progress = std::move(fn);
  return *this;
}
Autotuner& Autotuner::on_warning(std::function<void(const std::string&)> fn) {
  settings_.on_warning = std::move(fn);
  return *this;
}

}  // namespace tune
