#include <tuner/core/base/identity.hpp>

#include <algorithm>
#include <map>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

std::string BuildIdentity::digest() const {
  Sha256 h;
  h.update_field(identity_schema_tag);
  h.update_field(arch);
  h.update_field(std::to_string(argv.size()));
  for (const std::string& a : argv)
    h.update_field(a);
  h.update_field(entry);
  h.update_field(std::to_string(files.size()));
  for (const auto& [name, sha] : files) {
    h.update_field(name);
    h.update_field(sha);
  }
  h.update_field(toolchain);
  return "i1:" + h.hex_digest();
}

nlohmann::json to_json(const BuildIdentity& id) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [name, sha] : id.files)
    files[name] = sha;
  return {{"arch", id.arch},
          {"argv", id.argv},
          {"entry", id.entry},
          {"files", std::move(files)},
          {"toolchain", id.toolchain}};
}

result<BuildIdentity> identity_from_json(const nlohmann::json& j) {
  auto bad = [](const std::string& what) {
    return fail("", 0, 0, fmt::format("the identity's '{}' is missing or of the wrong kind", what));
  };
  if (!j.is_object()) return fail("", 0, 0, "the identity must be a JSON object");
  BuildIdentity id;
  for (auto [key, field] : {std::pair{"arch", &id.arch}, std::pair{"entry", &id.entry},
                            std::pair{"toolchain", &id.toolchain}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return bad(key);
    *field = it->get<std::string>();
  }
  auto argv = j.find("argv");
  if (argv == j.end() || !argv->is_array()) return bad("argv");
  for (const auto& a : *argv) {
    if (!a.is_string()) return bad("argv");
    id.argv.push_back(a.get<std::string>());
  }
  auto files = j.find("files");
  if (files == j.end() || !files->is_object()) return bad("files");
  for (const auto& [name, sha] : files->items()) {
    if (!sha.is_string()) return bad("files");
    id.files.emplace_back(name, sha.get<std::string>());
  }
  return id;
}

namespace {

// `'a' is new` / `'a', 'b' are new`.
std::string phrase(const std::vector<std::string>& names, const char* one, const char* many) {
  return quoted_list(names) + " " + (names.size() == 1 ? one : many);
}

}  // namespace

std::vector<std::string> identity_changes(const BuildIdentity& was, const BuildIdentity& now) {
  std::vector<std::string> out;
  if (was.toolchain != now.toolchain)
    out.push_back(fmt::format("toolchain '{}' -> '{}'", was.toolchain, now.toolchain));
  if (was.arch != now.arch) out.push_back(fmt::format("arch '{}' -> '{}'", was.arch, now.arch));
  if (was.entry != now.entry)
    out.push_back(fmt::format("entry '{}' -> '{}'", was.entry, now.entry));
  const std::map<std::string, std::string> before(was.files.begin(), was.files.end());
  const std::map<std::string, std::string> after(now.files.begin(), now.files.end());
  std::vector<std::string> changed, added, gone;
  for (const auto& [name, sha] : after) {
    auto it = before.find(name);
    if (it == before.end())
      added.push_back(name);
    else if (it->second != sha)
      changed.push_back(name);
  }
  for (const auto& [name, sha] : before)
    if (!after.contains(name)) gone.push_back(name);
  if (!changed.empty()) out.push_back(phrase(changed, "changed", "changed"));
  if (!added.empty()) out.push_back(phrase(added, "is newly included", "are newly included"));
  if (!gone.empty()) out.push_back(phrase(gone, "is no longer included", "are no longer included"));
  std::vector<std::string> flags_new, flags_gone;
  for (const std::string& a : now.argv)
    if (std::find(was.argv.begin(), was.argv.end(), a) == was.argv.end()) flags_new.push_back(a);
  for (const std::string& a : was.argv)
    if (std::find(now.argv.begin(), now.argv.end(), a) == now.argv.end()) flags_gone.push_back(a);
  if (!flags_gone.empty()) out.push_back(phrase(flags_gone, "is gone", "are gone"));
  if (!flags_new.empty()) out.push_back(phrase(flags_new, "is new", "are new"));
  // The same flags in another order (an include directory moved ahead of another).
  if (out.empty() && was.argv != now.argv)
    out.push_back(fmt::format("the compile flags were reordered: '{}' -> '{}'", join(was.argv, " "),
                              join(now.argv, " ")));
  if (out.empty() && was.files != now.files) out.push_back("the included files were reordered");
  return out;
}

}  // namespace tune
