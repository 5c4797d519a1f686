// A search space read from a TOML file (docs/formats.md "Search space"): params whose product is
// the space, explicit configs, prune expressions, required configs (incumbents), buckets (shape
// classes) and the optional [search] and [bench] settings.
//
// The rules `Space::load` enforces, beyond TOML syntax:
// - top level: `schema = 1` and `kernel` are required; `prune`, `require`, `params_as`,
//   `[params]` (required, at least one param), `[[configs]]`, `[[buckets]]`, `[search]` and
//   `[bench]` and `[entry]` are optional; any other key or table is an error. `schema`, `kernel`,
//   `prune`, `require` and `params_as` are reserved and cannot be param names.
// - names: params and shape names are C identifiers (`[A-Za-z_][A-Za-z0-9_]*`); a shape name
//   may not also be a param (prune expressions would read the param). The kernel name is
//   `[A-Za-z0-9_.-]+`, not starting with '.'. String values of params and configs hold only
//   `[A-Za-z0-9_.:+-]` (they become `-D` tokens). Bucket names are free, non-empty text.
// - values: each param is a non-empty list of distinct values, all ints or all strings;
//   each `[[configs]]` and `require` entry names exactly the declared params, each value of
//   the param's kind (an explicit config's values need not appear in the param's list).
// - buckets: each has a unique `name` and a `shape` table (`{}` for none) and may have a
//   `when` that reads only its own shape names and holds for its own shape. Without any
//   `[[buckets]]` the space has one implicit bucket named "default" with an empty shape.
// - expressions (see expr.hpp) are parsed and type-checked at load; a prune expression may
//   read params and the shape names of every bucket. A config is kept for a bucket when every
//   prune expression holds, evaluated in declaration order (the first false one stops).
// - every `require` entry must be in every bucket's pruned space.
// - [search]: `strategy` (search_settings.hpp: `auto`, the default, `grid`, `random`, `anneal`,
//   `bayes`) and its settings, `budget_s` and `timeout_s` positive numbers. [bench]: `warmup_ms` >=
//   0, `rep_ms` > 0, 1 <= `min_reps` <= `max_reps`, `clear_l2` a boolean. `params_as` is "defines"
//   (the default) or "constexpr".
// - [entry]: `template` (a template entry such as `k<{BM}, {LAYOUT}>`, entry_template.hpp,
//   whose placeholders name params) and `[entry.map.<PARAM>]` tables mapping every value of a
//   string param to its C++ text (`row = "Layout::Row"`).
// - the size (the product plus the explicit configs not in it) is computed before enumerating
//   and a space over `max_space_configs` is refused with its size.
// Every diagnostic names the file, line and column (1-based, in characters) and what was
// expected; a problem inside an expression points at the column inside the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/space/expr.hpp>
#include <tuner/core/space/search_settings.hpp>

namespace tune {

/// Spaces larger than this are refused before enumeration, with their size.
inline constexpr std::uint64_t max_space_configs = 1'000'000;

/// Where something was declared in the space file (1-based; 0 when unknown).
struct SourcePos {
  int line = 0;
  int column = 0;
};

/// A declared param and its values, in declaration order.
struct Param {
  std::string name;
  std::vector<ParamValue> values;
  SourcePos pos;
};

/// A bucket's shape: named int or string values, in declaration order.
using Shape = std::vector<std::pair<std::string, ParamValue>>;

/// A shape class: the record holds one entry per bucket.
struct Bucket {
  std::string name;                 ///< free text; percent-encoded where it becomes a file name
  std::optional<std::string> when;  ///< which runtime shapes belong here (first match wins)
  Shape shape;                      ///< the shape the tune measures
  SourcePos pos;
  /// The shape value named `name`, or nullptr.
  const ParamValue* shape_value(std::string_view name) const;
};

/// [bench]: how each candidate is timed (docs/measurement.md "Timing one candidate").
struct BenchSettings {
  double warmup_ms = 25;
  double rep_ms = 100;
  int min_reps = 5;
  int max_reps = 1000;
  bool clear_l2 = true;
  /// "" (every candidate timed with the settings above) or "quick": the search's candidates
  /// are timed with less warm-up and fewer reps (search_bench), the runoff's finalists with
  /// the settings above (docs/measurement.md "The quick preset").
  std::string preset;
  /// Early rejection of the search's losers (docs/measurement.md "Early rejection"): a search
  /// candidate stops its timed reps once its median is, with confidence, more than
  /// `reject_margin_pct` percent above the best so far. Not part of the space's hash: it never
  /// changes the numbers of a candidate measured in full.
  bool early_reject = true;
  double reject_margin_pct = 10;
};

/// The settings the search's candidates are timed with: `bench` itself, or with the "quick"
/// preset at most 10 ms of warm-up and 20 ms of reps (min_reps unchanged). The runoff always
/// uses `bench`.
BenchSettings search_bench(const BenchSettings& bench);

/// `params_as`: "defines" (`-D<NAME>=<value>`) or "constexpr" (a generated header).
enum class ParamsAs { defines, constexpr_header };

namespace detail {
/// An expression read from the space file, with the file position of each byte of its text
/// (one more for the end), so that a column inside the expression maps to the file.
struct PlacedExpr {
  Expr expr;
  std::vector<SourcePos> places;
  /// The file position of the 1-based `column` within the expression text.
  SourcePos at(int column) const;
};
struct SpaceParser;  // space_parser.hpp: reads and validates the TOML into a Space
}  // namespace detail

/// A parsed, validated space. Construction only through `Space::load` / `Space::parse`, which
/// check every rule listed at the top of this file (reserved names, mixed types, expressions,
/// incumbents, duplicate buckets, the enumeration limit).
class Space {
 public:
  /// Reads and validates a space file. Diagnostics carry the path, line and column.
  static result<Space> load(const std::filesystem::path& path);
  /// As `load`, from text; `path` only labels diagnostics.
  static result<Space> parse(std::string_view toml_text, std::string path);

  /// The file's `schema` (always 1 so far).
  int schema() const noexcept { return schema_; }
  /// The `kernel` name ([A-Za-z0-9_.-]+, not starting with '.').
  const std::string& kernel() const noexcept { return kernel_; }
  /// The path the space was loaded from (as given), or the label passed to `parse`.
  const std::string& path() const noexcept { return path_; }
  /// The declared params, in declaration order.
  const std::vector<Param>& params() const noexcept { return params_; }
  /// Every config before pruning: the product of [params] in declaration order (the first
  /// declared param varies slowest), then the explicit [[configs]]; duplicates kept once.
  const std::vector<Config>& all_configs() const noexcept { return configs_; }
  /// The prune expressions as written, in declaration order.
  const std::vector<std::string>& prune() const noexcept { return prune_; }
  /// Declared incumbents, in declaration order, duplicates once.
  const std::vector<Config>& require() const noexcept { return require_; }
  /// The buckets in declaration order; one implicit "default" bucket without [[buckets]].
  const std::vector<Bucket>& buckets() const noexcept { return buckets_; }
  /// The buckets' names, in declaration order.
  std::vector<std::string> bucket_names() const;
  /// [search], with defaults for what the file leaves out.
  const SearchSettings& search() const noexcept { return search_; }
  /// [bench], with defaults for what the file leaves out.
  const BenchSettings& bench() const noexcept { return bench_; }
  /// How params reach the kernel: -D definitions (default) or a constexpr header.
  ParamsAs params_as() const noexcept { return params_as_; }
  /// The explicit [[configs]] entries, in declaration order.
  const std::vector<Config>& explicit_configs() const noexcept { return explicit_; }
  /// `[entry] template`: the kernel's template entry (entry_template.hpp), when declared here.
  const std::optional<std::string>& entry_template() const noexcept { return entry_template_; }
  /// Where `[entry] template` (its string) is in the file.
  SourcePos entry_template_pos() const noexcept { return entry_template_pos_; }
  /// `[entry.map.<PARAM>]`: per string param, each value's C++ text in the template entry.
  const std::map<std::string, std::map<std::string, std::string>>& entry_maps() const noexcept {
    return entry_maps_;
  }

  /// The bucket named exactly `name`, or nullptr.
  const Bucket* bucket(std::string_view name) const;
  /// The bucket named exactly `name`, or the one message every command gives for a bucket the
  /// space lacks, labelled with the space's path: `no bucket 'm<=521' in the space of 'gemm',
  /// did you mean 'm<=512'? (it has 'm<=512', 'm>512')`.
  result<const Bucket*> find_bucket(std::string_view name) const;

  /// The bucket's configs after pruning, in enumeration order. Expressions were checked at
  /// load; an evaluation error (division by zero) is a diagnostic naming the expression.
  result<std::vector<Config>> configs(const Bucket& bucket) const;
  /// Whether `config` survives pruning for `bucket`. A config lacking a name an expression
  /// reads is a diagnostic. `bucket` (here and in `configs`) is one of buckets() or a copy of
  /// one; another bucket throws tune::error.
  result<bool> keeps(const Config& config, const Bucket& bucket) const;

  /// SHA-256 (hex) over the meaning of the whole file: params, explicit configs, prune,
  /// require, buckets with shapes and predicates, params_as, search and bench settings.
  /// Formatting, comments and key order inside tables do not change it.
  const std::string& space_hash() const noexcept { return space_hash_; }
  /// space_hash() with the stop rules (`budget_s`, `timeout_s`, `max_evals`, `patience`) left
  /// out: what a trial log's header names, so that a resumed search may be given more budget
  /// or evaluations (docs/search.md "Resume").
  std::string search_hash() const { return meaning_hash(false); }
  /// search_hash() with [bench] left out too: what `tuner exec`'s log header names, since its
  /// command measures itself and never reads the timing settings.
  std::string exec_hash() const { return meaning_hash(false, false); }
  /// The hash of a bucket's pruned space: 64-bit FNV-1a over the sorted config ids, each
  /// followed by a zero byte, as 16 hex digits.
  static std::string pruned_space_hash(const std::vector<Config>& pruned);

  /// The first bucket whose `when` holds for `runtime_shape` (a bucket without `when` takes
  /// every shape); nullptr when none does. A `when` that reads a name the runtime shape lacks,
  /// or that fails to evaluate, is a diagnostic at the `when`.
  result<const Bucket*> select(const Shape& runtime_shape) const;

 private:
  Space() = default;
  friend struct detail::SpaceParser;

  std::size_t bucket_index(const Bucket& bucket) const;
  /// The index of the first prune expression that rejects `config` for bucket `b`, or -1.
  result<int> first_rejecting(const Config& config, std::size_t b) const;
  diagnostic at(SourcePos pos, std::string message) const;
  /// The value of space_hash(), computed once the space is read.
  std::string meaning_hash(bool stop_rules = true, bool bench = true) const;

  int schema_ = 1;
  std::string kernel_;
  std::string path_;
  std::vector<Param> params_;
  std::vector<Config> configs_;
  std::vector<std::string> prune_;
  std::vector<SourcePos> prune_pos_;
  std::vector<detail::PlacedExpr> prune_exprs_;
  std::vector<Config> explicit_;
  std::vector<Config> require_;
  std::vector<Bucket> buckets_;
  std::vector<std::optional<detail::PlacedExpr>> when_exprs_;  ///< parallel to buckets_
  SearchSettings search_;
  BenchSettings bench_;
  ParamsAs params_as_ = ParamsAs::defines;
  std::optional<std::string> entry_template_;
  SourcePos entry_template_pos_;
  std::map<std::string, std::map<std::string, std::string>> entry_maps_;
  std::string space_hash_;
};

}  // namespace tune
