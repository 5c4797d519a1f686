// x[i] *= SCALE_FACTOR, BLOCK threads per block, UNROLL elements per thread.
#include "scale_tile.cuh"

extern "C" __global__ void scale(float* x, int n) {
  const int first = static_cast<int>(blockIdx.x) * BLOCK * UNROLL + static_cast<int>(threadIdx.x);
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const int i = first + u * BLOCK;
    if (i < n) x[i] = scale_tile::apply(x[i]);
  }
}
