// Tunable, deterministic sum of n fp32 values, in two launches from one module:
//   reduce        each block sums one tile of BLOCK * ITEMS * VEC consecutive inputs into one
//                 fp64 partial (partials[blockIdx.x]);
//   reduce_final  one block of BLOCK threads sums the partials and writes the fp32 result.
// Accumulation is in fp64 throughout (cheap next to the memory traffic), and the order of
// additions depends only on the config and n, never on timing: the same inputs always give the
// same bits. Contract, params and pruning: docs/kernels.md.
//
// Launch: reduce with grid ceil(n / (BLOCK * ITEMS * VEC)) blocks of BLOCK threads, then
// reduce_final with 1 block of BLOCK threads over those partials. No dynamic shared memory.
// The caller guarantees a 16-byte aligned `in` and a partials buffer of at least
// ceil(n / (BLOCK * ITEMS * VEC)) doubles; any n >= 1 works (the last tile is guarded).
#ifndef BLOCK
#define BLOCK 256  // threads per block
#endif
#ifndef ITEMS
#define ITEMS 8  // vector loads in flight per thread
#endif
#ifndef VEC
#define VEC 4  // floats per load (1, 2 or 4)
#endif

namespace {

constexpr int kTile = BLOCK * ITEMS * VEC;
constexpr int kWarps = BLOCK / 32;

static_assert(BLOCK >= 32 && BLOCK <= 1024 && BLOCK % 32 == 0,
              "BLOCK must be whole warps, at most 1024 threads");
static_assert(ITEMS >= 1 && ITEMS * VEC <= 64, "at most 64 floats in flight per thread");
static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");

template <int N>
struct Vec;
template <>
struct Vec<1> {
  using type = float;
};
template <>
struct Vec<2> {
  using type = float2;
};
template <>
struct Vec<4> {
  using type = float4;
};
using VecT = Vec<VEC>::type;

// Element e of a vector; `e` is a constant after unrolling, so this is a register, never a
// union or array in local memory.
template <typename V>
__device__ __forceinline__ float& elem(V& v, int e) {
  if constexpr (sizeof(V) == sizeof(float)) {
    return v;
  } else if constexpr (sizeof(V) == sizeof(float2)) {
    return e == 0 ? v.x : v.y;
  } else {
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
  }
}

/// Sums `v` over the block in a fixed order; the result is valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double warp_sums[kWarps];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  const int tid = static_cast<int>(threadIdx.x);
  if (tid % 32 == 0) warp_sums[tid / 32] = v;
  __syncthreads();
  if (tid < 32) {
    v = tid < kWarps ? warp_sums[tid] : 0.0;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

}  // namespace

/// Inputs one `reduce` block consumes: the grid is ceil(n / reduce_tile) blocks, and the
/// partials buffer holds as many doubles (a harness reads it by name).
extern "C" __device__ const int reduce_tile = kTile;
/// Threads per block of both entries.
extern "C" __device__ const int reduce_threads = BLOCK;

/// Phase 1: partials[b] = the sum of in[b * reduce_tile, min(n, (b + 1) * reduce_tile)).
extern "C" __global__ void __launch_bounds__(BLOCK)
    reduce(const float* __restrict__ in, double* __restrict__ partials, long long n) {
  const int tid = static_cast<int>(threadIdx.x);
  const long long base = static_cast<long long>(blockIdx.x) * kTile;
  const VecT* const src = reinterpret_cast<const VecT*>(in + base);

  if (base + kTile <= n) {
    // A whole tile: issue every load before the first add.
    VecT v[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i)
      v[i] = src[i * BLOCK + tid];
    double sum = 0.0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        sum += static_cast<double>(elem(v[i], e));
    }
    sum = block_sum(sum);
    if (tid == 0) partials[blockIdx.x] = sum;
  } else {
    // The last, partial tile: the same element order, guarded element by element.
    double sum = 0.0;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const long long first = base + static_cast<long long>(i * BLOCK + tid) * VEC;
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        if (first + e < n) sum += static_cast<double>(in[first + e]);
      }
    }
    sum = block_sum(sum);
    if (tid == 0) partials[blockIdx.x] = sum;
  }
}

/// Phase 2: *out = the sum of partials[0, count), rounded once to fp32.
extern "C" __global__ void __launch_bounds__(BLOCK)
    reduce_final(const double* __restrict__ partials, float* __restrict__ out, int count) {
  const int tid = static_cast<int>(threadIdx.x);
  double sum = 0.0;
  for (int i = tid; i < count; i += BLOCK)
    sum += partials[i];
  sum = block_sum(sum);
  if (tid == 0) *out = static_cast<float>(sum);
}
