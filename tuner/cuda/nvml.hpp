// NVML, reached at run time and optional: the bench asks it whether the GPU is throttling and
// whether other processes are using the device, and reports either as a warning. Where
// libnvidia-ml.so.1 is missing or a query is not supported, the answers are simply absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tune::detail {

/// One device as NVML sees it, found by PCI bus id (so CUDA_VISIBLE_DEVICES and CUDA's
/// device order do not matter).
class NvmlDevice {
 public:
  /// The device at `pci_bus_id` (`0000:18:00.0`), or an object whose queries answer nullopt
  /// when NVML is unavailable or does not know the device. Never throws.
  explicit NvmlDevice(const std::string& pci_bus_id);

  bool available() const noexcept { return handle_ != nullptr; }

  /// The current clock event ("throttle") reasons, as NVML's bit mask; nullopt when unknown.
  std::optional<std::uint64_t> clock_event_reasons() const;

  /// Process ids of every compute process on the device; nullopt when unknown.
  std::optional<std::vector<unsigned>> compute_processes() const;

 private:
  void* handle_ = nullptr;
};

/// The throttling among NVML clock event `reasons` that slows a measurement down, named
/// (`sw_power_cap, hw_thermal_slowdown`); empty when none. Idle, application-clock settings and
/// display clocks are not throttling and are left out.
std::string throttle_names(std::uint64_t reasons);

}  // namespace tune::detail
