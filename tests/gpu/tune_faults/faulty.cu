// out[i] = a dependent chain of FMAs over x[i]; the knob VARIANT decides what a candidate does:
//   0, 4, 5  correct, with 4, 1 and 2 passes of the chain (so 4 is the fastest, then 5, then 0,
//            each about twice the time of the one before it)
//   1        also writes one float 16 TiB past `out`: an unmapped address, not a small overrun
//   2        spins forever, waiting for a flag that nobody sets
//   3        traps (__trap)
#ifndef VARIANT
#error "VARIANT must be defined"
#endif

#if VARIANT == 0
#define PASSES 4
#elif VARIANT == 5
#define PASSES 2
#else
#define PASSES 1
#endif

constexpr int chain = 256;  // FMAs per pass

extern "C" __global__ void faulty(int n, const float* x, float* out, const volatile int* flag) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if VARIANT == 2
  while (flag[0] == 0) {
  }
#elif VARIANT == 3
  if (i == 0) __trap();
#elif VARIANT == 1
  if (i == 0) *reinterpret_cast<volatile float*>(reinterpret_cast<char*>(out) + (1ull << 44)) = 1;
#endif
  if (i >= n) return;
  const float v = x[i];
  float acc = 0.0f;
  for (int k = 0; k < PASSES * chain; ++k)
    acc = fmaf(acc, 0.999f, v);
  out[i] = acc;
}
