// Kernels of the timing benchmark (bench/timing): the same cubin is timed by our bench and by
// triton.testing.do_bench through CuPy.

// Compute-bound: fma_loop, sized by bench_timing.cpp to about 10 us.
#include "fma_loop.cuh"

// Memory-bound: y = a * x over n floats (n a multiple of 4), 16-byte accesses, grid-stride.
// Sized to well over a millisecond.
extern "C" __global__ void scale_copy(float* y, const float* x, float a, long long n) {
  const long long n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
       i += (long long)gridDim.x * blockDim.x) {
    float4 v = x4[i];
    y4[i] = make_float4(a * v.x, a * v.y, a * v.z, a * v.w);
  }
}
