// out = a * x + y, with three knobs as -D defines: BLOCK (threads per block), ITEMS (elements
// per thread) and SKIP. SKIP=1 is a broken candidate on purpose: it writes only the even
// elements, so it is faster and wrong, and the harness's correctness gate must reject it.
extern "C" __global__ void __launch_bounds__(BLOCK)
    axpy(int n, float a, const float* x, const float* y, float* out) {
  const int base = blockIdx.x * (BLOCK * ITEMS) + threadIdx.x;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int i = base + k * BLOCK;
    if (SKIP && (i & 1)) continue;
    if (i < n) out[i] = a * x[i] + y[i];
  }
}
