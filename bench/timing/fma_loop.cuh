// The compute-bound kernel of the benchmarks, one source for all of them: the timing benchmark
// (bench/timing/kernels.cu) and the fidelity benchmark (bench/fidelity/kernels.cu) include it.
#pragma once

// `iters` rounds of four independent FMA chains per thread; the memory traffic is one store per
// thread, so the L2's state does not matter. Each benchmark sizes its launch.
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
