// out[i] = 1 when the point (x[i], y[i]) lies inside the unit circle, else 0: an int output, as a
// point-in-polygon kernel's. The tuned `inside` allows at most 256 threads per block
// (__launch_bounds__), so the candidates with BLOCK 512 and 1024 cannot launch; WRONG=1 leaves
// the last value of every block unwritten. `inside_naive` is the reference, in the same module.
#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef WRONG
#define WRONG 0
#endif

__device__ __forceinline__ int in_circle(float x, float y) {
  return x * x + y * y < 1.0f ? 1 : 0;
}

extern "C" __global__ void __launch_bounds__(256)
    inside(int n, const float* x, const float* y, int* out) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // launched with BLOCK threads
  if (i >= n) return;
#if WRONG
  if (threadIdx.x == BLOCK - 1) return;
#endif
  out[i] = in_circle(x[i], y[i]);
}

extern "C" __global__ void inside_naive(int n, const float* x, const float* y, int* out) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = in_circle(x[i], y[i]);
}
