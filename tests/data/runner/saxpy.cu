// The kernel source the runner tests hash (it is never compiled: the tests write the cache).
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
