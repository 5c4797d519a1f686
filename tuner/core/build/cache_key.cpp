#include <tuner/core/build/cache_key.hpp>

#include <algorithm>
#include <climits>
#include <deque>
#include <set>
#include <system_error>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/build/kernel_entry.hpp>
#include <tuner/core/build/toolchain.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

bool path_under(const fs::path& p, const fs::path& prefix) {
  auto pi = p.begin();
  for (auto qi = prefix.begin(); qi != prefix.end(); ++qi, ++pi) {
    if (qi->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *qi) return false;
  }
  return true;
}

fs::path canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p : c;
}

bool under_system_prefix(const fs::path& p) {
  static const fs::path prefixes[] = {"/usr/include",       "/usr/local/include", "/usr/lib/gcc",
                                      "/usr/lib/gcc-cross", "/usr/lib/clang",     "/usr/lib64/gcc",
                                      "/usr/lib64/clang"};
  for (const auto& prefix : prefixes)
    if (path_under(p, prefix)) return true;
  // /usr/lib/llvm-<version>/...: clang's resource and libc++ headers.
  auto it = p.begin();
  const char* expected[] = {"/", "usr", "lib"};
  for (const char* e : expected) {
    if (it == p.end() || it->string() != e) return false;
    ++it;
  }
  if (it == p.end()) return false;
  std::string dir = it->string();
  return dir == "llvm" || dir.rfind("llvm-", 0) == 0;
}

// Lines of the form `#include "x"` or `#include <x>` (spaces allowed around '#'): the quote
// character and the spelled name. Conditional includes are all followed, which can only add a
// dependency, never miss one; macro includes (`#include NAME`) are not resolved.
std::vector<std::pair<char, std::string>> parse_includes(const std::string& text) {
  std::vector<std::pair<char, std::string>> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::size_t i = pos;
    auto skip_space = [&] {
      while (i < end && (text[i] == ' ' || text[i] == '\t'))
        ++i;
    };
    skip_space();
    if (i < end && text[i] == '#') {
      ++i;
      skip_space();
      if (text.compare(i, 7, "include") == 0 && (i + 7 >= end || text[i + 7] != '_')) {
        i += 7;
        skip_space();
        if (i < end && (text[i] == '"' || text[i] == '<')) {
          char open = text[i];
          char close = open == '"' ? '"' : '>';
          std::size_t stop = text.find(close, i + 1);
          if (stop != std::string::npos && stop < end && stop > i + 1)
            out.emplace_back(open, text.substr(i + 1, stop - i - 1));
        }
      }
    }
    pos = end + 1;
  }
  return out;
}

std::string file_name(const fs::path& file, const fs::path& base) {
  return file.lexically_relative(base).generic_string();
}

bool needs_quoting(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                std::string_view("-_=./,:+<>@%").find(c) != std::string_view::npos;
    if (!safe) return true;
  }
  return false;
}

}  // namespace

bool is_toolchain_or_system_path(const fs::path& path, const fs::path& nvcc) {
  fs::path toolkit = nvcc.parent_path().parent_path().lexically_normal();
  fs::path toolkit_real = canonical_or_self(toolkit);
  fs::path forms[] = {path.lexically_normal(), canonical_or_self(path)};
  for (const auto& p : forms) {
    if (under_system_prefix(p)) return true;
    for (const auto& root : {toolkit, toolkit_real})
      if (path_under(p, root / "include") || path_under(p, root / "targets")) return true;
  }
  return false;
}

std::vector<KeyedFile> scan_includes(const fs::path& source,
                                     const std::vector<fs::path>& include_dirs,
                                     const fs::path& project_root, const fs::path& nvcc) {
  std::vector<fs::path> dirs;
  for (const auto& d : include_dirs)
    if (!is_toolchain_or_system_path(d, nvcc)) dirs.push_back(d.lexically_normal());
  struct Item {
    fs::path path;
    fs::path base;
  };
  std::deque<Item> queue{{source.lexically_normal(), project_root}};
  std::set<fs::path> seen{canonical_or_self(source)};
  std::vector<KeyedFile> out;
  while (!queue.empty()) {
    Item item = std::move(queue.front());
    queue.pop_front();
    std::string text = read_file(item.path);
    out.push_back({file_name(item.path, item.base), item.path, sha256_hex(text)});
    for (const auto& [open, spelled] : parse_includes(text)) {
      std::vector<std::pair<fs::path, fs::path>> candidates;  // (directory, base)
      if (open == '"') candidates.emplace_back(item.path.parent_path(), item.base);
      for (const auto& d : dirs)
        candidates.emplace_back(d, d);
      for (const auto& [dir, base] : candidates) {
        fs::path found = (dir / spelled).lexically_normal();
        std::error_code ec;
        if (!fs::is_regular_file(found, ec)) continue;
        if (is_toolchain_or_system_path(found, nvcc)) break;  // the fingerprint covers it
        fs::path real = canonical_or_self(found);
        if (seen.insert(real).second) queue.push_back({found, base});
        break;
      }
    }
  }
  std::sort(out.begin() + 1, out.end(), [](const KeyedFile& a, const KeyedFile& b) {
    return std::tie(a.name, a.sha256) < std::tie(b.name, b.sha256);
  });
  return out;
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    if (!needs_quoting(a)) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

fs::path params_header_path(const Manifest& manifest, const Config& config) {
  return manifest.log_dir / "params" / (hex16(fnv1a64(config.id())) + ".hpp");
}

std::string params_header_text(const Config& config) {
  std::string out = "// Generated by tune for config " + config.id() +
                    ", included first (-include). Do not edit.\n#pragma once\n";
  for (const auto& [name, value] : config.params()) {
    if (value.is_int()) {
      std::int64_t v = value.as_int();
      if (v >= INT_MIN && v <= INT_MAX)
        out += "constexpr int " + name + " = " + std::to_string(v) + ";\n";
      else
        out += "constexpr long long " + name + " = " + std::to_string(v) + "LL;\n";
    } else {
      out += "constexpr const char " + name + "[] = " + value.canonical() + ";\n";
    }
  }
  return out;
}

std::string source_hash(const Manifest& manifest) {
  Sha256 h;
  h.update_field("tune-source-hash/1");
  for (const auto& source : manifest.sources) {
    std::string text;
    try {
      text = read_file(source);
    } catch (const error&) {
      throw input_error(diagnostic{manifest.path.string(), 0, 0,
                                   "source '" + source.string() + "' cannot be read"});
    }
    h.update_field(file_name(source, manifest.project_root));
    h.update_field(sha256_hex(text));
  }
  return h.hex_digest();
}

CacheKeyer::CacheKeyer(Manifest manifest, ParamsAs params_as)
    : CacheKeyer(manifest, params_as, toolchain_fingerprint(manifest.nvcc).fingerprint()) {}

CacheKeyer::CacheKeyer(Manifest manifest, ParamsAs params_as, std::string toolchain, NoScan)
    : manifest_(std::move(manifest)), params_as_(params_as), toolchain_(std::move(toolchain)) {}

CacheKeyer::CacheKeyer(Manifest manifest, ParamsAs params_as, std::string toolchain)
    : CacheKeyer(std::move(manifest), params_as, std::move(toolchain), NoScan{}) {
  const fs::path& source = manifest_.sources.at(0);
  std::error_code ec;
  if (!fs::is_regular_file(source, ec))
    throw input_error(diagnostic{manifest_.path.string(), 0, 0,
                                 "source '" + source.string() + "' cannot be read"});
  files_ =
      scan_includes(source, manifest_.include_directories, manifest_.project_root, manifest_.nvcc);
}

namespace {

std::optional<EntryTemplate> template_of(const Manifest& manifest, const Space& space) {
  result<std::optional<EntryTemplate>> t = kernel_entry_template(manifest, space);
  if (!t) throw input_error(t.error());
  return std::move(*t);
}

/// Whether the options pick the C++ standard themselves (`-std=c++20`, `--std c++20`).
bool names_the_standard(const std::vector<std::string>& options) {
  return std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o == "-std" || o == "--std" || o.starts_with("-std=") || o.starts_with("--std=");
  });
}

}  // namespace

CacheKeyer::CacheKeyer(Manifest manifest, const Space& space)
    : CacheKeyer(manifest, space, toolchain_fingerprint(manifest.nvcc).fingerprint()) {}

CacheKeyer::CacheKeyer(Manifest manifest, const Space& space, std::string toolchain)
    : CacheKeyer(std::move(manifest), space.params_as(), std::move(toolchain)) {
  entry_ = template_of(manifest_, space);
}

std::string CacheKeyer::relative(const fs::path& p) const {
  fs::path n = p.lexically_normal();
  const fs::path build = manifest_.build_dir.lexically_normal();
  const fs::path root = manifest_.project_root.lexically_normal();
  const bool in_build = path_under(n, build);
  const bool in_root = path_under(n, root);
  // Under both, the deeper folder names it: a build tree inside the project (`<root>/build`)
  // holds generated files, and a project inside a build tree (a FetchContent checkout under
  // `<build>/_deps`, a scratch copy) holds sources, which must key as in any other checkout.
  if (in_root && (!in_build || path_under(root, build))) return file_name(n, root);
  if (in_build) {
    std::string rel = file_name(n, build);
    return rel == "." ? "<build>" : "<build>/" + rel;
  }
  return n.string();
}

std::vector<std::string> CacheKeyer::argv(const Config& config, std::string_view arch,
                                          const fs::path& output, bool keyed) const {
  std::vector<std::string> a;
  a.push_back(keyed ? "nvcc" : manifest_.nvcc.string());
  a.push_back("-cubin");
  a.push_back("-arch=" + std::string(arch));
  // C++17 unless COMPILE_OPTIONS names the standard (-std=c++20): nvcc warns on two.
  if (!names_the_standard(manifest_.compile_options)) a.push_back("-std=c++17");
  a.push_back("-O3");
  a.push_back("-Xptxas=-v");
  for (const auto& opt : manifest_.compile_options) {
    if (keyed && !opt.empty() && opt[0] == '/')
      a.push_back(relative(opt));
    else if (keyed && opt.size() > 2 && opt.compare(0, 3, "-I/") == 0)
      a.push_back("-I" + relative(opt.substr(2)));
    else
      a.push_back(opt);
  }
  for (const auto& def : manifest_.definitions)
    a.push_back("-D" + def);
  for (const auto& dir : manifest_.include_directories) {
    if (!keyed)
      a.push_back("-I" + dir.string());
    else if (!is_toolchain_or_system_path(dir, manifest_.nvcc))  // the fingerprint covers it
      a.push_back("-I" + relative(dir));
  }
  if (entry_) {
    // The template arguments carry the params: as -D macros they would also rewrite the
    // template's own parameter names (`template <int BM>` would read `template <int 64>`).
  } else if (params_as_ == ParamsAs::defines) {
    for (const auto& [name, value] : config.params())
      a.push_back("-D" + name + "=" + value.plain());
  } else {
    a.push_back("-include");
    a.push_back(keyed ? "<params.hpp>" : params_header_path(manifest_, config).string());
  }
  a.push_back("-o");
  a.push_back(keyed ? "<out>" : output.string());
  if (entry_)
    a.push_back(keyed ? "<entry.cu>" : entry_unit_path(manifest_, config).string());
  else
    a.push_back(keyed ? relative(manifest_.sources.at(0)) : manifest_.sources.at(0).string());
  return a;
}

std::vector<std::string> CacheKeyer::keyed_argv(const Config& config, std::string_view arch) const {
  return argv(config, arch, {}, true);
}

CompileCommand CacheKeyer::compile_command(const Config& config, std::string_view arch,
                                           const fs::path& output_cubin) const {
  CompileCommand c;
  c.argv = argv(config, arch, output_cubin, false);
  if (params_as_ == ParamsAs::constexpr_header && !entry_) {
    c.params_header = params_header_path(manifest_, config);
    c.params_header_text = params_header_text(config);
  }
  if (entry_) {
    c.entry_unit = entry_unit_path(manifest_, config);
    c.entry_unit_text = entry_->unit_text(config, manifest_.sources.at(0).string());
  }
  return c;
}

CacheKey CacheKeyer::key(const Config& config, std::string_view arch) const {
  CacheKey k;
  k.schema = std::string(cache_key_schema);
  Sha256 h;
  h.update_field(cache_key_schema_tag);
  k.inputs.emplace_back("schema", std::string(cache_key_schema_tag));
  std::vector<std::string> keyed = keyed_argv(config, arch);
  h.update_field("argv");
  h.update_field(std::to_string(keyed.size()));
  for (const auto& a : keyed)
    h.update_field(a);
  k.inputs.emplace_back("argv", shell_join(keyed));
  if (params_as_ == ParamsAs::constexpr_header && !entry_) {
    std::string text = params_header_text(config);
    h.update_field("params_header");
    h.update_field(text);
    k.inputs.emplace_back("params_header", text);
  }
  if (entry_) {
    // As keyed: the source named relative to project_root, so the key does not depend on the
    // checkout path (the unit warm writes includes it by absolute path).
    std::string text = entry_->unit_text(config, relative(manifest_.sources.at(0)));
    h.update_field("entry_unit");
    h.update_field(text);
    k.inputs.emplace_back("entry_unit", text);
  }
  h.update_field("files");
  h.update_field(std::to_string(files_.size()));
  for (const auto& f : files_) {
    h.update_field(f.name);
    h.update_field(f.sha256);
    k.inputs.emplace_back("file", f.name + " " + f.sha256);
    k.dependencies.push_back(f.path);
  }
  h.update_field("toolchain");
  h.update_field(toolchain_);
  k.inputs.emplace_back("toolchain", toolchain_);
  // The symbol the cubin is checked for decides the verdict (a cubin without it is `failed`),
  // so it is keyed. The kernel's own name, the default, adds nothing: keys of such kernels are
  // what they were before the entry was covered. A template entry is in the unit above.
  if (!entry_ && manifest_.entry != manifest_.kernel) {
    h.update_field("entry");
    h.update_field(manifest_.entry);
    k.inputs.emplace_back("entry", manifest_.entry);
  }
  k.digest = h.hex_digest();
  return k;
}

std::string CacheKeyer::entry() const {
  return entry_ ? entry_->text : manifest_.entry;
}

BuildIdentity CacheKeyer::identity(std::string_view arch) const {
  BuildIdentity id;
  id.arch = std::string(arch);
  // A config without params: the vector as key() has it, the config's own `-D`s left out.
  id.argv = keyed_argv(Config{}, arch);
  id.entry = entry();
  for (const KeyedFile& f : files_)
    id.files.emplace_back(f.name, f.sha256);
  std::sort(id.files.begin(), id.files.end());
  id.toolchain = toolchain_;
  return id;
}

CompileCommand compile_command(const Manifest& manifest, const Space& space, const Config& config,
                               std::string_view arch, const fs::path& output_cubin) {
  // The argument vector needs no include scan and no toolchain: skip both.
  CacheKeyer keyer(manifest, space.params_as(), std::string(), CacheKeyer::NoScan{});
  keyer.entry_ = template_of(manifest, space);
  return keyer.compile_command(config, arch, output_cubin);
}

std::vector<std::string> nvcc_argv(const Manifest& manifest, const Space& space,
                                   const Config& config, std::string_view arch,
                                   const fs::path& output_cubin) {
  return compile_command(manifest, space, config, arch, output_cubin).argv;
}

CacheKey compute_cache_key(const Manifest& manifest, const Space& space, const Config& config,
                           std::string_view arch) {
  return CacheKeyer(manifest, space).key(config, arch);
}

}  // namespace tune
