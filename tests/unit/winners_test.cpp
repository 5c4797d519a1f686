#include <tuner/core/record/winners.hpp>

#include <fstream>

#include <gtest/gtest.h>

#include <tuner/core/record/verify.hpp>
#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

const char* space_toml = R"(schema = 1
kernel = "gemm"
require = [{ BM = 64, LAYOUT = "row" }]

[params]
BM = [64, 128]
LAYOUT = ["row", "col"]

[[buckets]]
name = "small"
shape = { M = 512 }

[[buckets]]
name = "large"
shape = { M = 4096 }
)";

const std::string retune = "re-tune with: cmake --build ";

// A project declaring `gemm` for sm_80 and sm_90, with a fake CUDA toolkit whose nvcc and ptxas
// only answer --version.
class Winners : public ::testing::Test {
 protected:
  void SetUp() override {
    root = test::fresh_test_dir("Winners");
    write(root / "kernels/gemm.cu", "#include \"tile.cuh\"\n");
    write(root / "kernels/tile.cuh", "#pragma once\n");
    write(root / "spaces/gemm.toml", space_toml);
    for (const char* tool : {"nvcc", "ptxas"}) {
      write(root / "cuda/bin" / tool,
            "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n");
      fs::permissions(root / "cuda/bin" / tool, fs::perms::owner_all);
    }
    write(root / "build/tune/gemm/manifest.json", R"({"schema_version": 1, "kernel": "gemm",
      "project_root": "../../..", "build_dir": "build", "sources": ["kernels/gemm.cu"],
      "space": "spaces/gemm.toml", "archs": ["sm_80", "sm_90"],
      "records": {"sm_80": "records/gemm.sm_80.json", "sm_90": "records/gemm.sm_90.json"},
      "nvcc": "cuda/bin/nvcc"})");
  }

  KernelBuild build() { return load_kernel_build(root / "build/tune/gemm/manifest.json").value(); }

  /// Pins a verified sm_90 record whose entries are `configs` (bucket -> config), dated.
  void pin(const std::vector<std::pair<std::string, Config>>& configs) {
    KernelBuild b = build();
    CacheKeyer keyer(b.manifest, b.space.params_as());
    Workspace w = current_workspace(b.manifest, b.space, "sm_90", keyer.toolchain()).value();
    Record r(w);
    r.context.date = "2026-11-30";
    for (const auto& [bucket, config] : configs) {
      RecordEntry e;
      e.bucket = bucket;
      e.pruned_space_hash = w.bucket(bucket)->pruned_space_hash;
      e.config = config;
      CacheKey k = keyer.key(e.config, "sm_90");
      e.cache_key = L2Key{k.schema, k.digest};
      e.source = "pinned";
      r.insert(e);
    }
    r.save(root / "records/gemm.sm_90.json");
  }

  fs::path root;
};

const Config incumbent{{"BM", 64}, {"LAYOUT", "row"}};
const Config col128{{"BM", 128}, {"LAYOUT", "col"}};

TEST_F(Winners, MissingRecordsFallBackToTheFirstIncumbent) {
  WinnersTable t = choose_winners(build());
  ASSERT_EQ(t.archs.size(), 2u);
  for (const ArchWinners& w : t.archs) {
    EXPECT_EQ(w.record_state, RecordState::missing);
    EXPECT_EQ(w.record_label, "records/gemm." + w.arch + ".json");
    EXPECT_FALSE(w.record_date.has_value());
    ASSERT_EQ(w.buckets.size(), 2u);
    EXPECT_EQ(w.buckets[0].bucket, "small");
    EXPECT_EQ(w.buckets[1].bucket, "large");
    for (const BucketWinner& b : w.buckets) {
      EXPECT_EQ(b.source, WinnerSource::incumbent);
      EXPECT_EQ(b.fallback, FallbackReason::no_record);
      EXPECT_EQ(b.config, incumbent);
    }
  }
  ASSERT_EQ(t.notices.size(), 2u);
  EXPECT_EQ(t.notices[0].severity, WinnerNotice::Severity::warning);
  EXPECT_EQ(t.notices[0].str(),
            "records/gemm.sm_80.json: warning: no record for 'gemm' sm_80: the header uses the "
            "first incumbent of spaces/gemm.toml");
  EXPECT_EQ(t.notices[1].path, "records/gemm.sm_90.json");
  EXPECT_TRUE(t.complete());
}

TEST_F(Winners, AFreshRecordShipsItsEntries) {
  pin({{"small", col128}, {"large", incumbent}});
  WinnersTable t = choose_winners(build());
  const ArchWinners& w = t.archs.at(1);
  EXPECT_EQ(w.arch, "sm_90");
  EXPECT_EQ(w.record_state, RecordState::fresh);
  EXPECT_EQ(w.record_date, "2026-11-30");
  EXPECT_TRUE(w.stale_reasons.empty());
  EXPECT_EQ(w.buckets[0].source, WinnerSource::record);
  EXPECT_FALSE(w.buckets[0].fallback.has_value());
  EXPECT_EQ(w.buckets[0].config, col128);
  EXPECT_EQ(w.buckets[1].config, incumbent);
  EXPECT_EQ(w.buckets[1].source, WinnerSource::record);
  ASSERT_EQ(t.notices.size(), 1u);  // sm_80's missing record only
  EXPECT_EQ(t.notices[0].path, "records/gemm.sm_80.json");
  EXPECT_TRUE(t.complete());
}

TEST_F(Winners, AStaleRecordShipsWithTheVerificationsReasons) {
  pin({{"small", col128}, {"large", col128}});
  write(root / "kernels/tile.cuh", "#pragma once\n// edited\n");
  WinnersTable t = choose_winners(build());
  const ArchWinners& w = t.archs.at(1);
  EXPECT_EQ(w.record_state, RecordState::stale);
  EXPECT_EQ(w.record_date, "2026-11-30");
  ASSERT_FALSE(w.stale_reasons.empty());
  for (const BucketWinner& b : w.buckets) {
    EXPECT_EQ(b.source, WinnerSource::record);
    EXPECT_EQ(b.config, col128);
  }
  // sm_80's warning, then one warning per reason and the re-tune note.
  ASSERT_EQ(t.notices.size(), w.stale_reasons.size() + 2);
  for (std::size_t i = 0; i < w.stale_reasons.size(); ++i) {
    EXPECT_EQ(t.notices[i + 1].str(),
              "records/gemm.sm_90.json: warning: stale record used for the header of 'gemm' "
              "sm_90: " +
                  w.stale_reasons[i]);
  }
  EXPECT_EQ(t.notices.back().severity, WinnerNotice::Severity::note);
  EXPECT_EQ(t.notices.back().message, retune + (root / "build").string() + " --target tune.gemm");
  EXPECT_TRUE(t.complete());
}

TEST_F(Winners, AMissingEntryOrOneWithOtherParamsFallsBack) {
  pin({{"small", Config{{"BM", 128}, {"LAYOUT", "col"}, {"OLD", 1}}}});
  WinnersTable t = choose_winners(build());
  const ArchWinners& w = t.archs.at(1);
  EXPECT_EQ(w.buckets[0].source, WinnerSource::incumbent);
  EXPECT_EQ(w.buckets[0].fallback, FallbackReason::other_params);
  EXPECT_EQ(w.buckets[0].config, incumbent);
  EXPECT_EQ(w.buckets[1].source, WinnerSource::incumbent);
  EXPECT_EQ(w.buckets[1].fallback, FallbackReason::no_entry);
  std::vector<std::string> bucket_warnings;
  for (const WinnerNotice& n : t.notices)
    if (n.message.find("for bucket") != std::string::npos &&
        n.message.find("stale") == std::string::npos)
      bucket_warnings.push_back(n.str());
  EXPECT_EQ(bucket_warnings,
            (std::vector<std::string>{
                "records/gemm.sm_90.json: warning: the entry's config has other params than the "
                "space for bucket 'small': the header uses the first incumbent of spaces/gemm.toml",
                "records/gemm.sm_90.json: warning: no entry for bucket 'large': the header uses "
                "the first incumbent of spaces/gemm.toml"}));
  EXPECT_TRUE(t.complete());
}

TEST_F(Winners, AFallbackWithoutAnIncumbentIsAnError) {
  std::string toml = space_toml;
  toml.erase(toml.find("require"), toml.find("\n[params]") - toml.find("require"));
  write(root / "spaces/gemm.toml", toml);
  pin({{"small", col128}});
  WinnersTable t = choose_winners(build());
  EXPECT_FALSE(t.complete());
  const ArchWinners& w = t.archs.at(1);
  EXPECT_EQ(w.buckets[0].source, WinnerSource::record);
  EXPECT_EQ(w.buckets[1].source, WinnerSource::none);
  EXPECT_EQ(w.buckets[1].fallback, FallbackReason::no_entry);
  EXPECT_FALSE(w.buckets[1].config.has_value());
  std::vector<std::string> errors;
  for (const WinnerNotice& n : t.notices)
    if (n.severity == WinnerNotice::Severity::error) errors.push_back(n.str());
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "records/gemm.sm_80.json: error: no winner for 'gemm' sm_80 bucket 'small' "
                        "and no incumbent to fall back to: pin one with `tuner record set` or add "
                        "`require` to spaces/gemm.toml",
                        "records/gemm.sm_80.json: error: no winner for 'gemm' sm_80 bucket 'large' "
                        "and no incumbent to fall back to: pin one with `tuner record set` or add "
                        "`require` to spaces/gemm.toml",
                        "records/gemm.sm_90.json: error: no winner for 'gemm' sm_90 bucket 'large' "
                        "and no incumbent to fall back to: pin one with `tuner record set` or add "
                        "`require` to spaces/gemm.toml"}));
}

TEST_F(Winners, AnUnreadableRecordStopsTheChoice) {
  write(root / "records/gemm.sm_90.json", "{not json");
  WinnersTable t = choose_winners(build());
  EXPECT_FALSE(t.complete());
  ASSERT_TRUE(t.bad_input.has_value());
  EXPECT_EQ(t.bad_input->path, "records/gemm.sm_90.json");
  EXPECT_EQ(t.bad_input->str().rfind("records/gemm.sm_90.json: error: not valid JSON: ", 0), 0u)
      << t.bad_input->str();
  // sm_80, before it, is chosen, and its notice kept.
  ASSERT_EQ(t.archs.size(), 1u);
  EXPECT_EQ(t.archs[0].arch, "sm_80");
  ASSERT_EQ(t.notices.size(), 1u);
  EXPECT_EQ(t.notices[0].path, "records/gemm.sm_80.json");
}

}  // namespace
}  // namespace tune
