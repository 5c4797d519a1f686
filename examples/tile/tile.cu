// A templated tiled matrix product, tuned over its template arguments (docs/embed.md): the tile
// (BM x BN outputs per block, BK deep per step) and the layout of B's tile in shared memory.
// There is no extern "C" entry: tune instantiates tile_gemm<...> per candidate.
//
// C = A x B, fp32, row-major: A is M x K, B is K x N, C is M x N (overwritten). One thread per
// element of C: the block is BN x BM threads (blockDim.x = BN, blockDim.y = BM), the grid
// ceil(N / BN) x ceil(M / BM). Any M, N, K (edges are guarded).
#pragma once

/// How a block keeps its tile of B in shared memory: as B is (row), or transposed (col, padded
/// by one to keep the transposed reads free of bank conflicts). Same result, other speed.
enum class Layout { Row, Col };

template <int BM, int BN, int BK, Layout L>
__global__ void __launch_bounds__(BM* BN)
    tile_gemm(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[BM][BK];
  __shared__ float Bs[L == Layout::Row ? BK : BN][L == Layout::Row ? BN : BK + 1];
  const int tx = threadIdx.x;  // column inside the tile
  const int ty = threadIdx.y;  // row inside the tile
  const int tid = ty * BN + tx;
  const int row = blockIdx.y * BM + ty;
  const int col = blockIdx.x * BN + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += BM * BN) {
      const int r = blockIdx.y * BM + i / BK;
      const int k = k0 + i % BK;
      As[i / BK][i % BK] = (r < M && k < K) ? A[static_cast<long long>(r) * K + k] : 0.0f;
    }
    for (int i = tid; i < BK * BN; i += BM * BN) {
      const int k = k0 + i / BN;
      const int c = blockIdx.x * BN + i % BN;
      const float v = (k < K && c < N) ? B[static_cast<long long>(k) * N + c] : 0.0f;
      if constexpr (L == Layout::Row)
        Bs[i / BN][i % BN] = v;
      else
        Bs[i % BN][i / BN] = v;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      if constexpr (L == Layout::Row)
        acc += As[ty][k] * Bs[k][tx];
      else
        acc += As[ty][k] * Bs[tx][k];
    }
    __syncthreads();
  }
  if (row < M && col < N) C[static_cast<long long>(row) * N + col] = acc;
}
