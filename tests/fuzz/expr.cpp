// Fuzz target: Expr::parse on arbitrary text, then type-checking and evaluation with a fixed
// lookup (A=7, B=-3, Z=0, BIG=INT64_MAX, S='row'; other names unknown). The canonical form
// (when it holds no JSON escapes) must parse to itself and evaluate as the original does.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <tuner/core/space/expr.hpp>

#include "fuzz_check.hpp"

namespace {

const tune::ParamValue* lookup(std::string_view name) {
  static const tune::ParamValue a{std::int64_t{7}}, b{std::int64_t{-3}}, z{std::int64_t{0}},
      big{std::numeric_limits<std::int64_t>::max()}, s{std::string("row")};
  if (name == "A") return &a;
  if (name == "B") return &b;
  if (name == "Z") return &z;
  if (name == "BIG") return &big;
  if (name == "S") return &s;
  return nullptr;
}

std::optional<tune::ValueKind> kind(std::string_view name) {
  const tune::ParamValue* v = lookup(name);
  if (v == nullptr) return std::nullopt;
  return v->is_int() ? tune::ValueKind::integer : tune::ValueKind::string;
}

// The value as text, or the error message, for comparing two evaluations.
std::string outcome(const tune::result<tune::ParamValue>& r) {
  return r ? "value " + r->canonical() : "error " + r.error().message;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tune::result<tune::Expr> expr = tune::Expr::parse(text);
  if (!expr) {
    tune::fuzz::check(!expr.error().message.empty(), "a diagnostic without a message");
    return 0;
  }
  for (const std::string& name : expr->names())
    tune::fuzz::check(expr->name_column(name) >= 1, "a name without a column: " + name);
  const std::string canonical = expr->canonical();
  // The canonical form JSON-quotes strings and the language has no escapes, so only a form
  // without backslashes (strings without quotes or control characters) reads back as itself.
  const bool reparsable = canonical.find('\\') == std::string::npos;
  tune::result<tune::Expr> reparsed = tune::Expr::parse(reparsable ? canonical : text);
  tune::fuzz::check(reparsed.has_value(), "the canonical form does not parse: " + canonical);
  tune::fuzz::check(reparsed->canonical() == canonical,
                    "the canonical form is not stable: " + canonical);

  tune::result<tune::ValueKind> checked = expr->check(kind);
  tune::result<tune::ParamValue> value = expr->eval(lookup);
  if (checked && value)
    tune::fuzz::check(value->is_int() == (*checked == tune::ValueKind::integer),
                      "check and eval disagree on the kind of " + canonical);
  // Evaluation order is fixed (left to right, short-circuit), so the canonical form fails or
  // succeeds exactly as the original does. Errors of unknown names are compared too.
  if (checked) {
    tune::result<tune::ParamValue> value2 = reparsed->eval(lookup);
    tune::fuzz::check(
        value.has_value() == value2.has_value() && (!value || outcome(value) == outcome(value2)),
        "the canonical form evaluates differently: " + canonical + ": " + outcome(value) + " vs " +
            outcome(value2));
  }
  (void)expr->test(lookup);
  return 0;
}
