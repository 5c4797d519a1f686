#include <tuner/core/build/manifest.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/safe_file.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Reads the fields of one manifest object, collecting the first problem as a diagnostic.
class FieldReader {
 public:
  FieldReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  bool failed() const { return failed_; }
  const diagnostic& diag() const { return diag_; }

  void fail(std::string message) {
    if (failed_) return;
    failed_ = true;
    diag_ = diagnostic{path_, 0, 0, std::move(message)};
  }

  const json* find(const char* name, bool required) {
    auto it = j_.find(name);
    if (it == j_.end() || (it->is_null() && required)) {
      if (required) fail(std::string("missing required field '") + name + "'");
      return nullptr;
    }
    if (it->is_null()) return nullptr;
    return &*it;
  }

  std::string string(const char* name, bool required) {
    const json* v = find(name, required);
    if (v == nullptr) return {};
    if (!v->is_string()) {
      fail(std::string("field '") + name + "' must be a string, got " + v->dump());
      return {};
    }
    if (required && v->get_ref<const std::string&>().empty())
      fail(std::string("field '") + name + "' must not be empty");
    return v->get<std::string>();
  }

  std::vector<std::string> strings(const char* name, bool required, bool non_empty) {
    const json* v = find(name, required);
    std::vector<std::string> out;
    if (v == nullptr) return out;
    if (!v->is_array()) {
      fail(std::string("field '") + name + "' must be an array of strings, got " + v->dump());
      return out;
    }
    for (const json& e : *v) {
      if (!e.is_string()) {
        fail(std::string("field '") + name + "' must be an array of strings, got element " +
             e.dump());
        return out;
      }
      out.push_back(e.get<std::string>());
    }
    if (non_empty && out.empty()) fail(std::string("field '") + name + "' must not be empty");
    return out;
  }

 private:
  const json& j_;
  std::string path_;
  bool failed_ = false;
  diagnostic diag_;
};

fs::path resolve(const fs::path& base, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = base / path;
  return path.lexically_normal();
}

std::string strip_trailing_separator(fs::path p) {
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/')
    s.pop_back();
  return s;
}

}  // namespace

result<Manifest> Manifest::load(const fs::path& path) {
  if (auto d = not_regular_problem(path)) return fail(*d);  // /dev/zero would never end
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec)
    if (auto d = size_problem(path.string(), size, max_manifest_bytes, "a manifest"))
      return fail(*d);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path.string(), 0, 0, "cannot read the manifest");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

result<Manifest> Manifest::parse(std::string_view json_text, const fs::path& path) {
  if (auto d = size_problem(path.string(), json_text.size(), max_manifest_bytes, "a manifest"))
    return fail(*d);
  if (auto d = json_nesting_problem(json_text, path.string())) return fail(*d);
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    return fail(path.string(), 0, 0, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) return fail(path.string(), 0, 0, "a manifest must be a JSON object");
  FieldReader r(j, path.string());
  Manifest m;
  m.path = path;
  const json* schema = r.find("schema_version", true);
  if (schema != nullptr) {
    if (!schema->is_number_integer())
      r.fail("field 'schema_version' must be an integer, got " + schema->dump());
    else if (*schema != manifest_schema_version)
      r.fail("schema_version " + schema->dump() + " is not supported (this tuner reads " +
             std::to_string(manifest_schema_version) + "): re-run the CMake configure step");
  }
  if (r.failed()) return fail(r.diag());
  m.kernel = r.string("kernel", true);
  // The kernel name becomes target names and the default log directory: a name such as
  // "../x" would reach outside the build tree. The rule is the space file's.
  if (!r.failed() &&
      (m.kernel.empty() || m.kernel.front() == '.' ||
       m.kernel.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789_.-") != std::string::npos))
    r.fail("field 'kernel' must be a kernel name ([A-Za-z0-9_.-]+, not starting with '.'), got " +
           json(m.kernel).dump(-1, ' ', false, json::error_handler_t::replace));
  m.entry = r.string("entry", false);
  if (m.entry.empty()) m.entry = m.kernel;
  std::string root = r.string("project_root", true);
  std::string build = r.string("build_dir", true);
  std::vector<std::string> sources = r.strings("sources", true, true);
  std::string space = r.string("space", true);
  m.archs = r.strings("archs", true, true);
  std::vector<std::string> includes = r.strings("include_directories", false, false);
  m.definitions = r.strings("definitions", false, false);
  m.compile_options = r.strings("compile_options", false, false);
  std::string nvcc = r.string("nvcc", true);
  m.compiler_launcher = r.strings("compiler_launcher", false, false);
  for (const std::string& word : m.compiler_launcher)
    if (word.empty()) r.fail("field 'compiler_launcher' must not hold an empty argument");
  m.host_compiler = r.string("host_compiler", false);
  std::string cache_dir = r.string("cache_dir", false);
  std::string log_dir = r.string("log_dir", false);
  std::string compile_log = r.string("compile_log", false);
  std::string runner = r.string("runner", false);
  std::string tuner = r.string("tuner", false);
  m.remote_store = r.string("remote_store", false);
  if (r.failed()) return fail(r.diag());

  fs::path manifest_dir = path.parent_path();
  if (manifest_dir.empty()) manifest_dir = ".";
  m.project_root = fs::path(strip_trailing_separator(resolve(fs::absolute(manifest_dir), root)));
  m.build_dir = fs::path(strip_trailing_separator(resolve(m.project_root, build)));
  for (const auto& s : sources)
    m.sources.push_back(resolve(m.project_root, s));
  m.space = resolve(m.project_root, space);
  for (const auto& d : includes)
    m.include_directories.push_back(fs::path(strip_trailing_separator(resolve(m.project_root, d))));
  m.nvcc = resolve(m.project_root, nvcc);
  m.cache_dir =
      cache_dir.empty() ? m.build_dir / "tune" / "cache" : resolve(m.project_root, cache_dir);
  m.log_dir = log_dir.empty() ? m.build_dir / "tune" / m.kernel : resolve(m.project_root, log_dir);
  m.compile_log = compile_log.empty() ? m.build_dir / "tune" / "compile.log"
                                      : resolve(m.project_root, compile_log);
  if (!runner.empty()) m.runner = resolve(m.project_root, runner);
  if (!tuner.empty()) m.tuner = resolve(m.project_root, tuner);

  for (std::size_t i = 0; i < m.archs.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (m.archs[i] == m.archs[k])
        return fail(path.string(), 0, 0, "field 'archs' lists '" + m.archs[i] + "' twice");
  const json* records = r.find("records", true);
  if (records == nullptr) return fail(r.diag());
  if (!records->is_object())
    return fail(
        path.string(), 0, 0,
        "field 'records' must be an object from arch to record path, got " + records->dump());
  for (auto it = records->begin(); it != records->end(); ++it) {
    if (!it.value().is_string())
      return fail(path.string(), 0, 0,
                  "field 'records' must map each arch to a path string, got '" + it.key() +
                      "': " + it.value().dump());
    m.records[it.key()] = resolve(m.project_root, it.value().get<std::string>());
  }
  for (const auto& arch : m.archs)
    if (m.records.find(arch) == m.records.end())
      return fail(path.string(), 0, 0,
                  "field 'records' has no path for arch '" + arch + "' listed in 'archs'");
  for (const auto& [arch, p] : m.records)
    if (std::find(m.archs.begin(), m.archs.end(), arch) == m.archs.end())
      return fail(
          path.string(), 0, 0,
          "field 'records' has a path for arch '" + arch + "', which 'archs' does not list");
  return m;
}

result<fs::path> Manifest::record_path(std::string_view arch) const {
  auto it = records.find(std::string(arch));
  if (it != records.end()) return it->second;
  std::string declared;
  for (const auto& a : archs)
    declared += (declared.empty() ? "'" : ", '") + a + "'";
  return fail(path.string(), 0, 0,
              "arch '" + std::string(arch) + "' is not declared for kernel '" + kernel +
                  "' (declared: " + declared + ")");
}

std::string Manifest::retune_command() const {
  return "cmake --build " + build_dir.string() + " --target tune." + kernel;
}

nlohmann::json Manifest::to_json() const {
  json j;
  j["schema_version"] = schema_version;
  j["kernel"] = kernel;
  j["entry"] = entry;
  j["project_root"] = project_root.string();
  j["build_dir"] = build_dir.string();
  j["sources"] = json::array();
  for (const auto& s : sources)
    j["sources"].push_back(s.string());
  j["space"] = space.string();
  j["archs"] = archs;
  j["records"] = json::object();
  for (const auto& [arch, p] : records)
    j["records"][arch] = p.string();
  j["include_directories"] = json::array();
  for (const auto& d : include_directories)
    j["include_directories"].push_back(d.string());
  j["definitions"] = definitions;
  j["compile_options"] = compile_options;
  j["nvcc"] = nvcc.string();
  if (!compiler_launcher.empty()) j["compiler_launcher"] = compiler_launcher;
  j["host_compiler"] = host_compiler;
  j["cache_dir"] = cache_dir.string();
  j["log_dir"] = log_dir.string();
  j["compile_log"] = compile_log.string();
  j["runner"] = runner ? json(runner->string()) : json(nullptr);
  j["tuner"] = tuner ? json(tuner->string()) : json(nullptr);
  if (!remote_store.empty()) j["remote_store"] = remote_store;
  return j;
}

}  // namespace tune
