// out[i] = 2 x[i] + 1, BLOCK threads of ITEMS steps of VEC floats each; ORDER 0 gives each thread
// a run of ITEMS vectors, ORDER 1 gives each step of the block consecutive vectors (coalesced).
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef ORDER
#define ORDER 1
#endif

extern "C" __global__ void __launch_bounds__(BLOCK) sweep(long long n, const float* x, float* out) {
  const long long base = static_cast<long long>(blockIdx.x) * BLOCK * ITEMS * VEC;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = ORDER == 0 ? base + (static_cast<long long>(threadIdx.x) * ITEMS + k) * VEC
                                   : base + (static_cast<long long>(k) * BLOCK + threadIdx.x) * VEC;
#pragma unroll
    for (int v = 0; v < VEC; ++v)
      if (i + v < n) out[i + v] = 2.0f * x[i + v] + 1.0f;
  }
}
