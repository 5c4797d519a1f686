// Kernels of the timing benchmark (bench/timing): the same cubin is timed by our bench and by
// triton.testing.do_bench through CuPy.

// Compute-bound: `iters` rounds of four independent FMA chains per thread; the memory traffic
// is one store per thread, so the L2's state does not matter. Sized to about 10 us.
extern "C" __global__ void fma_loop(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, 0.9999f, 0.0001f);
    b = fmaf(b, 0.9998f, 0.0002f);
    c = fmaf(c, 0.9997f, 0.0003f);
    d = fmaf(d, 0.9996f, 0.0004f);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}

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
