// A second kernel: it shares common.cuh with gemm but not tile.cuh.
#include <common.cuh>

extern "C" __global__ void gemv(float* y) { y[threadIdx.x] = scaled(VEC); }
