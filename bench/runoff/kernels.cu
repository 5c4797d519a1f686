// The runoff benchmark's kernel: a chain of dependent FMAs per thread, compute-bound, with a gap
// built in at compile time: EXTRA percent more iterations (EXTRA=0 is the base). The result is
// stored so that the work is not optimised away.
#ifndef EXTRA
#define EXTRA 0
#endif

extern "C" __global__ void fma_chain(float* out, int iters) {
  const int work = iters + iters * EXTRA / 100;
  float a = 1.0f + threadIdx.x * 1e-7f, b = 0.999f;
  for (int i = 0; i < work; ++i) {
    a = fmaf(a, b, 1e-6f);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
