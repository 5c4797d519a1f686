// Tunable row-wise softmax over fp32: out[r, c] = exp(in[r, c] - max_r) / sum_c exp(in[r, c] -
// max_r), computed in fp32 with the row maximum subtracted first (no overflow for any finite
// input). Contract, params and pruning: docs/kernels.md.
//
// One block handles ROWS_PER_BLOCK consecutive rows; BLOCK / ROWS_PER_BLOCK consecutive
// threads share a row and walk it in VEC-wide vectors, consecutive threads on consecutive
// vectors (coalesced). The row is read from global memory exactly once: each thread keeps its
// own elements in dynamic shared memory between the three sweeps (max, exp and sum, scale)
// and reads back only what it wrote itself, so the sweeps need no barrier between them; only
// the two row reductions (max, then sum) synchronize.
//
// Launch: grid ceil(rows / ROWS_PER_BLOCK), block BLOCK threads, dynamic shared memory
// ROWS_PER_BLOCK * cols * 4 bytes (above 48 KiB the launcher raises the function's limit).
// The caller guarantees cols % VEC == 0, cols >= 1, ROWS_PER_BLOCK * cols * 4 within the
// device's per-block shared memory, and 16-byte aligned `in` and `out`.
#include <cfloat>

#ifndef BLOCK
#define BLOCK 256  // threads per block
#endif
#ifndef ROWS_PER_BLOCK
#define ROWS_PER_BLOCK 1  // rows one block handles
#endif
#ifndef VEC
#define VEC 4  // floats per load and store (1, 2 or 4)
#endif

namespace {

constexpr int kThreadsPerRow = BLOCK / ROWS_PER_BLOCK;
constexpr int kWarpsPerRow = kThreadsPerRow >= 32 ? kThreadsPerRow / 32 : 1;
constexpr int kShuffleWidth = kThreadsPerRow >= 32 ? 32 : kThreadsPerRow;

static_assert(BLOCK >= 32 && BLOCK <= 1024 && BLOCK % 32 == 0,
              "BLOCK must be whole warps, at most 1024 threads");
static_assert(ROWS_PER_BLOCK >= 1 && BLOCK % ROWS_PER_BLOCK == 0,
              "ROWS_PER_BLOCK must divide BLOCK");
static_assert((kThreadsPerRow & (kThreadsPerRow - 1)) == 0,
              "threads per row must be a power of two (shuffle reductions)");
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

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

/// Reduces `v` over the kThreadsPerRow threads of the caller's row and returns the result in
/// every one of them; every thread of the block must call it (it synchronizes when a row spans
/// several warps). `identity` is op's neutral value; `scratch` holds ROWS_PER_BLOCK *
/// kWarpsPerRow floats and is used by this call only. Butterfly shuffles give every lane the same
/// bits (IEEE + and max commute).
template <typename Op>
__device__ float row_reduce(float v, Op op, [[maybe_unused]] float identity, float* scratch) {
#pragma unroll
  for (int offset = kShuffleWidth / 2; offset > 0; offset /= 2) {
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset, kShuffleWidth));
  }
  if constexpr (kWarpsPerRow > 1) {
    // A row is whole warps here: each warp posts its value, then every warp of the row
    // reduces the row's posts, one per lane, with another butterfly.
    const int tid = static_cast<int>(threadIdx.x);
    const int lane = tid % 32;
    const int row = tid / kThreadsPerRow;
    const int warp_in_row = (tid % kThreadsPerRow) / 32;
    if (lane == 0) scratch[row * kWarpsPerRow + warp_in_row] = v;
    __syncthreads();
    v = lane < kWarpsPerRow ? scratch[row * kWarpsPerRow + lane] : identity;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
      v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
    }
  }
  return v;
}

}  // namespace

/// Threads per block the launch needs (a harness reads it by name).
extern "C" __device__ const int softmax_threads = BLOCK;
/// Rows per block: the grid is ceil(rows / softmax_rows_per_block) blocks.
extern "C" __device__ const int softmax_rows_per_block = ROWS_PER_BLOCK;

/// Row-wise softmax of the row-major fp32 matrix in[rows, cols] into out[rows, cols]; see the
/// file comment for the launch shape and what the caller guarantees.
extern "C" __global__ void __launch_bounds__(BLOCK)
    softmax(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  extern __shared__ __align__(16) float row_cache[];
  __shared__ float max_scratch[ROWS_PER_BLOCK * kWarpsPerRow];
  __shared__ float sum_scratch[ROWS_PER_BLOCK * kWarpsPerRow];

  const int tid = static_cast<int>(threadIdx.x);
  const int row_in_block = tid / kThreadsPerRow;
  const int lane_in_row = tid % kThreadsPerRow;
  const long long row = static_cast<long long>(blockIdx.x) * ROWS_PER_BLOCK + row_in_block;
  // Threads of a row past the end still take part in the reductions' barriers; they simply
  // own no vectors.
  const int vecs = row < rows ? cols / VEC : 0;

  const VecT* const src = reinterpret_cast<const VecT*>(in + row * cols);
  VecT* const dst = reinterpret_cast<VecT*>(out + row * cols);
  VecT* const cache =
      reinterpret_cast<VecT*>(row_cache + static_cast<long long>(row_in_block) * cols);

  // Sweep 1: global -> shared, running maximum.
  float local_max = -FLT_MAX;
  for (int i = lane_in_row; i < vecs; i += kThreadsPerRow) {
    VecT v = src[i];
    cache[i] = v;
#pragma unroll
    for (int e = 0; e < VEC; ++e)
      local_max = fmaxf(local_max, elem(v, e));
  }
  const float row_max = row_reduce(local_max, MaxOp{}, -FLT_MAX, max_scratch);

  // Sweep 2: exponentials back into the cache, running sum.
  float local_sum = 0.0f;
  for (int i = lane_in_row; i < vecs; i += kThreadsPerRow) {
    VecT v = cache[i];
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      elem(v, e) = expf(elem(v, e) - row_max);
      local_sum += elem(v, e);
    }
    cache[i] = v;
  }
  const float inv_sum = 1.0f / row_reduce(local_sum, SumOp{}, 0.0f, sum_scratch);

  // Sweep 3: scale and store.
  for (int i = lane_in_row; i < vecs; i += kThreadsPerRow) {
    VecT v = cache[i];
#pragma unroll
    for (int e = 0; e < VEC; ++e)
      elem(v, e) *= inv_sum;
    dst[i] = v;
  }
}
