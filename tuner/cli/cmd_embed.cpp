// `tuner embed`: the committed winners' cubins as C++ data (docs/embed.md), for
// `tune_embed_winners`. Per architecture the record is verified as `tuner verify` does; each
// bucket's winner is found in the kernel cache by its cache key (compiled as warm would when it
// is missing), its bytes checked against the entry's SHA-256 and written into a source file,
// beside a header that is the winners header (`select`, `Bucket`, `Shape`, ...) plus the
// functions that load an image for the current device. With --depfile it also names what it
// read (cli/step_depfile.hpp, and each image's cache entry and cubin), so that the build step
// runs again after an edit of any of them.
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/cli/step_depfile.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/build/compiler_launcher.hpp>
#include <tuner/core/record/verify.hpp>
#include <tuner/core/record/winners.hpp>
#include <tuner/core/record/winners_header.hpp>
#include <tuner/core/store/candidate_store.hpp>

namespace tune::cli {
namespace {

namespace fs = std::filesystem;

struct EmbedOptions {
  std::string manifest;
  std::string header;
  std::string source;
  std::string digests;
  std::string depfile;
  std::string name_space;
  std::string fallback = "error";
  bool allow_stale = false;
};

// One embedded image, as found in the cache.
struct Image {
  std::string arch;
  int sm = 0;
  std::size_t bucket = 0;
  std::string bucket_name;
  std::string config_id;
  std::string symbol;
  std::string key;
  std::string sha256;
  std::string bytes;
  bool incumbent = false;
  Config config;  // its params go into the image, for the launch geometry
};

int sm_of(const std::string& arch) {
  int sm = 0;
  for (char c : arch)
    if (c >= '0' && c <= '9') sm = sm * 10 + (c - '0');
  return sm;
}

// The record of one arch, verified; nullopt after printing why it cannot be embedded.
std::optional<Record> verified_record(const KernelBuild& build, const std::string& arch,
                                      const EmbedOptions& opt) {
  const Manifest& m = build.manifest;
  const fs::path path = m.record_path(arch).value();
  const std::string label = display_path(m, path);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    fmt::print(stderr,
               "tuner embed: error: no record {} for {} of kernel '{}': make it with '{}' (on a "
               "GPU), or pin a config per bucket with 'tuner record set --manifest {} --arch {} "
               "--bucket <bucket> --config <id>'\n",
               label, arch, m.kernel, m.retune_command(), m.path.string(), arch);
    return std::nullopt;
  }
  result<Verification> v = verify_kernel_record(build, arch, path);
  if (!v) {
    fmt::print(stderr, "{}\n", v.error().str());
    return std::nullopt;
  }
  if (v->ok()) {
    for (const auto& w : v->warnings)
      fmt::print(stderr, "{}: warning: {}\n", label, w);
    return v->record;
  }
  if (!opt.allow_stale || v->state != RecordState::stale) {
    fmt::print(stderr, "{}", v->report(label));
    fmt::print(stderr,
               "tuner embed: error: the record {} of '{}' is {}: its winners are not "
               "what this build would compile (set TUNE_ALLOW_STALE=ON to embed it anyway)\n",
               label, m.kernel, to_string(v->state));
    return std::nullopt;
  }
  for (const auto& e : v->errors)
    fmt::print(stderr, "{}: warning: {} (embedded anyway: TUNE_ALLOW_STALE)\n", label, e);
  result<Record> r = Record::load(path);
  if (!r) {
    fmt::print(stderr, "{}\n", r.error().str());
    return std::nullopt;
  }
  return std::move(*r);
}

// The cubin of `config` on `arch` as the kernel cache holds it (compiled as warm would when
// it is missing), its bytes checked against the entry; nullopt after saying why not.
std::optional<Image> find_image(const KernelBuild& build, const CacheKeyer& keyer,
                                const CandidateStore& store, const std::string& arch,
                                const Config& config, const std::string& bucket) {
  const Manifest& m = build.manifest;
  const CacheKey key = keyer.key(config, arch);
  const CompileOutcome outcome = store.get(compile_request(m, keyer, config, arch));
  const KernelCache& cache = store.cache();
  if (!outcome.entry.valid()) {
    fmt::print(stderr, "tuner embed: error: {} {} {}: the config '{}' is invalid ({}): {}\n",
               m.kernel, arch, bucket, config.id(), to_string(outcome.entry.status),
               outcome.entry.reason);
    return std::nullopt;
  }
  Image im;
  im.arch = arch;
  im.sm = sm_of(arch);
  im.bucket_name = bucket;
  im.config_id = config.id();
  im.config = config;
  im.symbol = outcome.entry.function_name(m.entry);
  im.key = key.digest;
  im.bytes = read_file(cache.cubin_path(key.digest));
  im.sha256 = sha256_hex(im.bytes);
  if (im.sha256 != outcome.entry.cubin_sha256) {
    fmt::print(stderr, "tuner embed: error: {}: SHA-256 {} is not the entry's {}\n",
               cache.cubin_path(key.digest).string(), im.sha256, outcome.entry.cubin_sha256);
    return std::nullopt;
  }
  return im;
}

std::string c_array(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size() * 5);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out += std::to_string(static_cast<unsigned char>(bytes[i]));
    out += (i % 24 == 23) ? ",\n" : ",";
  }
  return out;
}

std::string header_text(const std::string& winners, const std::string& ns) {
  std::string h = winners;
  h += fmt::format(R"(
// The embedded winners (tuner embed): one cubin per recorded architecture and bucket, the bytes
// the tuner timed. Link tune::runtime (C++17, nothing of the tuner); no compiler runs.
#include <tuner/runtime/embedded.hpp>

namespace {0} {{

/// Every embedded image of the kernel.
const ::tune::runtime::EmbeddedKernel& embedded();

/// The image `function(b)` loads on a device of compute capability `sm` (90 for sm_90).
inline const ::tune::runtime::EmbeddedImage& image(int sm, Bucket b) {{
  return ::tune::runtime::find_image(embedded(), sm, static_cast<int>(b));
}}

/// The image of bucket `b` for the current context's device.
inline const ::tune::runtime::EmbeddedImage& image(Bucket b) {{
  return image(::tune::runtime::current_sm(), b);
}}

/// The winner of bucket `b` on the current context's device, its module loaded once per
/// context. Throws tune::runtime::error for a device without winners (unless embedded with a
/// fallback). Launch it with the geometry of the image it loads, `image(b)`'s params
/// (`::tune::runtime::int_param(image(b), "BLOCK")`): a fallback image has its own.
inline CUfunction function(Bucket b) {{ return ::tune::runtime::load_function(image(b)); }}

/// The bucket `select` picks for `s`; throws tune::runtime::error when no bucket takes the
/// shape.
inline Bucket bucket_for(const Shape& s) {{
  if (std::optional<Bucket> b = select(s)) return *b;
  throw ::tune::runtime::error("no bucket of kernel '" + std::string(embedded().kernel) +
                      "' takes this shape");
}}

/// The winner for the runtime shape `s` on the current context's device.
inline CUfunction function(const Shape& s) {{ return function(bucket_for(s)); }}

}}  // namespace {0}
)",
                   ns);
  return h;
}

std::string source_text(const std::vector<Image>& images, const std::string& header_name,
                        const std::string& ns, const std::string& kernel, bool fallback) {
  std::string s = fmt::format(
      "// Generated by tuner embed: the winners of '{}' as data. Do not edit.\n"
      "#include \"{}\"\n\nnamespace {} {{\nnamespace {{\n\n",
      kernel, header_name, ns);
  for (std::size_t i = 0; i < images.size(); ++i)
    s += fmt::format(
        "// {} {} {} ({} bytes, sha256 {})\nalignas(8) const unsigned char image_{}[] "
        "= {{\n{}}};\n\n",
        images[i].arch, images[i].bucket_name, images[i].config_id, images[i].bytes.size(),
        images[i].sha256, i, c_array(images[i].bytes));
  // Each image's params: the launch geometry of whichever image the loader picks.
  for (std::size_t i = 0; i < images.size(); ++i) {
    s += fmt::format("const ::tune::runtime::EmbeddedParam params_{}[] = {{\n", i);
    for (const auto& [name, value] : images[i].config.params())
      s += !value.is_int() ? fmt::format("  {{{}, 0, {}}},\n", nlohmann::json(name).dump(),
                                         nlohmann::json(value.as_string()).dump())
           : value.as_int() == std::numeric_limits<std::int64_t>::min()
               ? fmt::format("  {{{}, -9223372036854775807LL - 1, nullptr}},\n",
                             nlohmann::json(name).dump())
               : fmt::format("  {{{}, {}LL, nullptr}},\n", nlohmann::json(name).dump(),
                             value.as_int());
    s += "};\n\n";
  }
  s += "const ::tune::runtime::EmbeddedImage images[] = {\n";
  for (std::size_t i = 0; i < images.size(); ++i) {
    const Image& im = images[i];
    s += fmt::format(
        "  {{{}, {}, {}, {}, {}, {}, {}, {}, image_{}, sizeof image_{}, {}, params_{}, {}}},\n",
        im.sm, im.bucket, nlohmann::json(im.arch).dump(), nlohmann::json(im.bucket_name).dump(),
        nlohmann::json(im.config_id).dump(), nlohmann::json(im.symbol).dump(),
        nlohmann::json(im.key).dump(), nlohmann::json(im.sha256).dump(), i, i,
        im.incumbent ? "true" : "false", i, im.config.params().size());
  }
  s += fmt::format(
      "}};\n\n}}  // namespace\n\nconst ::tune::runtime::EmbeddedKernel& embedded() {{\n"
      "  static const ::tune::runtime::EmbeddedKernel k{{{}, images, {}, "
      "::tune::runtime::MissingArch::{}}};\n  return k;\n}}\n\n}}  // namespace {}\n",
      nlohmann::json(kernel).dump(), images.size(), fallback ? "first_incumbent" : "error", ns);
  return s;
}

int run_embed(const EmbedOptions& opt) {
  std::optional<KernelBuild> build = load_build(opt.manifest);
  if (!build) return exit_bad_input;
  const Manifest& m = build->manifest;
  const Space& space = build->space;
  const CacheKeyer keyer(m, space);
  const CandidateStore store(KernelCache(effective_cache_dir(m.cache_dir)), nullptr, m.compile_log,
                             std::nullopt, compiler_launcher(m));
  const std::optional<Config> incumbent =
      space.require().empty() ? std::nullopt : std::optional<Config>(space.require().front());

  std::vector<Image> images;
  for (const std::string& arch : m.archs) {
    std::optional<Record> record = verified_record(*build, arch, opt);
    if (!record) return exit_negative;
    for (std::size_t b = 0; b < space.buckets().size(); ++b) {
      const Bucket& bucket = space.buckets()[b];
      const RecordEntry* entry = record->get(bucket.name);
      if (entry == nullptr) {
        fmt::print(stderr, "tuner embed: error: the record of '{}' for {} has no bucket '{}'\n",
                   m.kernel, arch, bucket.name);
        return exit_negative;
      }
      const CacheKey key = keyer.key(entry->config, arch);
      // A fresh record's key is this key; a stale one (TUNE_ALLOW_STALE) may name bytes that
      // this build would no longer compile: the current key's are embedded, with a warning.
      if (entry->cache_key && entry->cache_key->digest != key.digest)
        fmt::print(stderr,
                   "tuner embed: warning: {} {} {}: the record's cache key {} is not the "
                   "current {}; embedding the current build of the config\n",
                   m.kernel, arch, bucket.name, entry->cache_key->digest, key.digest);
      std::optional<Image> im = find_image(*build, keyer, store, arch, entry->config, bucket.name);
      if (!im) return exit_negative;
      im->bucket = b;
      im->incumbent = incumbent && incumbent->id() == im->config_id;
      images.push_back(std::move(*im));
    }
    // The fallback image: the first incumbent of the first architecture, when no winner is it.
    if (opt.fallback == "first_incumbent" && arch == m.archs.front() && incumbent) {
      bool have = false;
      for (const Image& im : images)
        have = have || (im.arch == arch && im.incumbent);
      if (!have) {
        std::optional<Image> im = find_image(*build, keyer, store, arch, *incumbent, "(fallback)");
        if (!im) return exit_negative;
        im->sm = -1;  // never matched by a device: found only as the fallback
        im->incumbent = true;
        images.push_back(std::move(*im));
      }
    }
  }

  const WinnersTable table = choose_winners(*build);
  if (table.bad_input) {
    fmt::print(stderr, "{}\n", table.bad_input->str());
    return exit_bad_input;
  }
  const std::string ns =
      opt.name_space.empty() ? "tune_winners::" + cxx_identifier(m.kernel) : opt.name_space;
  // The strings as they are: the program picks a cubin by its id, and need not declare what the
  // space's [entry.map] text names.
  HeaderMapping strings;
  strings.map_strings = false;
  result<std::string> winners = winners_header(*build, table, ns, strings);
  if (!winners) {
    fmt::print(stderr, "tuner embed: {}\n", winners.error().str());
    return exit_bad_input;
  }
  nlohmann::json digests = nlohmann::json::array();
  for (const Image& im : images)
    digests.push_back({{"arch", im.arch},
                       {"bucket", im.bucket_name},
                       {"config_id", im.config_id},
                       {"symbol", im.symbol},
                       {"key", im.key},
                       {"sha256", im.sha256},
                       {"bytes", im.bytes.size()}});
  try {
    write_file_if_changed(opt.header, header_text(*winners, ns));
    write_file_if_changed(opt.source, source_text(images, fs::path(opt.header).filename().string(),
                                                  ns, m.kernel, opt.fallback == "first_incumbent"));
    if (!opt.digests.empty())
      write_file_if_changed(
          opt.digests,
          dump_json(nlohmann::json{{"kernel", m.kernel}, {"images", digests}}, 2) + "\n");
    if (!opt.depfile.empty()) {
      // What a clean build would read again: the records and what verifying them reads, and
      // the cache entries and cubins the images came from.
      std::vector<fs::path> inputs = record_inputs(*build);
      for (const Image& im : images) {
        inputs.push_back(store.cache().entry_path(im.key));
        inputs.push_back(store.cache().cubin_path(im.key));
      }
      write_step_depfile(opt.depfile, opt.header, inputs);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner embed: error: {}\n", e.what());
    return exit_environment;
  }
  return exit_ok;
}

}  // namespace

void add_embed_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<EmbedOptions>();
  auto* sub = app.add_subcommand(
      "embed",
      "write the committed winners' cubins as C++ data with a loader API (tune_embed_winners)");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--header", opt->header, "the header to write")->required();
  sub->add_option("--source", opt->source, "the C++ source holding the images")->required();
  sub->add_option("--digests", opt->digests, "a JSON file listing each image's key and SHA-256");
  sub->add_option("--depfile", opt->depfile,
                  "a Makefile-syntax depfile naming the header and every file the step read");
  sub->add_option("--namespace", opt->name_space,
                  "the namespace (default: tune_winners::<kernel>; tune_embed_winners passes "
                  "tune_winners::<target>::<kernel>, or <NAMESPACE>::<kernel>)")
      ->check(cxx_namespace());
  sub->add_option("--fallback", opt->fallback,
                  "a device architecture without a record: error (default) or first_incumbent")
      ->check(CLI::IsMember({"error", "first_incumbent"}));
  sub->add_flag("--allow-stale", opt->allow_stale,
                "embed a stale record's winners with warnings instead of failing");
  sub->footer(
      "Exit status: 0 written; 1 a record missing, stale or with an invalid winner; 2 "
      "bad input; 3 a broken environment.");
  sub->callback([&run, opt] { run = [opt] { return run_embed(*opt); }; });
}

}  // namespace tune::cli
