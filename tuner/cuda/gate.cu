// The device gate's kernels (docs/harness.md "The gate on the device"): tune_check_close on
// device buffers compares the output with the reference where they are, and only a few numbers
// come back. Built once, at tune_cuda's build time, to PTX for the oldest architecture nvcc
// supports, embedded in tune_cuda and loaded once per context through the driver API
// (tuner/cuda/gate.cpp); nothing here is a candidate's code.
//
// Values are read as double whatever their type (kind 0: float, 1: double), so that the sums
// are those of the host check: sum((out - ref)^2), sum(ref^2), the first non-finite output.
// On a failure two more passes find the largest difference (the first index holding it) and
// count the values off by more than the tolerance of their scale, with the first of them.
//
// Integer values (tune::check_equal) are compared exactly, as unsigned words of their width (1,
// 2, 4 or 8 bytes): one pass counts the differences and finds the first; on a failure a short
// pass per further index listed finds the next one after it.

namespace {

__device__ __forceinline__ double load(const void* p, int kind, unsigned long long i) {
  return kind == 1 ? static_cast<const double*>(p)[i]
                   : static_cast<double>(static_cast<const float*>(p)[i]);
}

__device__ __forceinline__ double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The block's sum of `v` (blockDim.x a multiple of 32, at most 1024), valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double partial[32];
  const unsigned lane = threadIdx.x % 32;
  const unsigned warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0;
  if (warp == 0) v = warp_sum(v);
  __syncthreads();
  return v;
}

}  // namespace

// sums[0] += sum((out - ref)^2) and sums[1] += sum(ref^2) over finite outputs; counts[0] =
// min(counts[0], index of a non-finite output), counts[1] += how many there are.
extern "C" __global__ void tune_gate_norms(const void* out, int out_kind, const void* ref,
                                           int ref_kind, unsigned long long n, double* sums,
                                           unsigned long long* counts) {
  double diff2 = 0, ref2 = 0;
  unsigned long long bad = 0;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    const double o = load(out, out_kind, i);
    const double r = load(ref, ref_kind, i);
    if (!isfinite(o)) {
      ++bad;
      atomicMin(&counts[0], i);
      continue;
    }
    diff2 += (o - r) * (o - r);
    ref2 += r * r;
  }
  diff2 = block_sum(diff2);
  ref2 = block_sum(ref2);
  const double nonfinite = block_sum(static_cast<double>(bad));
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], diff2);
    atomicAdd(&sums[1], ref2);
    if (nonfinite > 0) atomicAdd(&counts[1], static_cast<unsigned long long>(nonfinite));
  }
}

// After a failure: counts[2] += values off by more than `tolerance * max(|ref|, scale)` (or not
// finite), counts[3] = min index of one; worst[0] = max |out - ref| over finite outputs, as the
// bits of a non-negative double (which order as integers).
extern "C" __global__ void tune_gate_mismatches(const void* out, int out_kind, const void* ref,
                                                int ref_kind, unsigned long long n,
                                                double tolerance, double scale,
                                                unsigned long long* counts,
                                                unsigned long long* worst) {
  double off = 0;
  double largest = 0;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    const double o = load(out, out_kind, i);
    const double r = load(ref, ref_kind, i);
    const double d = fabs(o - r);
    if (isfinite(o) && !isnan(d) && d > largest) largest = d;
    if (!isfinite(o) || d > tolerance * fmax(fabs(r), scale)) {
      off += 1;
      atomicMin(&counts[3], i);
    }
  }
  off = block_sum(off);
  if (threadIdx.x == 0 && off > 0) atomicAdd(&counts[2], static_cast<unsigned long long>(off));
  if (largest > 0)
    atomicMax(&worst[0], static_cast<unsigned long long>(__double_as_longlong(largest)));
}

// counts[4] = the first index whose finite output is `worst` away from the reference.
extern "C" __global__ void tune_gate_find(const void* out, int out_kind, const void* ref,
                                          int ref_kind, unsigned long long n, double worst,
                                          unsigned long long* counts) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    const double o = load(out, out_kind, i);
    if (isfinite(o) && fabs(o - load(ref, ref_kind, i)) == worst) {
      atomicMin(&counts[4], i);
      return;
    }
  }
}

namespace {

template <class U>
__device__ __forceinline__ bool differs_as(const void* out, const void* ref, unsigned long long i) {
  return static_cast<const U*>(out)[i] != static_cast<const U*>(ref)[i];
}

__device__ __forceinline__ bool differs(const void* out, const void* ref, int width,
                                        unsigned long long i) {
  switch (width) {
    case 1:
      return differs_as<unsigned char>(out, ref, i);
    case 2:
      return differs_as<unsigned short>(out, ref, i);
    case 4:
      return differs_as<unsigned int>(out, ref, i);
    default:
      return differs_as<unsigned long long>(out, ref, i);
  }
}

}  // namespace

// counts[2] += values of `out` that differ from `ref` (words of `width` bytes); counts[3] =
// min(counts[3], the index of one).
extern "C" __global__ void tune_gate_equal(const void* out, const void* ref, int width,
                                           unsigned long long n, unsigned long long* counts) {
  double off = 0;
  unsigned long long first = ~0ull;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    if (differs(out, ref, width, i)) {
      off += 1;
      if (i < first) first = i;
    }
  }
  off = block_sum(off);
  if (threadIdx.x == 0 && off > 0) atomicAdd(&counts[2], static_cast<unsigned long long>(off));
  if (first != ~0ull) atomicMin(&counts[3], first);
}

// counts[3] = min(counts[3], the first index at or after `from` whose values differ).
extern "C" __global__ void tune_gate_next_difference(const void* out, const void* ref, int width,
                                                     unsigned long long n, unsigned long long from,
                                                     unsigned long long* counts) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           from + blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    if (differs(out, ref, width, i)) {
      atomicMin(&counts[3], i);  // this thread's later indices are larger
      return;
    }
  }
}
