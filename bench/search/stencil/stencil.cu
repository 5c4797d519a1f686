// A 2-D five-point Jacobi stencil over an n x n float grid, written to have a large space of
// reasonable configs for the search benchmark (bench/search): out = 0.5 c + 0.125 (w + e + s +
// n) at every interior point. Knobs, as -D definitions:
//   BX, BY   threads of a block in x and y
//   TX, TY   outputs per thread in x and y (a block covers BX*TX x BY*TY outputs)
//   LOAD     global (plain loads), ldg (the read-only path), shared (the tile and its halo
//            staged in shared memory first)
//   UNROLL   1: the TY loop fully unrolled; 0: not unrolled
//   STRIDE   1: a fixed grid strides over the tiles; 0: one block per tile
#ifndef BX
#define BX 32
#define BY 8
#define TX 1
#define TY 1
#define LOAD global
#define UNROLL 1
#define STRIDE 0
#endif

#define STENCIL_LOAD_global 0
#define STENCIL_LOAD_ldg 1
#define STENCIL_LOAD_shared 2
#define STENCIL_CAT(a, b) a##b
#define STENCIL_XCAT(a, b) STENCIL_CAT(a, b)
#define LOAD_KIND STENCIL_XCAT(STENCIL_LOAD_, LOAD)

constexpr int tile_x = BX * TX;
constexpr int tile_y = BY * TY;

__device__ __forceinline__ float load(const float* p) {
#if LOAD_KIND == 1
  return __ldg(p);
#else
  return *p;
#endif
}

// Tiles cover the (n - 2) x (n - 2) interior; tile t starts at interior point (oy, ox).
extern "C" __global__ void __launch_bounds__(BX* BY)
    stencil(const float* __restrict__ in, float* __restrict__ out, int n, int tiles_x, int tiles) {
#if LOAD_KIND == 2
  __shared__ float halo[tile_y + 2][tile_x + 2];
#endif
#if STRIDE
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
#else
  {
    const int t = blockIdx.x;
#endif
    const int ox = (t % tiles_x) * tile_x;
    const int oy = (t / tiles_x) * tile_y;
#if LOAD_KIND == 2
    for (int i = threadIdx.y; i < tile_y + 2; i += BY)
      for (int j = threadIdx.x; j < tile_x + 2; j += BX) {
        const int gy = oy + i, gx = ox + j;
        halo[i][j] = gy < n && gx < n ? in[static_cast<long long>(gy) * n + gx] : 0.0f;
      }
    __syncthreads();
#endif
#if UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
    for (int ty = 0; ty < TY; ++ty) {
#pragma unroll
      for (int tx = 0; tx < TX; ++tx) {
        const int ly = threadIdx.y + ty * BY;
        const int lx = threadIdx.x + tx * BX;
        const int y = oy + 1 + ly, x = ox + 1 + lx;
        if (y < n - 1 && x < n - 1) {
#if LOAD_KIND == 2
          const float c = halo[ly + 1][lx + 1], w = halo[ly + 1][lx], e = halo[ly + 1][lx + 2];
          const float s = halo[ly][lx + 1], nn = halo[ly + 2][lx + 1];
#else
          const long long i = static_cast<long long>(y) * n + x;
          const float c = load(in + i), w = load(in + i - 1), e = load(in + i + 1);
          const float s = load(in + i - n), nn = load(in + i + n);
#endif
          out[static_cast<long long>(y) * n + x] = 0.5f * c + 0.125f * (w + e + s + nn);
        }
      }
    }
#if LOAD_KIND == 2
    __syncthreads();
#endif
  }
}
