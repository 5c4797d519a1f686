// A compute-bound kernel: each element iterates x <- 0.9 sin(x) + c, ITER times (a contraction,
// so float and double stay close). BLOCK threads, ITEMS elements per thread, the loop unrolled
// UNROLL times, ILP independent chains interleaved.
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef ILP
#define ILP 1
#endif
#define ITER 1024
// `#pragma unroll` takes a constant expression, not a macro (nvcc does not expand it there).
constexpr int kUnroll = UNROLL;

extern "C" __global__ void __launch_bounds__(BLOCK)
    compute(int n, const float* in, float* out, float c) {
  const int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x;
  for (int k0 = 0; k0 < ITEMS; k0 += ILP) {
    float x[ILP];
#pragma unroll
    for (int j = 0; j < ILP; ++j) {
      const int i = base + (k0 + j) * BLOCK;
      x[j] = (k0 + j < ITEMS && i < n) ? in[i] : 0.0f;
    }
#pragma unroll kUnroll
    for (int t = 0; t < ITER; ++t)
#pragma unroll
      for (int j = 0; j < ILP; ++j)
        x[j] = 0.9f * sinf(x[j]) + c;
#pragma unroll
    for (int j = 0; j < ILP; ++j) {
      const int i = base + (k0 + j) * BLOCK;
      if (k0 + j < ITEMS && i < n) out[i] = x[j];
    }
  }
}
