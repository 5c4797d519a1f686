// y = 2 x over n floats, BLOCK threads per block, ITEMS elements per thread (strided by the
// block, so that every access is coalesced).
extern "C" __global__ void __launch_bounds__(BLOCK) scale(float* y, const float* x, int n) {
  const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = base + k * BLOCK;
    if (i < n) y[i] = 2.0f * x[i];
  }
}
