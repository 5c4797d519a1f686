// Kernels of the fidelity benchmark (bench/fidelity): the sequential and the paired timing modes
// must measure the same config alike.

// y = 2 x over n floats: each block handles BLOCK * ITEMS consecutive elements, each thread
// ITEMS of them strided by the block size (coalesced), as the streaming kernel of issue 23. The
// block size is the launch's; ITEMS is an entry per value.
template <int Items>
__device__ void scale_body(float* __restrict__ y, const float* __restrict__ x, long long n) {
  const long long base = static_cast<long long>(blockIdx.x) * blockDim.x * Items + threadIdx.x;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const long long i = base + static_cast<long long>(k) * blockDim.x;
    if (i < n) y[i] = 2.0f * x[i];
  }
}

extern "C" __global__ void scale_items1(float* y, const float* x, long long n) {
  scale_body<1>(y, x, n);
}
extern "C" __global__ void scale_items2(float* y, const float* x, long long n) {
  scale_body<2>(y, x, n);
}
extern "C" __global__ void scale_items4(float* y, const float* x, long long n) {
  scale_body<4>(y, x, n);
}

// Compute-bound: the timing benchmark's fma_loop (one source).
#include "../timing/fma_loop.cuh"

// The streaming kernel as a user writes it for tune (bench/fidelity/tune/scale.cu): BLOCK and
// ITEMS compile-time, __launch_bounds__(BLOCK), int indexing; one entry per config.
template <int Block, int Items>
__device__ void scale_fixed_body(float* __restrict__ y, const float* __restrict__ x, int n) {
  const int base = blockIdx.x * (Block * Items) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int i = base + k * Block;
    if (i < n) y[i] = 2.0f * x[i];
  }
}
#define TUNE_SCALE_FIXED(B, I)                                 \
  extern "C" __global__ void __launch_bounds__(B)              \
      scale_fixed_##B##_##I(float* y, const float* x, int n) { \
    scale_fixed_body<B, I>(y, x, n);                           \
  }
TUNE_SCALE_FIXED(128, 2)
TUNE_SCALE_FIXED(128, 4)
TUNE_SCALE_FIXED(256, 2)
TUNE_SCALE_FIXED(256, 4)
TUNE_SCALE_FIXED(512, 4)
