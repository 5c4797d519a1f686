#include <tuner/core/build/identical_binaries.hpp>

#include <map>
#include <set>
#include <utility>

#include <fmt/core.h>

namespace tune {

IdenticalBinaries identical_binaries(const std::vector<Config>& configs,
                                     const std::vector<std::string>& cubins) {
  IdenticalBinaries out;
  std::set<std::string> distinct;
  std::set<std::string> names;
  for (std::size_t i = 0; i < configs.size() && i < cubins.size(); ++i) {
    if (cubins[i].empty()) continue;
    ++out.candidates;
    distinct.insert(cubins[i]);
    for (const auto& [name, value] : configs[i].params())
      names.insert(name);
  }
  out.distinct = distinct.size();
  if (out.distinct == out.candidates) return out;
  for (const std::string& param : names) {
    // The candidates grouped by every other param's value: one cubin per group, and a group of
    // two at least, means the param's values never reach the binary.
    std::map<std::string, std::pair<std::string, std::size_t>> groups;  // rest -> cubin, count
    bool changes = false;
    bool compared = false;
    for (std::size_t i = 0; i < configs.size() && i < cubins.size() && !changes; ++i) {
      if (cubins[i].empty() || !configs[i].params().contains(param)) continue;
      Config::Map params = configs[i].params();
      params.erase(param);
      const std::string id = Config(std::move(params)).id();
      auto [it, fresh] = groups.try_emplace(id, cubins[i], 0);
      ++it->second.second;
      if (!fresh) {
        compared = true;
        changes = it->second.first != cubins[i];
      }
    }
    if (compared && !changes) out.params.push_back(param);
  }
  return out;
}

std::vector<std::string> describe(const IdenticalBinaries& found) {
  std::vector<std::string> out;
  if (found.distinct == found.candidates) return out;
  const std::string counts =
      fmt::format("{} candidates, {} distinct", found.candidates, found.distinct);
  for (const std::string& p : found.params)
    out.push_back(
        fmt::format("param '{}' never changes the binary: {}; does the kernel read it "
                    "(spelled as the space declares it, or as a placeholder of the "
                    "template entry)?",
                    p, counts));
  if (out.empty())
    out.push_back(fmt::format("{} candidates compiled to {} distinct binaries", found.candidates,
                              found.distinct));
  out.push_back(
      "a tune measures each binary once: a config whose cubin another config has shares its "
      "trial (marked same_binary)");
  return out;
}

}  // namespace tune
