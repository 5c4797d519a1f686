// Kernels of the GPU tests (tests/gpu/cuda_gpu_test.cpp), compiled to a cubin at build time.
#include <cstdint>

// Per module: each loaded copy of this cubin has its own `scale` and `launches`.
__constant__ float scale;
__device__ int launches;

// y[i] = a * x[i]: a memory-bound kernel of a realistic length for timing.
extern "C" __global__ void scale_vector(float* y, const float* x, float a, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    y[i] = a * x[i];
  }
}

// A kernel of a few microseconds: one block, one store per thread.
extern "C" __global__ void tiny(int* out) {
  out[threadIdx.x] = (int)threadIdx.x + 1;
}

// out[i] = scale * i, reading the module's own __constant__, and counting launches in the
// module's own __device__ variable.
extern "C" __global__ void constant_scale(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scale * (float)i;
  if (i == 0) atomicAdd(&launches, 1);
}

// Busy for `ns` nanoseconds of the global timer, then writes `value`: a launch that stays
// queued long enough to evict its module under it.
extern "C" __global__ void spin_then_write(int* out, unsigned long long ns, int value) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  *out = value;
}

// Reverses `n` floats through dynamic shared memory (n * 4 bytes of it: over 48 KiB in the
// test, which needs the opt-in attribute).
extern "C" __global__ void reverse_in_shared(float* out, const float* in, int n) {
  extern __shared__ float buffer[];
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    buffer[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[i] = buffer[n - 1 - i];
}
