#include <tuner/cuda/module.hpp>

#include <cstdint>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/build/kernel_cache.hpp>

namespace tune {

namespace {

// Makes a context current for a scope and restores the previous one.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx) { TUNE_CU(driver().cuCtxPushCurrent(ctx)); }
  ~ScopedContext() {
    CUcontext popped = nullptr;
    driver().cuCtxPopCurrent(&popped);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
};

std::string dims(Dim3 d) {
  return fmt::format("{}x{}x{}", d.x, d.y, d.z);
}

// The limits a launch of `fn` on `device` is checked against, read once per function.
detail::LaunchLimits launch_limits(CUfunction fn, CUdevice device) {
  const DriverApi& cu = driver();
  auto of_function = [&](CUfunction_attribute a) {
    int v = 0;
    TUNE_CU(cu.cuFuncGetAttribute(&v, a, fn));
    return v;
  };
  auto of_device = [&](CUdevice_attribute a) {
    int v = 0;
    TUNE_CU(cu.cuDeviceGetAttribute(&v, a, device));
    return v;
  };
  detail::LaunchLimits l;
  l.max_threads_per_block = of_function(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  l.registers = of_function(CU_FUNC_ATTRIBUTE_NUM_REGS);
  l.static_shared_bytes = of_function(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  l.max_shared_bytes = of_device(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  const CUdevice_attribute block[3] = {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z};
  const CUdevice_attribute grid[3] = {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                      CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
  for (int i = 0; i < 3; ++i) {
    l.max_block[i] = static_cast<unsigned>(of_device(block[i]));
    l.max_grid[i] = static_cast<unsigned>(of_device(grid[i]));
  }
  return l;
}

// ---------------------------------------------------------------------------------------------
// The in-memory module cache: one slot per (key, context). The map's mutex is held only to
// find or create a slot; the slot's own mutex is held while its module loads, so that one
// thread loads each key while the others wait for it, and different keys load in parallel.

struct Slot {
  std::mutex mutex;
  std::shared_ptr<Module> module;
};

struct ModuleCache {
  std::mutex mutex;
  std::map<std::pair<std::string, CUcontext>, std::shared_ptr<Slot>> slots;
  std::atomic<std::size_t> loads{0};
};

ModuleCache& module_cache() {
  // Never destroyed: at process exit the driver may be gone before static destructors run,
  // and the process's end releases every module anyway.
  static ModuleCache* cache = new ModuleCache;
  return *cache;
}

std::shared_ptr<Module> get_or_load(Context& ctx, const std::string& key,
                                    const std::function<std::string()>& image) {
  ctx.make_current();
  ModuleCache& cache = module_cache();
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(cache.mutex);
    auto& s = cache.slots[{key, ctx.get()}];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  std::unique_lock lock(slot->mutex);
  if (!slot->module) {
    try {
      slot->module = std::make_shared<Module>(key, ctx, image());
    } catch (...) {
      // A failed load caches nothing: the slot goes (unless another caller is already using
      // it), and the next caller tries again.
      lock.unlock();
      std::lock_guard map_lock(cache.mutex);
      auto it = cache.slots.find({key, ctx.get()});
      if (it != cache.slots.end() && it->second == slot && slot.use_count() == 2) {
        cache.slots.erase(it);
      }
      throw;
    }
    ++cache.loads;
  }
  return slot->module;
}

// Removes the slots `pick` selects, then quiesces and drops their modules outside the map's
// lock (waiting for queued launches can take as long as those launches).
std::size_t evict_where(const std::function<bool(std::string_view)>& pick) {
  ModuleCache& cache = module_cache();
  std::vector<std::shared_ptr<Slot>> gone;
  {
    std::lock_guard lock(cache.mutex);
    for (auto it = cache.slots.begin(); it != cache.slots.end();) {
      if (pick(it->first.first)) {
        gone.push_back(std::move(it->second));
        it = cache.slots.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::size_t count = 0;
  for (auto& slot : gone) {
    std::shared_ptr<Module> module;
    {
      std::lock_guard lock(slot->mutex);  // waits for a load in progress
      module = std::move(slot->module);
    }
    if (!module) continue;  // a load that failed: nothing was cached
    ++count;
    module->quiesce();
    // Dropping the last reference unloads it; a Function still held elsewhere keeps it
    // loaded, and its destructor quiesces again before the unload.
  }
  return count;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Function

FunctionAttributes Function::attributes() const {
  const DriverApi& cu = driver();
  auto get = [&](CUfunction_attribute a) {
    int v = 0;
    TUNE_CU(cu.cuFuncGetAttribute(&v, a, state_->fn));
    return v;
  };
  FunctionAttributes a;
  a.registers = get(CU_FUNC_ATTRIBUTE_NUM_REGS);
  a.static_shared_bytes = get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  a.local_bytes = get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  a.const_bytes = get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
  a.max_threads_per_block = get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  a.max_dynamic_shared_bytes = get(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  a.binary_version = get(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
  return a;
}

void Function::set_dynamic_shared_limit(int bytes) const {
  CUresult rc = driver().cuFuncSetAttribute(state_->fn,
                                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  if (rc != CUDA_SUCCESS) {
    throw cuda_error(rc, fmt::format("cannot give function '{}' {} bytes of dynamic shared "
                                     "memory: {}",
                                     state_->name, bytes, cu_error_name(rc)));
  }
  state_->dynamic_shared_limit.store(bytes);
}

namespace detail {

std::string launch_refusal(const LaunchLimits& limits, const std::string& name, Dim3 grid,
                           Dim3 block, std::size_t shared_bytes) {
  const std::string refused = fmt::format("launch of '{}' refused: ", name);
  const unsigned g[3] = {grid.x, grid.y, grid.z};
  const unsigned b[3] = {block.x, block.y, block.z};
  const char* axis = "xyz";
  for (int i = 0; i < 3; ++i) {
    if (g[i] == 0 || b[i] == 0)
      return refused + fmt::format("an empty {} (grid {}, block {}): nothing would run",
                                   g[i] == 0 ? "grid" : "block", dims(grid), dims(block));
    if (b[i] > limits.max_block[i])
      return refused + fmt::format("block dimension {} of {} is more than the device's {}", axis[i],
                                   b[i], limits.max_block[i]);
    if (g[i] > limits.max_grid[i])
      return refused + fmt::format("grid dimension {} of {} is more than the device's {}", axis[i],
                                   g[i], limits.max_grid[i]);
  }
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  if (threads > static_cast<std::uint64_t>(limits.max_threads_per_block))
    return refused + fmt::format(
                         "a block of {} threads ({}) is more than the {} that '{}' allows (it "
                         "uses {} registers per thread; they and its __launch_bounds__ set that "
                         "limit)",
                         threads, dims(block), limits.max_threads_per_block, name,
                         limits.registers);
  const std::uint64_t shared =
      shared_bytes + static_cast<std::uint64_t>(limits.static_shared_bytes);
  if (shared > static_cast<std::uint64_t>(limits.max_shared_bytes))
    return refused + fmt::format(
                         "{} bytes of dynamic shared memory and {} of static make {}, more than "
                         "the {} bytes a block may have on this device",
                         shared_bytes, limits.static_shared_bytes, shared, limits.max_shared_bytes);
  return {};
}

}  // namespace detail

void Function::launch_raw(Dim3 grid, Dim3 block, std::size_t shared_bytes, CUstream stream,
                          void** params) const {
  if (!state_) throw error("launch of an empty tune::Function");
  if (std::string why =
          detail::launch_refusal(state_->limits, state_->name, grid, block, shared_bytes);
      !why.empty())
    throw launch_error(why);
  if (shared_bytes > static_cast<std::size_t>(state_->dynamic_shared_limit.load())) {
    set_dynamic_shared_limit(static_cast<int>(shared_bytes));
  }
  const DriverApi& cu = driver();
  CUresult rc = cu.cuLaunchKernel(state_->fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                  static_cast<unsigned>(shared_bytes), stream, params, nullptr);
  if (rc != CUDA_SUCCESS) {
    throw cuda_error(
        rc, fmt::format("launch of '{}' (grid {}, block {}, {} bytes of dynamic "
                        "shared memory) failed: {}",
                        state_->name, dims(grid), dims(block), shared_bytes, cu_error_name(rc)));
  }
  if (auto* scope = detail::LaunchScope::current()) {
    scope->note(module_, stream);
    return;
  }
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  TUNE_CU(cu.cuStreamIsCapturing(stream, &capturing));
  if (capturing != CU_STREAM_CAPTURE_STATUS_NONE) {
    // An event recorded during capture would not track the graph's launches.
    throw error(
        fmt::format("launch of '{}' on a capturing stream: graphs of tune modules are "
                    "captured by tune's bench only",
                    state_->name));
  }
  module_->track(stream);
}

// ---------------------------------------------------------------------------------------------
// Global

void Global::upload(const void* host, std::size_t size) const {
  if (size != bytes) {
    throw error(fmt::format("upload of {} bytes into a global of {} bytes", size, bytes));
  }
  TUNE_CU(driver().cuMemcpyHtoD(dptr, host, size));
  TUNE_CU(driver().cuCtxSynchronize());
}

void Global::download(void* host, std::size_t size) const {
  if (size != bytes) {
    throw error(fmt::format("download of a global of {} bytes into {} bytes", bytes, size));
  }
  TUNE_CU(driver().cuCtxSynchronize());
  TUNE_CU(driver().cuMemcpyDtoH(host, dptr, size));
}

// ---------------------------------------------------------------------------------------------
// Module

Module::Module(std::string key, const Context& ctx, const std::string& image)
    : key_(std::move(key)), device_(ctx.device()) {
  const DriverApi& cu = driver();
  // Each module holds its context, so a module outliving the Context that loaded it stays
  // valid until it is unloaded.
  TUNE_CU(cu.cuDevicePrimaryCtxRetain(&ctx_, device_));
  try {
    ScopedContext current(ctx_);
    CUresult rc = cu.cuModuleLoadData(&module_, image.c_str());
    if (rc != CUDA_SUCCESS) {
      throw cuda_error(rc, fmt::format("cannot load module '{}' on {} ({}): {}", key_, ctx.name(),
                                       ctx.arch(), cu_error_name(rc)));
    }
  } catch (...) {
    cu.cuDevicePrimaryCtxRelease(device_);
    throw;
  }
}

Module::~Module() {
  const DriverApi& cu = driver();
  if (cu.cuCtxPushCurrent(ctx_) == CUDA_SUCCESS) {
    for (auto& [stream, event] : last_use_) {
      cu.cuEventSynchronize(event);  // quiesce: never unload under a queued launch
      cu.cuEventDestroy(event);
    }
    cu.cuModuleUnload(module_);
    CUcontext popped = nullptr;
    cu.cuCtxPopCurrent(&popped);
  }
  cu.cuDevicePrimaryCtxRelease(device_);
}

Function Module::function(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = functions_.find(name);
  if (it == functions_.end()) {
    CUfunction fn = nullptr;
    CUresult rc = driver().cuModuleGetFunction(&fn, module_, name.c_str());
    if (rc == CUDA_ERROR_NOT_FOUND) {
      throw error(fmt::format("module '{}' has no function '{}'", key_, name));
    }
    TUNE_CU(rc);
    auto state = std::make_unique<detail::FunctionState>();
    state->fn = fn;
    state->name = name;
    state->limits = launch_limits(fn, device_);
    it = functions_.emplace(name, std::move(state)).first;
  }
  return Function(shared_from_this(), it->second.get());
}

Global Module::global(const std::string& name) const {
  Global g;
  CUresult rc = driver().cuModuleGetGlobal(&g.dptr, &g.bytes, module_, name.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) {
    throw error(fmt::format("module '{}' has no global '{}'", key_, name));
  }
  TUNE_CU(rc);
  return g;
}

void Module::track(CUstream stream) {
  const DriverApi& cu = driver();
  std::lock_guard lock(mutex_);
  CUevent& event = last_use_[stream];
  if (!event) {
    // No timing: such an event is only a completion marker, the cheapest kind to record.
    CUresult rc = cu.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
    if (rc != CUDA_SUCCESS) {
      last_use_.erase(stream);
      TUNE_CU(rc);
    }
  }
  // Re-recording moves the marker behind the stream's latest work, so one event per stream
  // covers every launch queued on it so far.
  TUNE_CU(cu.cuEventRecord(event, stream));
}

void Module::quiesce() {
  std::lock_guard lock(mutex_);
  for (auto& [stream, event] : last_use_)
    TUNE_CU(driver().cuEventSynchronize(event));
}

// ---------------------------------------------------------------------------------------------
// Loading and eviction

namespace detail {

std::string read_cache_entry(const std::filesystem::path& dir, const std::string& key,
                             std::string& cubin) {
  // The entry is parsed by the kernel cache's own reader (tuner/core/build/kernel_cache.hpp), so
  // the format has one reader; what is added here is the reason for each kind of miss.
  namespace fs = std::filesystem;
  const KernelCache cache(dir);
  const fs::path entry_path = cache.entry_path(key);
  const fs::path cubin_path = cache.cubin_path(key);
  std::error_code ec;
  if (!fs::exists(entry_path, ec)) return fmt::format("no entry '{}'", entry_path.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(entry_path));
  } catch (const nlohmann::json::exception&) {
    return fmt::format("entry '{}' is not valid JSON", entry_path.string());
  }
  const nlohmann::json schema =
      j.is_object() ? j.value("schema_version", nlohmann::json()) : nlohmann::json();
  if (schema != kernel_cache_schema_version) {
    return fmt::format("entry has schema_version {}, expected {}",
                       schema.is_null() ? "none" : schema.dump(), kernel_cache_schema_version);
  }
  CacheEntry entry;
  try {
    entry = j.get<CacheEntry>();
  } catch (const nlohmann::json::exception& e) {
    return fmt::format("entry '{}' is malformed ({})", entry_path.string(), e.what());
  }
  if (entry.key != key) return fmt::format("entry names key '{}'", entry.key);
  if (!entry.valid()) {
    return fmt::format("the candidate is invalid ({}{}{})", to_string(entry.status),
                       entry.reason.empty() ? "" : ": ", entry.reason);
  }
  if (!fs::exists(cubin_path, ec)) return fmt::format("no cubin '{}'", cubin_path.string());
  cubin = read_file(cubin_path);
  // Hash the very bytes that will be loaded, so a file replaced after the check cannot slip in.
  if (std::string actual = sha256_hex(cubin); actual != entry.cubin_sha256) {
    cubin.clear();
    return fmt::format("cubin SHA-256 is {}, the entry says '{}'", actual, entry.cubin_sha256);
  }
  return {};
}

}  // namespace detail

std::shared_ptr<Module> load_kernel(Context& ctx, const std::filesystem::path& cache_dir,
                                    const std::string& key) {
  return get_or_load(ctx, key, [&] {
    std::string cubin;
    std::string why = detail::read_cache_entry(cache_dir, key, cubin);
    if (!why.empty()) {
      throw error(
          fmt::format("kernel cache miss for '{}' in '{}': {} (run the warm target to "
                      "compile it)",
                      key, cache_dir.string(), why));
    }
    return cubin;
  });
}

std::shared_ptr<Module> load_module(Context& ctx, const std::string& key,
                                    const std::filesystem::path& image) {
  return get_or_load(ctx, key, [&] { return read_file(image); });
}

std::size_t clear_kernel_cache() {
  return evict_where([](std::string_view) { return true; });
}

bool evict_kernel(std::string_view key) {
  return evict_where([&](std::string_view k) { return k == key; }) > 0;
}

std::size_t retain_kernels(const std::function<bool(std::string_view key)>& keep) {
  return evict_where([&](std::string_view k) { return !keep(k); });
}

std::size_t kernel_cache_size() {
  ModuleCache& cache = module_cache();
  std::lock_guard lock(cache.mutex);
  return cache.slots.size();
}

std::size_t kernel_cache_loads() {
  return module_cache().loads.load();
}

// ---------------------------------------------------------------------------------------------
// LaunchScope

namespace detail {

namespace {
thread_local LaunchScope* current_scope = nullptr;
}

LaunchScope::LaunchScope() : outer_(current_scope) {
  current_scope = this;
}

LaunchScope::~LaunchScope() {
  current_scope = outer_;
  try {
    flush();
  } catch (const error&) {
    // A failed record here means the context is already broken; the launches' own errors are
    // what the caller sees.
  }
}

LaunchScope* LaunchScope::current() noexcept {
  return current_scope;
}

void LaunchScope::note(std::shared_ptr<Module> module, CUstream stream) {
  for (const auto& [m, s] : uses_) {
    if (m == module && s == stream) return;
  }
  uses_.emplace_back(std::move(module), stream);
}

void LaunchScope::flush() {
  auto uses = std::move(uses_);
  uses_.clear();
  for (auto& [module, stream] : uses)
    module->track(stream);
}

}  // namespace detail

}  // namespace tune
