#include <tuner/cuda/nvml.hpp>

#include <dlfcn.h>

#include <mutex>
#include <utility>

namespace tune::detail {

namespace {

// The few NVML declarations used here, in NVML's stable C ABI (nvml.h is not part of every
// toolkit installation, and nothing of it is needed at build time).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t nvml_success = 0;
constexpr nvmlReturn_t nvml_insufficient_size = 7;

// nvmlProcessInfo_v2_st, the element type of nvmlDeviceGetComputeRunningProcesses_v3.
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, NvmlProcessInfo*) = nullptr;
};

// NVML loaded and initialized once per process, or nullptr where it is unavailable.
const Nvml* nvml() {
  static const Nvml* loaded = []() -> const Nvml* {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    static Nvml n;
    n.init = reinterpret_cast<decltype(n.init)>(dlsym(lib, "nvmlInit_v2"));
    n.by_pci = reinterpret_cast<decltype(n.by_pci)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    // The clock "event" reasons were called "throttle" reasons before NVML 12.
    void* reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons) reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    n.reasons = reinterpret_cast<decltype(n.reasons)>(reasons);
    n.processes = reinterpret_cast<decltype(n.processes)>(
        dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (!n.init || !n.by_pci || n.init() != nvml_success) return nullptr;
    return &n;
  }();
  return loaded;
}

}  // namespace

NvmlDevice::NvmlDevice(const std::string& pci_bus_id) {
  const Nvml* n = nvml();
  nvmlDevice_t device = nullptr;
  if (n && n->by_pci(pci_bus_id.c_str(), &device) == nvml_success) handle_ = device;
}

std::optional<std::uint64_t> NvmlDevice::clock_event_reasons() const {
  const Nvml* n = nvml();
  unsigned long long reasons = 0;
  if (!handle_ || !n->reasons || n->reasons(handle_, &reasons) != nvml_success) {
    return std::nullopt;
  }
  return reasons;
}

std::optional<std::vector<unsigned>> NvmlDevice::compute_processes() const {
  const Nvml* n = nvml();
  if (!handle_ || !n->processes) return std::nullopt;
  // Ask for the count first; processes may come and go between the calls, so leave room.
  unsigned int count = 0;
  nvmlReturn_t rc = n->processes(handle_, &count, nullptr);
  if (rc != nvml_success && rc != nvml_insufficient_size) return std::nullopt;
  std::vector<NvmlProcessInfo> infos(count + 16);
  count = static_cast<unsigned>(infos.size());
  if (n->processes(handle_, &count, infos.data()) != nvml_success) return std::nullopt;
  std::vector<unsigned> pids;
  for (unsigned i = 0; i < count && i < infos.size(); ++i)
    pids.push_back(infos[i].pid);
  return pids;
}

std::string throttle_names(std::uint64_t reasons) {
  // nvmlClocksEventReason* bits (nvml.h); idle (0x1), application clocks (0x2) and display
  // clocks (0x100) are left out: they do not slow a running kernel below its clocks.
  static constexpr std::pair<std::uint64_t, const char*> names[] = {
      {0x4, "sw_power_cap"},         {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},          {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"},
  };
  std::string out;
  for (const auto& [bit, name] : names) {
    if (reasons & bit) {
      if (!out.empty()) out += ", ";
      out += name;
    }
  }
  return out;
}

}  // namespace tune::detail
