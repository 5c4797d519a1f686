// x[i] = i, staged through SHARED_KIB KiB of static shared memory. Two candidates of its space
// are invalid on purpose: BLOCK=64 does not compile (#error), and SHARED_KIB=64 is over the
// 48 KiB of static shared memory a block may declare (ptxas reports it and refuses it).
#if BLOCK < 128
#error "fill needs BLOCK >= 128"
#endif

#define STAGING_FLOATS (SHARED_KIB * 256)

extern "C" __global__ void fill(float* x, int n) {
  __shared__ float staging[STAGING_FLOATS];
  const int i = static_cast<int>(blockIdx.x) * BLOCK + static_cast<int>(threadIdx.x);
  staging[threadIdx.x % STAGING_FLOATS] = static_cast<float>(i);
  __syncthreads();
  if (i < n) x[i] = staging[(threadIdx.x * 7 + static_cast<unsigned>(n)) % STAGING_FLOATS];
}
