// A batched transpose-and-scale of float matrices for the search benchmark's tables
// (bench/search): out[b][c][r] = alpha * in[b][r][c] for a batch of rows x cols inputs. A block
// moves one TY x TX tile of the input (TY rows, TX columns) to a TX x TY tile of the output.
// Knobs, as -D definitions:
//   TX, TY    the tile: input columns and rows one block moves
//   THREADS   threads of a block, walking the tile in a flat loop (any count works)
//   VEC       floats per global load along an input row (1, 2 or 4)
//   WVEC      floats per global store along an output row (1, 2 or 4; staged tiles only)
//   STAGE     direct (no shared memory: coalesced loads, scattered stores), shared (the tile
//             staged in shared memory as it is), padded (its rows one float longer, against
//             bank conflicts on the transposed read), swizzle (each row's columns permuted by
//             an XOR with the row, the same aim without the padding)
//   UNROLL    1: the tile loops fully unrolled; 0: not unrolled
// The caller guarantees rows % TY == 0, cols % TX == 0 and 16-byte aligned buffers.
#ifndef TX
#define TX 32
#define TY 32
#define THREADS 256
#define VEC 1
#define WVEC 1
#define STAGE padded
#define UNROLL 1
#endif

#define TRANSPOSE_STAGE_direct 0
#define TRANSPOSE_STAGE_shared 1
#define TRANSPOSE_STAGE_padded 2
#define TRANSPOSE_STAGE_swizzle 3
#define TRANSPOSE_CAT(a, b) a##b
#define TRANSPOSE_XCAT(a, b) TRANSPOSE_CAT(a, b)
#define STAGE_KIND TRANSPOSE_XCAT(TRANSPOSE_STAGE_, STAGE)

#if UNROLL
#define TRANSPOSE_UNROLL _Pragma("unroll")
#else
#define TRANSPOSE_UNROLL _Pragma("unroll 1")
#endif

static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(WVEC == 1 || WVEC == 2 || WVEC == 4, "WVEC must be 1, 2 or 4");
static_assert(TX % VEC == 0 && TY % WVEC == 0, "a tile is whole vectors");

namespace transpose_detail {

template <int N>
struct Vec;
template <>
struct Vec<1> {
  using type = float;
  __device__ static float get(float v, int) { return v; }
  __device__ static void set(float& v, int, float x) { v = x; }
};
template <>
struct Vec<2> {
  using type = float2;
  __device__ static float get(float2 v, int k) { return k == 0 ? v.x : v.y; }
  __device__ static void set(float2& v, int k, float x) { (k == 0 ? v.x : v.y) = x; }
};
template <>
struct Vec<4> {
  using type = float4;
  __device__ static float get(float4 v, int k) {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
  }
  __device__ static void set(float4& v, int k, float x) {
    (k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w) = x;
  }
};

constexpr int kLoadVectors = TY * (TX / VEC);  // vectors of the input tile
constexpr int kLoadSteps = (kLoadVectors + THREADS - 1) / THREADS;
constexpr int kRow = STAGE_KIND == 2 ? TX + 1 : TX;  // floats between rows of the staged tile

// Where element (r, c) of the input tile lives in shared memory.
__device__ __forceinline__ int slot(int r, int c) {
#if STAGE_KIND == 3
  constexpr int kSwizzle = TX < 32 ? TX : 32;  // the XOR stays within aligned column groups
  return r * kRow + ((c & ~(kSwizzle - 1)) | ((c ^ r) & (kSwizzle - 1)));
#else
  return r * kRow + c;
#endif
}

}  // namespace transpose_detail

using namespace transpose_detail;

extern "C" __global__ void __launch_bounds__(THREADS)
    transpose(const float* __restrict__ in, float* __restrict__ out, int rows, int cols,
              float alpha) {
  using LoadV = typename Vec<VEC>::type;
  const int c0 = blockIdx.x * TX;
  const int r0 = blockIdx.y * TY;
  const long long plane = static_cast<long long>(rows) * cols;
  const float* src = in + blockIdx.z * plane;
  float* dst = out + blockIdx.z * plane;
#if STAGE_KIND == 0
  TRANSPOSE_UNROLL
  for (int s = 0; s < kLoadSteps; ++s) {
    const int e = threadIdx.x + s * THREADS;
    if (kLoadVectors % THREADS == 0 || e < kLoadVectors) {
      const int r = e / (TX / VEC), c = (e % (TX / VEC)) * VEC;
      const LoadV v =
          *reinterpret_cast<const LoadV*>(src + static_cast<long long>(r0 + r) * cols + c0 + c);
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        dst[static_cast<long long>(c0 + c + k) * rows + r0 + r] = alpha * Vec<VEC>::get(v, k);
    }
  }
#else
  using StoreV = typename Vec<WVEC>::type;
  constexpr int kStoreVectors = TX * (TY / WVEC);  // vectors of the output tile
  constexpr int kStoreSteps = (kStoreVectors + THREADS - 1) / THREADS;
  __shared__ float tile[TY * kRow];
  TRANSPOSE_UNROLL
  for (int s = 0; s < kLoadSteps; ++s) {
    const int e = threadIdx.x + s * THREADS;
    if (kLoadVectors % THREADS == 0 || e < kLoadVectors) {
      const int r = e / (TX / VEC), c = (e % (TX / VEC)) * VEC;
      const LoadV v =
          *reinterpret_cast<const LoadV*>(src + static_cast<long long>(r0 + r) * cols + c0 + c);
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        tile[slot(r, c + k)] = Vec<VEC>::get(v, k);
    }
  }
  __syncthreads();
  TRANSPOSE_UNROLL
  for (int s = 0; s < kStoreSteps; ++s) {
    const int e = threadIdx.x + s * THREADS;
    if (kStoreVectors % THREADS == 0 || e < kStoreVectors) {
      // Output row c0 + c holds input column c0 + c; consecutive threads write along it.
      const int c = e / (TY / WVEC), r = (e % (TY / WVEC)) * WVEC;
      StoreV v;
#pragma unroll
      for (int k = 0; k < WVEC; ++k)
        Vec<WVEC>::set(v, k, alpha * tile[slot(r + k, c)]);
      *reinterpret_cast<StoreV*>(dst + static_cast<long long>(c0 + c) * rows + r0 + r) = v;
    }
  }
#endif
}
