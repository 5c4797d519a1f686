// Fuzz target: the shard summary reader (ShardSummary::load, what `tuner merge` reads from every
// shard's folder). The bytes are written to a scratch file and loaded; a summary that loads must
// dump to text that loads again to the same summary (the same dump).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <tuner/core/scale/shard.hpp>

#include "fuzz_check.hpp"

namespace {

std::filesystem::path scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                    "/tune-fuzz-shard-summary-XXXXXX";
  tune::fuzz::check(::mkdtemp(dir.data()) != nullptr, "cannot create a scratch directory");
  return dir;
}

void write(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  tune::fuzz::check(static_cast<bool>(out), "cannot write the scratch file");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = scratch_dir();
  const std::filesystem::path path = dir / "shard-1-of-2.json";
  write(path, std::string_view(reinterpret_cast<const char*>(data), size));
  tune::result<tune::ShardSummary> summary = tune::ShardSummary::load(path);
  if (!summary) {
    tune::fuzz::check(!summary.error().message.empty(), "a diagnostic without a message");
    return 0;
  }
  tune::fuzz::check(summary->shard.index >= 1 && summary->shard.index <= summary->shard.count,
                    "a summary of a shard outside 1..N loads");
  const std::string dumped = summary->dump();
  const std::filesystem::path again_path = dir / "again.json";
  write(again_path, dumped);
  tune::result<tune::ShardSummary> again = tune::ShardSummary::load(again_path);
  tune::fuzz::check(again.has_value(), "a dumped summary does not load: " + dumped);
  tune::fuzz::check(again->dump() == dumped, "a summary does not survive dump and load");
  return 0;
}
