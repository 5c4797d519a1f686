// A histogram of 32-bit keys for the search benchmark's tables (bench/search): out[k & mask]
// counts the keys k, over a grid that strides through the keys. Knobs, as -D definitions:
//   THREADS   threads of a block
//   ITEMS     vector loads a thread issues before it counts them (loads in flight)
//   VEC       keys per load (1, 2 or 4)
//   BPSM      blocks per multiprocessor of the grid (the harness sizes the grid with it), and
//             the blocks per multiprocessor __launch_bounds__ asks registers for (at most the
//             2048 threads a multiprocessor holds)
//   PRIV      where the counting atomics go: global (straight into out), block (one histogram
//             per block in shared memory), warp (one per warp in shared memory)
//   MERGE     how a private histogram reaches out: atomic (each block adds its nonzero bins
//             with atomics; out is zeroed first) or partial (each block writes its row of a
//             grid x bins scratch, which histogram_merge sums into out)
//   AGG       none (one atomic per key) or match (the lanes of a warp holding the same bin
//             find one another with __match_any_sync and one of them adds their count)
// Entries: histogram (the counting), histogram_zero (out = 0, blocks of 256 threads) and
// histogram_merge (out = the column sums of the scratch, blocks of 256 threads, 32 bins each). The
// caller guarantees n % VEC == 0, 16-byte aligned keys and THREADS / 32 * bins * 4 bytes of dynamic
// shared memory for a warp-private histogram (bins * 4 for a block-private one).
#ifndef THREADS
#define THREADS 256
#define ITEMS 4
#define VEC 4
#define BPSM 4
#define PRIV block
#define MERGE atomic
#define AGG none
#endif

#define HISTOGRAM_PRIV_global 0
#define HISTOGRAM_PRIV_block 1
#define HISTOGRAM_PRIV_warp 2
#define HISTOGRAM_MERGE_atomic 0
#define HISTOGRAM_MERGE_partial 1
#define HISTOGRAM_AGG_none 0
#define HISTOGRAM_AGG_match 1
#define HISTOGRAM_CAT(a, b) a##b
#define HISTOGRAM_XCAT(a, b) HISTOGRAM_CAT(a, b)
#define PRIV_KIND HISTOGRAM_XCAT(HISTOGRAM_PRIV_, PRIV)
#define MERGE_KIND HISTOGRAM_XCAT(HISTOGRAM_MERGE_, MERGE)
#define AGG_KIND HISTOGRAM_XCAT(HISTOGRAM_AGG_, AGG)

static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC must be 1, 2 or 4");
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS must be whole warps");

// The resident blocks the register allocation is bounded for: BPSM, as far as they fit.
#define HISTOGRAM_MIN_BLOCKS (BPSM < 2048 / THREADS ? BPSM : 2048 / THREADS)

namespace histogram_detail {

template <int N>
struct Vec;
template <>
struct Vec<1> {
  using type = unsigned;
  __device__ static unsigned get(unsigned v, int) { return v; }
};
template <>
struct Vec<2> {
  using type = uint2;
  __device__ static unsigned get(uint2 v, int k) { return k == 0 ? v.x : v.y; }
};
template <>
struct Vec<4> {
  using type = uint4;
  __device__ static unsigned get(uint4 v, int k) {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
  }
};

// Counts one key of bin `bin` into `hist`; every lane of the warp that calls it together.
__device__ __forceinline__ void count(unsigned* hist, unsigned bin) {
#if AGG_KIND == 1
  const unsigned peers = __match_any_sync(__activemask(), bin);
  if ((threadIdx.x & 31) == static_cast<unsigned>(__ffs(peers) - 1))
    atomicAdd(hist + bin, static_cast<unsigned>(__popc(peers)));
#else
  atomicAdd(hist + bin, 1u);
#endif
}

}  // namespace histogram_detail

using namespace histogram_detail;

extern "C" __global__ void __launch_bounds__(THREADS, HISTOGRAM_MIN_BLOCKS)
    histogram(const unsigned* __restrict__ keys, long long n, unsigned mask,
              unsigned* __restrict__ out, unsigned* __restrict__ partial) {
  using V = typename Vec<VEC>::type;
#if PRIV_KIND == 0
  unsigned* hist = out;
#else
  const unsigned bins = mask + 1;
  extern __shared__ unsigned shared_hist[];
  constexpr unsigned kCopies = PRIV_KIND == 2 ? THREADS / 32 : 1;
  for (unsigned i = threadIdx.x; i < kCopies * bins; i += THREADS)
    shared_hist[i] = 0;
  __syncthreads();
  unsigned* hist = shared_hist + (PRIV_KIND == 2 ? threadIdx.x / 32 * bins : 0);
#endif
  const V* vkeys = reinterpret_cast<const V*>(keys);
  const long long vectors = n / VEC;
  const long long step = static_cast<long long>(gridDim.x) * THREADS * ITEMS;
  for (long long base = static_cast<long long>(blockIdx.x) * THREADS * ITEMS + threadIdx.x;
       base < vectors; base += step) {
    V v[ITEMS];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
      const long long j = base + static_cast<long long>(it) * THREADS;
      if (j < vectors) v[it] = vkeys[j];
    }
#pragma unroll
    for (int it = 0; it < ITEMS; ++it)
      if (base + static_cast<long long>(it) * THREADS < vectors) {
#pragma unroll
        for (int k = 0; k < VEC; ++k)
          count(hist, Vec<VEC>::get(v[it], k) & mask);
      }
  }
#if PRIV_KIND != 0
  __syncthreads();
  for (unsigned i = threadIdx.x; i < bins; i += THREADS) {
    unsigned sum = 0;
#pragma unroll 1
    for (unsigned c = 0; c < kCopies; ++c)
      sum += shared_hist[c * bins + i];
#if MERGE_KIND == 1
    partial[static_cast<long long>(blockIdx.x) * bins + i] = sum;
#else
    if (sum != 0) atomicAdd(out + i, sum);
#endif
  }
#endif
}

extern "C" __global__ void histogram_zero(unsigned* __restrict__ out, unsigned bins) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < bins) out[i] = 0;
}

// out[bin] = the sum of the scratch's column `bin` over the grid's rows: a block of 256 threads
// sums 32 bins, 8 warps each summing every 8th row, then adds the 8 sums.
extern "C" __global__ void __launch_bounds__(256)
    histogram_merge(const unsigned* __restrict__ partial, unsigned blocks, unsigned bins,
                    unsigned* __restrict__ out) {
  __shared__ unsigned sums[8][32];
  const unsigned lane = threadIdx.x % 32, slice = threadIdx.x / 32;
  const unsigned bin = blockIdx.x * 32 + lane;
  unsigned sum = 0;
  if (bin < bins) {
#pragma unroll 4
    for (unsigned b = slice; b < blocks; b += 8)
      sum += partial[static_cast<long long>(b) * bins + bin];
  }
  sums[slice][lane] = sum;
  __syncthreads();
  if (slice == 0 && bin < bins) {
    unsigned total = 0;
#pragma unroll
    for (unsigned s = 0; s < 8; ++s)
      total += sums[s][lane];
    out[bin] = total;
  }
}
