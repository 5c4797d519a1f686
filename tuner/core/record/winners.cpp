#include <tuner/core/record/winners.hpp>

#include <algorithm>
#include <filesystem>
#include <utility>

#include <fmt/core.h>

#include <tuner/core/record/verify.hpp>

namespace tune {

namespace {

namespace fs = std::filesystem;

/// Whether `config` has exactly the space's params (a record tuned before a param was added or
/// removed does not).
bool has_space_params(const Config& config, const Space& space) {
  const auto& params = space.params();
  return config.size() == params.size() &&
         std::all_of(params.begin(), params.end(),
                     [&](const Param& p) { return config.find(p.name) != nullptr; });
}

/// Chooses one architecture's winners, adding its notices to `notices`.
class ArchChooser {
 public:
  ArchChooser(const KernelBuild& build, std::vector<WinnerNotice>& notices)
      : build_(build), notices_(notices) {}

  result<ArchWinners> run(const std::string& arch) {
    const Manifest& m = build_.manifest;
    const fs::path path = m.record_path(arch).value();
    ArchWinners w;
    w.arch = arch;
    w.record_label = display_path(m, path);
    result<Verification> v = verify_kernel_record(build_, arch, path);
    if (!v) return fail(v.error());
    w.record_state = v->state;
    std::optional<Record> record;
    switch (v->state) {
      case RecordState::unreadable:
        return fail(w.record_label, 0, 0, v->errors.at(0));
      case RecordState::fresh:
        record = std::move(v->record);
        break;
      case RecordState::stale: {
        result<Record> stale = Record::load(path);
        if (!stale) return fail(stale.error());
        record = std::move(*stale);
        w.stale_reasons = v->errors;
        for (const auto& e : w.stale_reasons)
          notice(w, WinnerNotice::Severity::warning,
                 fmt::format("stale record used for the header of '{}' {}: {}", m.kernel, arch, e));
        notice(w, WinnerNotice::Severity::note, "re-tune with: " + m.retune_command());
        break;
      }
      case RecordState::missing:
        notice(w, WinnerNotice::Severity::warning,
               fmt::format("no record for '{}' {}: the header uses the first incumbent of {}",
                           m.kernel, arch, space_label()));
        break;
    }
    if (record) w.record_date = record->context.date;
    for (const auto& b : build_.space.buckets())
      w.buckets.push_back(bucket(w, record ? &*record : nullptr, b));
    return w;
  }

 private:
  BucketWinner bucket(const ArchWinners& w, const Record* record, const Bucket& b) {
    BucketWinner out;
    out.bucket = b.name;
    const RecordEntry* e = record ? record->get(b.name) : nullptr;
    if (e && has_space_params(e->config, build_.space)) {
      out.source = WinnerSource::record;
      out.config = e->config;
      return out;
    }
    out.fallback = !record ? FallbackReason::no_record
                   : e     ? FallbackReason::other_params
                           : FallbackReason::no_entry;
    if (record)
      notice(w, WinnerNotice::Severity::warning,
             fmt::format("{} for bucket '{}': the header uses the first incumbent of {}",
                         e ? "the entry's config has other params than the space" : "no entry",
                         b.name, space_label()));
    const std::vector<Config>& require = build_.space.require();
    if (require.empty()) {
      notice(w, WinnerNotice::Severity::error,
             fmt::format("no winner for '{}' {} bucket '{}' and no incumbent to fall back to: pin "
                         "one with `tuner record set` or add `require` to {}",
                         build_.manifest.kernel, w.arch, b.name, space_label()));
      out.source = WinnerSource::none;
      return out;
    }
    out.source = WinnerSource::incumbent;
    out.config = require.front();
    return out;
  }

  void notice(const ArchWinners& w, WinnerNotice::Severity severity, std::string message) {
    notices_.push_back(WinnerNotice{w.record_label, severity, std::move(message)});
  }

  std::string space_label() const { return display_path(build_.manifest, build_.manifest.space); }

  const KernelBuild& build_;
  std::vector<WinnerNotice>& notices_;
};

std::string_view severity_text(WinnerNotice::Severity s) {
  switch (s) {
    case WinnerNotice::Severity::warning:
      return "warning";
    case WinnerNotice::Severity::note:
      return "note";
    case WinnerNotice::Severity::error:
      return "error";
  }
  return "error";
}

}  // namespace

std::string WinnerNotice::str() const {
  return fmt::format("{}: {}: {}", path, severity_text(severity), message);
}

bool WinnersTable::complete() const {
  return !bad_input && std::none_of(notices.begin(), notices.end(), [](const WinnerNotice& n) {
    return n.severity == WinnerNotice::Severity::error;
  });
}

WinnersTable choose_winners(const KernelBuild& build) {
  WinnersTable table;
  ArchChooser chooser(build, table.notices);
  for (const auto& arch : build.manifest.archs) {
    result<ArchWinners> w = chooser.run(arch);
    if (!w) {
      table.bad_input = w.error();
      break;
    }
    table.archs.push_back(std::move(*w));
  }
  return table;
}

}  // namespace tune
