// `tuner header --manifest M --output F [--namespace NS]`: writes a C++17 header with each
// architecture's winning config per bucket as constexpr values, a `select` from a runtime shape
// to its bucket built from the buckets' `when` predicates, and a dispatch by architecture.
//
// Where each winner comes from, per architecture:
// - a fresh record: its entries (the header's comment names the record and its date);
// - a stale record: its entries all the same, with `<record>: warning: ...` lines on stderr
//   giving the verification's reasons (the record test still fails); a bucket the stale record
//   lacks, or whose config no longer has the space's params, takes the first incumbent;
// - a missing record: the space's first `require` config for every bucket, with a warning.
// With neither a usable entry nor an incumbent for a bucket it is an error (exit 1).
// The header is written only when its text changed, so dependents do not rebuild needlessly.
// Exit codes: 0 written (or unchanged), 1 a bucket has no winner and no incumbent, 2 bad input
// (manifest, space, an unreadable record, names the header cannot hold), 3 nvcc cannot be run
// or the header cannot be written.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/core/atomic_file.hpp>
#include <tuner/core/verify.hpp>

namespace tune::cli {

namespace {

namespace fs = std::filesystem;

struct HeaderCliOptions {
  std::string manifest;
  std::string output;
  std::string name_space;
};

constexpr std::string_view cxx_keywords[] = {"alignas",       "alignof",     "and",
                                             "and_eq",        "asm",         "auto",
                                             "bitand",        "bitor",       "bool",
                                             "break",         "case",        "catch",
                                             "char",          "char8_t",     "char16_t",
                                             "char32_t",      "class",       "compl",
                                             "concept",       "const",       "consteval",
                                             "constexpr",     "constinit",   "const_cast",
                                             "continue",      "co_await",    "co_return",
                                             "co_yield",      "decltype",    "default",
                                             "delete",        "do",          "double",
                                             "dynamic_cast",  "else",        "enum",
                                             "explicit",      "export",      "extern",
                                             "false",         "float",       "for",
                                             "friend",        "goto",        "if",
                                             "inline",        "int",         "long",
                                             "mutable",       "namespace",   "new",
                                             "noexcept",      "not",         "not_eq",
                                             "nullptr",       "operator",    "or",
                                             "or_eq",         "private",     "protected",
                                             "public",        "register",    "reinterpret_cast",
                                             "requires",      "return",      "short",
                                             "signed",        "sizeof",      "static",
                                             "static_assert", "static_cast", "struct",
                                             "switch",        "template",    "this",
                                             "thread_local",  "throw",       "true",
                                             "try",           "typedef",     "typeid",
                                             "typename",      "union",       "unsigned",
                                             "using",         "virtual",     "void",
                                             "volatile",      "wchar_t",     "while",
                                             "xor",           "xor_eq",      "final",
                                             "override",      "import",      "module"};

bool is_keyword(std::string_view name) {
  return std::find(std::begin(cxx_keywords), std::end(cxx_keywords), name) !=
         std::end(cxx_keywords);
}

/// A keyword, or a name the implementation reserves (`__x`, `_X`).
bool is_reserved(std::string_view name) {
  return is_keyword(name) || name.starts_with("__") ||
         (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])));
}

/// `text` as a C++ identifier: each run of other characters becomes one '_', a leading digit
/// gets a '_' and a reserved prefix a letter before it, and a keyword gets a '_' after it.
std::string identifier(std::string_view text) {
  std::string out;
  for (char c : text) {
    char k = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (k != '_' || out.empty() || out.back() != '_') out += k;  // no `__`: reserved
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(0, "_");
  if (is_reserved(out) && !is_keyword(out)) out.insert(0, "b");
  if (is_keyword(out)) out += '_';
  return out;
}

/// A C++ string literal of `s`, non-printable bytes as octal escapes.
std::string cxx_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\{:03o}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// Comment text on one line: newlines flattened, no `*/` or trailing backslash issues (the
/// header uses `//` comments).
std::string comment_text(std::string_view s) {
  std::string out;
  for (char c : s)
    out += (c == '\n' || c == '\r') ? ' ' : c;
  while (!out.empty() && out.back() == '\\')
    out.pop_back();
  return out;
}

/// Translates an expression's canonical form (expr.hpp: every operation parenthesized, strings
/// JSON-quoted) into C++ over `s.<name>` with checked arithmetic that clears `ok` on division
/// by zero or overflow, as the tuner's own evaluation reports them.
class CanonicalToCxx {
 public:
  explicit CanonicalToCxx(std::string_view text) : text_(text) {}

  /// The C++ expression; int-valued ones are std::int64_t, string ones std::string_view.
  result<std::string> run() {
    std::string out;
    bool is_string = false;
    if (!operand(out, is_string) || pos_ != text_.size())
      return fail("", 0, 0, fmt::format("cannot translate '{}' into C++", text_));
    return out;
  }

 private:
  void skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ')
      ++pos_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (text_.substr(pos_).starts_with(tok)) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }

  bool operand(std::string& out, bool& is_string) {
    skip();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      skip();
      for (std::string_view op : {"-", "!"}) {
        // A unary operator: the canonical form writes it right after '(' with no space.
        if (text_.substr(pos_).starts_with(op) && pos_ + 1 < text_.size() &&
            text_[pos_ + 1] != ' ' && text_[pos_ + 1] != '=') {
          pos_ += op.size();
          std::string inner;
          bool inner_string = false;
          if (!operand(inner, inner_string) || inner_string || !eat(")")) return false;
          out = op == "-" ? fmt::format("detail::neg({}, ok)", inner)
                          : fmt::format("static_cast<std::int64_t>(({}) == 0)", inner);
          is_string = false;
          return true;
        }
      }
      std::string lhs, rhs;
      bool ls = false, rs = false;
      if (!operand(lhs, ls)) return false;
      skip();
      std::string op;
      for (std::string_view cand :
           {"&&", "||", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%"}) {
        if (eat(cand)) {
          op = cand;
          break;
        }
      }
      if (op.empty() || !operand(rhs, rs) || !eat(")")) return false;
      is_string = false;
      if (op == "&&" || op == "||")
        out = fmt::format("static_cast<std::int64_t>(({}) != 0 {} ({}) != 0)", lhs, op, rhs);
      else if (op == "==" || op == "!=" || op == "<" || op == ">" || op == "<=" || op == ">=")
        out = fmt::format("static_cast<std::int64_t>({} {} {})", lhs, op, rhs);
      else {
        static const std::map<std::string, std::string> fn = {
            {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"%", "mod"}};
        out = fmt::format("detail::{}({}, {}, ok)", fn.at(op), lhs, rhs);
      }
      return true;
    }
    if (c == '"') {
      std::size_t end = pos_ + 1;
      while (end < text_.size() && text_[end] != '"')
        end += text_[end] == '\\' ? 2 : 1;
      if (end >= text_.size()) return false;
      std::string value =
          nlohmann::json::parse(text_.substr(pos_, end + 1 - pos_)).get<std::string>();
      pos_ = end + 1;
      out = fmt::format("std::string_view{{{}}}", cxx_string(value));
      is_string = true;
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t end = pos_;
      while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end])))
        ++end;
      out = fmt::format("std::int64_t{{{}}}", text_.substr(pos_, end - pos_));
      pos_ = end;
      is_string = false;
      return true;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
        ++end;
      std::string name(text_.substr(pos_, end - pos_));
      pos_ = end;
      out = "s." + name;
      is_string = string_names_ && string_names_->count(name) > 0;
      return true;
    }
    return false;
  }

 public:
  const std::set<std::string>* string_names_ = nullptr;

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

/// Where one architecture's winners come from.
struct ArchWinners {
  std::string arch;
  std::string summary;                 ///< for the header's top comment
  std::vector<const Config*> configs;  ///< per bucket, in the space's order
  std::vector<std::string> origins;    ///< per bucket
};

bool fits_int(const ParamValue& v) {
  return v.is_int() && v.as_int() >= std::numeric_limits<int>::min() &&
         v.as_int() <= std::numeric_limits<int>::max();
}

/// A winner's member: `int` for an int param whose values all fit one (`wide` false), else
/// `long long`, so that a param has one type in every winner; strings as `const char*`.
std::string value_decl(const std::string& name, const ParamValue& v, bool wide) {
  if (v.is_int()) {
    std::int64_t i = v.as_int();
    return fmt::format("  static constexpr {} {} = {};\n", wide ? "long long" : "int", name,
                       i == std::numeric_limits<std::int64_t>::min()
                           ? std::string("(-9223372036854775807LL - 1)")
                           : std::to_string(i) + (wide ? "LL" : ""));
  }
  return fmt::format("  static constexpr const char* {} = {};\n", name, cxx_string(v.as_string()));
}

constexpr std::string_view detail_helpers = R"(#ifndef TUNE_WINNERS_DETAIL_V1
#define TUNE_WINNERS_DETAIL_V1
/// Checked int64 arithmetic for the `when` predicates: the tuner's semantics (C on int64), where
/// an overflow or a division by zero is an error. An error clears `ok`; the value is then 0.
namespace tune_winners::detail {
constexpr std::int64_t add(std::int64_t a, std::int64_t b, bool& ok) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) ok = false;
  return ok ? r : 0;
}
constexpr std::int64_t sub(std::int64_t a, std::int64_t b, bool& ok) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) ok = false;
  return ok ? r : 0;
}
constexpr std::int64_t mul(std::int64_t a, std::int64_t b, bool& ok) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) ok = false;
  return ok ? r : 0;
}
constexpr std::int64_t div(std::int64_t a, std::int64_t b, bool& ok) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) ok = false;
  return ok ? a / b : 0;
}
constexpr std::int64_t mod(std::int64_t a, std::int64_t b, bool& ok) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) ok = false;
  return ok ? a % b : 0;
}
constexpr std::int64_t neg(std::int64_t a, bool& ok) {
  if (a == INT64_MIN) ok = false;
  return ok ? -a : 0;
}
}  // namespace tune_winners::detail
#endif
)";

void write_if_changed(const fs::path& path, const std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream old;
    old << in.rdbuf();
    if (old.str() == text) return;
  }
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  write_file_atomic(path, text);
}

int run_header(const HeaderCliOptions& opt) {
  result<KernelBuild> build = load_kernel_build(opt.manifest);
  if (!build) {
    fmt::print(stderr, "{}\n", build.error().str());
    return exit_bad_input;
  }
  const Manifest& m = build->manifest;
  const Space& space = build->space;
  const std::string ns =
      opt.name_space.empty() ? "tune_winners::" + identifier(m.kernel) : opt.name_space;
  auto bad = [&](const std::string& message) {
    fmt::print(stderr, "tuner header: error: {}\n", message);
    return exit_bad_input;
  };

  // Names the header declares: params (members of each winner), shape names (members of
  // Shape), and the members the header adds itself.
  std::set<std::string> param_names;
  for (const auto& p : space.params()) {
    if (is_reserved(p.name) || p.name == "tune_id" || p.name == "tune_origin")
      return bad(fmt::format("param '{}' of {} cannot be a C++ member name in the header", p.name,
                             display_path(m, m.space)));
    param_names.insert(p.name);
  }
  std::map<std::string, bool> shape_kinds;  // name -> is a string
  std::vector<std::string> shape_order;
  for (const auto& b : space.buckets()) {
    for (const auto& [name, value] : b.shape) {
      if (is_reserved(name))
        return bad(fmt::format("shape name '{}' of {} cannot be a C++ member name in the header",
                               name, display_path(m, m.space)));
      auto [it, added] = shape_kinds.emplace(name, value.is_string());
      if (added)
        shape_order.push_back(name);
      else if (it->second != value.is_string())
        return bad(
            fmt::format("shape name '{}' is an int in one bucket and a string in another "
                        "in {}: the header's Shape needs one type",
                        name, display_path(m, m.space)));
    }
  }
  std::set<std::string> string_shapes;
  for (const auto& [name, is_string] : shape_kinds)
    if (is_string) string_shapes.insert(name);

  // Bucket enumerators, unique.
  std::vector<std::string> enumerators;
  {
    std::set<std::string> used;
    for (const auto& b : space.buckets()) {
      std::string id = identifier(b.name);
      std::string unique = id;
      for (int n = 2; used.count(unique); ++n)
        unique = fmt::format("{}{}", id, n);
      used.insert(unique);
      enumerators.push_back(unique);
    }
  }

  // Per architecture, the winners.
  const Config* incumbent = space.require().empty() ? nullptr : &space.require().front();
  std::vector<ArchWinners> winners;
  std::vector<std::unique_ptr<Record>> keep;  // stale records stay alive for their configs
  int rc = exit_ok;
  for (const auto& arch : m.archs) {
    fs::path path = m.record_path(arch).value();
    std::string label = display_path(m, path);
    result<Verification> v = verify_kernel_record(*build, arch, path);
    if (!v) {
      fmt::print(stderr, "{}\n", v.error().str());
      return exit_bad_input;
    }
    ArchWinners w;
    w.arch = arch;
    const Record* record = nullptr;
    std::string record_origin;
    if (v->state == RecordState::unreadable) {
      fmt::print(stderr, "{}: error: {}\n", label, v->errors.at(0));
      return exit_bad_input;
    }
    if (v->state == RecordState::fresh) {
      keep.push_back(std::make_unique<Record>(*v->record));
      record = keep.back().get();
      record_origin =
          fmt::format("record {} ({})", label, record->context.date.value_or("undated"));
      w.summary = record_origin + ", fresh";
    } else if (v->state == RecordState::stale) {
      result<Record> stale = Record::load(path);
      if (!stale) {
        fmt::print(stderr, "{}\n", stale.error().str());
        return exit_bad_input;
      }
      keep.push_back(std::make_unique<Record>(std::move(*stale)));
      record = keep.back().get();
      record_origin =
          fmt::format("stale record {} ({})", label, record->context.date.value_or("undated"));
      w.summary = record_origin;
      for (const auto& e : v->errors)
        fmt::print(stderr, "{}: warning: stale record used for the header of '{}' {}: {}\n", label,
                   m.kernel, arch, e);
      fmt::print(stderr, "{}: note: re-tune with: {}\n", label, m.retune_command());
    } else {
      w.summary = fmt::format("no record ({} is missing)", label);
      fmt::print(stderr,
                 "{}: warning: no record for '{}' {}: the header uses the first incumbent of {}\n",
                 label, m.kernel, arch, display_path(m, m.space));
    }
    for (const auto& b : space.buckets()) {
      const RecordEntry* e = record ? record->get(b.name) : nullptr;
      bool same_params = e != nullptr && e->config.size() == param_names.size() &&
                         std::all_of(param_names.begin(), param_names.end(),
                                     [&](const std::string& p) { return e->config.find(p); });
      if (e && same_params) {
        w.configs.push_back(&e->config);
        w.origins.push_back(record_origin);
        continue;
      }
      if (record)
        fmt::print(stderr,
                   "{}: warning: {} for bucket '{}': the header uses the first incumbent of {}\n",
                   label, e ? "the entry's config has other params than the space" : "no entry",
                   b.name, display_path(m, m.space));
      if (!incumbent) {
        fmt::print(stderr,
                   "{}: error: no winner for '{}' {} bucket '{}' and no incumbent to fall back "
                   "to: pin one with `tuner record set` or add `require` to {}\n",
                   label, m.kernel, arch, b.name, display_path(m, m.space));
        rc = exit_negative;
        w.configs.push_back(nullptr);
        w.origins.push_back("");
        continue;
      }
      w.configs.push_back(incumbent);
      w.origins.push_back("fallback: first incumbent");
    }
    winners.push_back(std::move(w));
  }
  if (rc != exit_ok) return rc;

  // Arch enumerators and their SM numbers.
  std::vector<std::pair<std::string, int>> arch_ids;
  for (const auto& a : m.archs) {
    int sm = 0;
    for (char c : a.substr(3))
      if (std::isdigit(static_cast<unsigned char>(c))) sm = sm * 10 + (c - '0');
    arch_ids.emplace_back(identifier(a), sm);
  }

  std::string h;
  h += fmt::format("// Generated by `tuner header` from {}: do not edit.\n",
                   comment_text(m.path.string()));
  h += fmt::format("// Kernel '{}', space {} (space hash {}).\n", comment_text(m.kernel),
                   comment_text(display_path(m, m.space)), space.space_hash());
  for (const auto& w : winners)
    h += fmt::format("// {}: {}\n", w.arch, comment_text(w.summary));
  h += "#pragma once\n\n#include <cstdint>\n#include <optional>\n#include <string_view>\n\n";
  h += detail_helpers;
  h += fmt::format("\nnamespace {} {{\n\n", ns);
  h += fmt::format("/// The kernel's name.\ninline constexpr std::string_view kernel = {};\n\n",
                   cxx_string(m.kernel));

  h += "/// The buckets (shape classes) of the space, in its order.\nenum class Bucket {\n";
  for (std::size_t i = 0; i < enumerators.size(); ++i)
    h += fmt::format("  {},  // '{}'\n", enumerators[i], comment_text(space.buckets()[i].name));
  h += "};\n\n/// A bucket's name as the space and the records spell it.\n"
       "constexpr std::string_view name(Bucket b) {\n  switch (b) {\n";
  for (std::size_t i = 0; i < enumerators.size(); ++i)
    h += fmt::format("    case Bucket::{}:\n      return {};\n", enumerators[i],
                     cxx_string(space.buckets()[i].name));
  h += "  }\n  return {};\n}\n\n";

  h += "/// The architectures tuned for, in the manifest's order.\nenum class Arch {\n";
  for (const auto& [id, sm] : arch_ids)
    h += fmt::format("  {},\n", id);
  h += "};\n\n/// An architecture's name (`sm_90`).\nconstexpr std::string_view name(Arch a) {\n"
       "  switch (a) {\n";
  for (std::size_t i = 0; i < arch_ids.size(); ++i)
    h += fmt::format("    case Arch::{}:\n      return {};\n", arch_ids[i].first,
                     cxx_string(m.archs[i]));
  h += "  }\n  return {};\n}\n\n";
  h += "/// The architecture of a compute capability (90 for 9.0), or nullopt when it was not\n"
       "/// tuned for: reported, never guessed.\n"
       "constexpr std::optional<Arch> arch_for_sm(int sm) {\n";
  for (const auto& [id, sm] : arch_ids)
    h += fmt::format("  if (sm == {}) return Arch::{};\n", sm, id);
  h += "  return std::nullopt;\n}\n\n";

  h += "/// A runtime shape: the shape names of every bucket.\nstruct Shape {\n";
  for (const auto& name : shape_order)
    h += shape_kinds[name] ? fmt::format("  std::string_view {}{{}};\n", name)
                           : fmt::format("  std::int64_t {} = 0;\n", name);
  h += "};\n\n";

  h += "/// The bucket of a runtime shape: the first whose `when` holds (a bucket without one\n"
       "/// takes every shape). nullopt when no bucket takes it, or when a `when` fails to\n"
       "/// evaluate (division by zero, overflow): reported, never guessed.\n"
       "constexpr std::optional<Bucket> select([[maybe_unused]] const Shape& s) {\n";
  bool always = false;
  for (std::size_t i = 0; i < enumerators.size() && !always; ++i) {
    const Bucket& b = space.buckets()[i];
    if (!b.when) {
      h += fmt::format("  return Bucket::{};  // '{}': no when\n", enumerators[i],
                       comment_text(b.name));
      always = true;
      break;
    }
    result<Expr> e = Expr::parse(*b.when);
    if (!e) return bad(fmt::format("bucket '{}': {}", b.name, e.error().str()));
    const std::string canonical = e->canonical();
    CanonicalToCxx translate(canonical);
    translate.string_names_ = &string_shapes;
    result<std::string> cxx = translate.run();
    if (!cxx) return bad(fmt::format("bucket '{}': {}", b.name, cxx.error().message));
    h += fmt::format(
        "  {{  // '{}': {}\n    bool ok = true;\n    const std::int64_t v = {};\n"
        "    if (!ok) return std::nullopt;\n    if (v != 0) return Bucket::{};\n  }}\n",
        comment_text(b.name), comment_text(*b.when), *cxx, enumerators[i]);
  }
  if (!always) h += "  return std::nullopt;\n";
  h += "}\n\n";

  // Int params with a value outside int (declared, or a winner's) are long long everywhere.
  std::set<std::string> wide;
  for (const auto& p : space.params())
    for (const auto& v : p.values)
      if (v.is_int() && !fits_int(v)) wide.insert(p.name);
  for (const auto& w : winners)
    for (const Config* c : w.configs)
      for (const auto& [pname, pvalue] : c->params())
        if (pvalue.is_int() && !fits_int(pvalue)) wide.insert(pname);

  h += "/// The winning config of an architecture and bucket: one static constexpr member per\n"
       "/// param, `tune_id` (the config id) and `tune_origin` (where it came from).\n"
       "template <Arch A, Bucket B>\nstruct Winner;\n\n";
  for (std::size_t a = 0; a < winners.size(); ++a) {
    for (std::size_t i = 0; i < enumerators.size(); ++i) {
      const Config& c = *winners[a].configs[i];
      h += fmt::format("// {} '{}': {} ({})\n", winners[a].arch,
                       comment_text(space.buckets()[i].name), comment_text(c.id()),
                       comment_text(winners[a].origins[i]));
      h += fmt::format("template <>\nstruct Winner<Arch::{}, Bucket::{}> {{\n", arch_ids[a].first,
                       enumerators[i]);
      for (const auto& [pname, pvalue] : c.params())
        h += value_decl(pname, pvalue, wide.count(pname) > 0);
      h += fmt::format("  static constexpr const char* tune_id = {};\n", cxx_string(c.id()));
      h += fmt::format("  static constexpr const char* tune_origin = {};\n}};\n\n",
                       cxx_string(winners[a].origins[i]));
    }
  }

  h += "/// Calls `f(Winner<A, B>{})` for the architecture and bucket; returns false (and calls\n"
       "/// nothing) for an architecture that was not tuned for.\n"
       "template <class F>\nconstexpr bool dispatch(Arch a, Bucket b, F&& f) {\n"
       "  switch (a) {\n";
  for (std::size_t a = 0; a < arch_ids.size(); ++a) {
    h += fmt::format("    case Arch::{}:\n      switch (b) {{\n", arch_ids[a].first);
    for (const auto& e : enumerators)
      h += fmt::format(
          "        case Bucket::{}:\n          f(Winner<Arch::{}, Bucket::{}>{{}});\n"
          "          return true;\n",
          e, arch_ids[a].first, e);
    h += "      }\n      return false;\n";
  }
  h += "  }\n  return false;\n}\n\n";
  h += "/// As above, by compute capability (90 for sm_90).\n"
       "template <class F>\nconstexpr bool dispatch(int sm, Bucket b, F&& f) {\n"
       "  const std::optional<Arch> a = arch_for_sm(sm);\n"
       "  return a ? dispatch(*a, b, static_cast<F&&>(f)) : false;\n}\n\n";
  h +=
      "/// The shape's bucket, then its winner on `sm`: false when the architecture was not tuned\n"
      "/// for or no bucket takes the shape.\n"
      "template <class F>\nconstexpr bool dispatch(int sm, const Shape& s, F&& f) {\n"
      "  const std::optional<Bucket> b = select(s);\n"
      "  return b ? dispatch(sm, *b, static_cast<F&&>(f)) : false;\n}\n\n";
  h += fmt::format("}}  // namespace {}\n", ns);

  try {
    write_if_changed(opt.output, h);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner header: error: cannot write '{}': {}\n", opt.output, e.what());
    return exit_environment;
  }
  return exit_ok;
}

}  // namespace

void add_header_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<HeaderCliOptions>();
  auto* sub = app.add_subcommand("header", "write a C++ header with the winning configs");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--output", opt->output, "the header to write")->required();
  sub->add_option("--namespace", opt->name_space,
                  "the header's namespace (default: tune_winners::<kernel>)");
  sub->callback([&run, opt] { run = [opt] { return run_header(*opt); }; });
}

}  // namespace tune::cli
