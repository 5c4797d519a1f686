// Fuzz target: the record reader (Record::parse, then verification against a fixed workspace)
// and, on the same JSON text, the manifest reader. A record that loads must dump to JSON that
// loads again to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tuner/core/build/manifest.hpp>
#include <tuner/core/record/record.hpp>

#include "fuzz_check.hpp"

namespace {

tune::Workspace workspace() {
  tune::Workspace w;
  w.kernel = "gemm";
  w.arch = "sm_90";
  w.source_hash = "src";
  w.space_hash = "space";
  w.toolchain = "nvcc 13.0.88, ptxas 13.0.88";
  w.buckets.push_back({"default", "0011223344556677", {"BM=64", "BM=128"}});
  w.buckets.push_back({"large m", "8899aabbccddeeff", {"BM=128"}});
  w.retune_command = "cmake --build build --target tune.gemm";
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  tune::result<tune::Record> record = tune::Record::parse(text, "fuzz.json");
  if (record) {
    const std::string dumped = record->dump();
    tune::result<tune::Record> again = tune::Record::parse(dumped, "dumped.json");
    tune::fuzz::check(again.has_value(), "a dumped record does not load: " + dumped);
    tune::fuzz::check(again->dump() == dumped, "a record does not survive dump and load");
    static const tune::Workspace w = workspace();
    tune::Verification v = tune::verify_record(*record, w, [](const tune::RecordEntry&) {
      return tune::L2Key{"k1", "abc"};
    });
    (void)v.report("fuzz.json");
  } else {
    tune::fuzz::check(!record.error().message.empty(), "a diagnostic without a message");
    // The position of a bad field is found again in the text: it must lie inside it.
    const auto lines = 1 + std::count(text.begin(), text.end(), '\n');
    tune::fuzz::check(record.error().line >= 0 && record.error().line <= lines,
                      "a diagnostic names a line outside the text");
  }
  tune::result<tune::Manifest> manifest = tune::Manifest::parse(text, "/fuzz/build/manifest.json");
  if (manifest) {
    (void)manifest->to_json().dump();
    (void)manifest->retune_command();
  }
  return 0;
}
