// The device gate's host side: the embedded PTX of gate.cu loaded once per context, and the
// passes that compute a check's numbers on the device (tuner/cuda/harness.hpp,
// detail::device_relative_error for check_close, detail::device_differences for check_equal).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/harness.hpp>

extern const char tune_gate_ptx[];  // gate_ptx.cpp, generated from gate.cu at build time

namespace tune::detail {

namespace {

// What the passes write: the sums of the norms pass, the counts and indices of all three, the
// largest difference. Uploaded before a check, downloaded after each pass.
struct Scratch {
  double sums[2];                // sum((out - ref)^2), sum(ref^2) over finite outputs
  unsigned long long counts[5];  // first non-finite, non-finite count, mismatches, first
                                 // mismatch, first index of the largest difference
  unsigned long long worst;      // the largest difference, as the bits of a double
};

constexpr unsigned long long none = std::numeric_limits<unsigned long long>::max();

// The gate's module and its scratch in one context; loaded on first use, kept until the
// context goes (a module is unloaded with its context).
struct GateModule {
  CUmodule module = nullptr;
  CUfunction norms = nullptr;
  CUfunction mismatches = nullptr;
  CUfunction find = nullptr;
  CUfunction equal = nullptr;
  CUfunction next_difference = nullptr;
  CUdeviceptr scratch = 0;
};

std::mutex gate_mutex;  // one check at a time: they share a context's scratch

GateModule& gate_module() {
  static std::map<CUcontext, GateModule> modules;
  const DriverApi& cu = driver();
  CUcontext ctx = nullptr;
  TUNE_CU(cu.cuCtxGetCurrent(&ctx));
  if (ctx == nullptr)
    throw error("the device gate needs a current CUDA context (a tune::Context on this thread)");
  GateModule& g = modules[ctx];
  if (g.module == nullptr) {
    TUNE_CU(cu.cuModuleLoadData(&g.module, tune_gate_ptx));
    TUNE_CU(cu.cuModuleGetFunction(&g.norms, g.module, "tune_gate_norms"));
    TUNE_CU(cu.cuModuleGetFunction(&g.mismatches, g.module, "tune_gate_mismatches"));
    TUNE_CU(cu.cuModuleGetFunction(&g.find, g.module, "tune_gate_find"));
    TUNE_CU(cu.cuModuleGetFunction(&g.equal, g.module, "tune_gate_equal"));
    TUNE_CU(cu.cuModuleGetFunction(&g.next_difference, g.module, "tune_gate_next_difference"));
    TUNE_CU(cu.cuMemAlloc(&g.scratch, sizeof(Scratch)));
  }
  return g;
}

// A pass over `count` values: grid-stride blocks of 256 threads, on the legacy stream (the
// context was synchronized before the first pass, and the next copy waits for it).
void run_pass(CUfunction fn, std::size_t count, void** args) {
  constexpr unsigned threads = 256;
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::size_t>((count + threads - 1) / threads, 1, 2048));
  TUNE_CU(driver().cuLaunchKernel(fn, blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr));
}

Scratch download(const GateModule& g) {
  Scratch s;
  TUNE_CU(driver().cuMemcpyDtoH(&s, g.scratch, sizeof s));
  return s;
}

// One value of a buffer, for the message.
double value_at(CUdeviceptr p, GateKind kind, std::size_t i) {
  if (kind == GateKind::f64) {
    double v = 0;
    TUNE_CU(driver().cuMemcpyDtoH(&v, p + i * sizeof(double), sizeof v));
    return v;
  }
  float v = 0;
  TUNE_CU(driver().cuMemcpyDtoH(&v, p + i * sizeof(float), sizeof v));
  return static_cast<double>(v);
}

}  // namespace

double device_relative_error(CUdeviceptr out, GateKind out_kind, CUdeviceptr ref, GateKind ref_kind,
                             std::size_t count, double tolerance, CheckFailure* failure) {
  const DriverApi& cu = driver();
  TUNE_CU(cu.cuCtxSynchronize());  // the checked launch, on whichever stream
  if (count == 0) return 0;
  std::lock_guard lock(gate_mutex);
  const GateModule& g = gate_module();
  Scratch init{};
  init.counts[0] = init.counts[3] = init.counts[4] = none;
  TUNE_CU(cu.cuMemcpyHtoD(g.scratch, &init, sizeof init));
  CUdeviceptr sums = g.scratch + offsetof(Scratch, sums);
  CUdeviceptr counts = g.scratch + offsetof(Scratch, counts);
  CUdeviceptr worst = g.scratch + offsetof(Scratch, worst);
  int ok = static_cast<int>(out_kind), rk = static_cast<int>(ref_kind);
  unsigned long long n = count;
  void* norm_args[] = {&out, &ok, &ref, &rk, &n, &sums, &counts};
  run_pass(g.norms, count, norm_args);
  Scratch s = download(g);
  const double rel = s.counts[1] > 0 ? std::numeric_limits<double>::quiet_NaN()
                     : s.sums[1] > 0 ? std::sqrt(s.sums[0]) / std::sqrt(s.sums[1])
                                     : std::sqrt(s.sums[0]);
  if (rel <= tolerance || failure == nullptr) return rel;

  // The failure's numbers: the mismatches against each value's scale, the largest difference.
  const std::size_t finite = count - s.counts[1];
  double scale = finite > 0 ? std::sqrt(s.sums[1] / static_cast<double>(finite)) : 0.0;
  void* mismatch_args[] = {&out, &ok, &ref, &rk, &n, &tolerance, &scale, &counts, &worst};
  run_pass(g.mismatches, count, mismatch_args);
  s = download(g);
  double largest = 0;
  std::memcpy(&largest, &s.worst, sizeof largest);
  std::size_t worst_index = 0;
  if (s.counts[0] != none) {
    worst_index = s.counts[0];  // the first non-finite output
  } else {
    void* find_args[] = {&out, &ok, &ref, &rk, &n, &largest, &counts};
    run_pass(g.find, count, find_args);
    s = download(g);
    worst_index = s.counts[4] != none ? s.counts[4] : 0;
  }
  failure->rel = rel;
  failure->tolerance = tolerance;
  failure->count = count;
  failure->worst = worst_index;
  failure->got = value_at(out, out_kind, worst_index);
  failure->expected = value_at(ref, ref_kind, worst_index);
  failure->mismatches = s.counts[2];
  failure->first_mismatch = s.counts[3] != none ? s.counts[3] : 0;
  return rel;
}

std::size_t device_differences(CUdeviceptr out, CUdeviceptr ref, std::size_t width,
                               std::size_t count, std::size_t listed,
                               std::vector<std::size_t>* first) {
  if (width != 1 && width != 2 && width != 4 && width != 8)
    throw error("the device gate compares values of 1, 2, 4 or 8 bytes, not " +
                std::to_string(width));
  const DriverApi& cu = driver();
  TUNE_CU(cu.cuCtxSynchronize());  // the checked launch, on whichever stream
  if (count == 0) return 0;
  std::lock_guard lock(gate_mutex);
  const GateModule& g = gate_module();
  Scratch init{};
  init.counts[3] = none;
  TUNE_CU(cu.cuMemcpyHtoD(g.scratch, &init, sizeof init));
  CUdeviceptr counts = g.scratch + offsetof(Scratch, counts);
  int w = static_cast<int>(width);
  unsigned long long n = count;
  void* equal_args[] = {&out, &ref, &w, &n, &counts};
  run_pass(g.equal, count, equal_args);
  const Scratch s = download(g);
  const std::size_t differences = s.counts[2];
  if (differences == 0 || first == nullptr || listed == 0) return differences;
  first->push_back(s.counts[3]);
  // The next ones, one short pass each: from just after the last one found.
  const CUdeviceptr next = g.scratch + offsetof(Scratch, counts) + 3 * sizeof(unsigned long long);
  while (first->size() < std::min(listed, differences)) {
    unsigned long long from = first->back() + 1;
    if (from >= n) break;
    TUNE_CU(cu.cuMemcpyHtoD(next, &none, sizeof none));
    void* next_args[] = {&out, &ref, &w, &n, &from, &counts};
    run_pass(g.next_difference, count - from, next_args);
    unsigned long long found = none;
    TUNE_CU(cu.cuMemcpyDtoH(&found, next, sizeof found));
    if (found == none) break;
    first->push_back(found);
  }
  return differences;
}

}  // namespace tune::detail
