// The example tunable kernel of docs/harness.md: out = a * x + y. Two knobs arrive as -D
// defines: BLOCK (threads per block) and ITEMS (elements per thread).
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
    saxpy(int n, float a, const float* x, const float* y, float* out) {
  const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = base + k * BLOCK;
    if (i < n) out[i] = a * x[i] + y[i];
  }
}
