// Tunable bf16 GEMM on the tensor cores: C[M,N] (fp32) = A[M,K] (bf16, row-major) x
// B[K,N] (bf16, row-major), fp32 accumulation. Contract, params and pruning: docs/kernels.md.
//
// One block computes a BM x BN tile of C, looping over K in steps of BK. The A and B tiles of
// STAGES consecutive steps live in dynamic shared memory and arrive by cp.async, STAGES - 1
// steps ahead of the math. The block's warps form a (BM/WM) x (BN/WN) grid; each warp owns a
// WM x WN sub-tile held as (WM/16) x (WN/8) mma.sync m16n8k16 accumulator fragments.
//
// Launch: grid (N/BN, M/BM), block (BM/WM)*(BN/WN)*32 threads, dynamic shared memory
// gemm_smem_bytes (exported below) = STAGES*(BM*(BK+8) + BK*(BN+8))*2 bytes; above 48 KiB the
// launcher must raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first. The caller
// guarantees M % BM == 0, N % BN == 0, K % BK == 0 and 16-byte aligned A, B and C.
#include <cuda_bf16.h>

#include <cstdint>

#include "gemm_tile.cuh"

#ifndef BM
#define BM 64  // block tile rows (of C and A)
#endif
#ifndef BN
#define BN 128  // block tile columns (of C and B)
#endif
#ifndef BK
#define BK 32  // K step per pipeline stage
#endif
#ifndef WM
#define WM 32  // warp tile rows
#endif
#ifndef WN
#define WN 64  // warp tile columns
#endif
#ifndef STAGES
#define STAGES 3  // shared-memory pipeline depth
#endif

namespace {

constexpr int kWarpsM = BM / WM;
constexpr int kWarpsN = BN / WN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kFragsM = WM / 16;  // m16 fragments per warp
constexpr int kFragsN = WN / 8;   // n8 fragments per warp
constexpr int kPitchA = BK + gemm_tile::kPad;
constexpr int kPitchB = BN + gemm_tile::kPad;
constexpr int kStageA = BM * kPitchA;  // elements of one A stage
constexpr int kStageB = BK * kPitchB;  // elements of one B stage
constexpr int kSmemBytes = STAGES * (kStageA + kStageB) * 2;

static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
static_assert(WM % 16 == 0, "WM must be a multiple of the 16-row mma fragment");
static_assert(WN % 16 == 0, "WN must be a multiple of 16 (B fragments load in pairs of n8)");
static_assert(BK % 16 == 0, "BK must be a multiple of the mma's k of 16");
static_assert(STAGES >= 2, "the cp.async pipeline needs at least two stages");
static_assert(kThreads >= 32 && kThreads <= 1024, "a block holds 1 to 32 warps");
static_assert(WM * WN / 32 <= 128, "at most 128 fp32 accumulators per thread (registers)");
static_assert(kSmemBytes <= 227 * 1024, "the pipeline must fit sm_90's 227 KiB per block");

}  // namespace

/// Dynamic shared memory the launch needs, in bytes (a harness reads it by name).
extern "C" __device__ const int gemm_smem_bytes = kSmemBytes;
/// Threads per block the launch needs.
extern "C" __device__ const int gemm_threads = kThreads;

/// C = A x B for row-major bf16 A[M,K], B[K,N] and fp32 C[M,N]; see the file comment for the
/// launch shape and what the caller guarantees.
extern "C" __global__ void __launch_bounds__(kThreads)
    gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
         float* __restrict__ C, int M, int N, int K) {
  (void)M;  // the grid covers M exactly (M % BM == 0)
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __nv_bfloat16* const smem_a = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* const smem_b = smem_a + STAGES * kStageA;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int warp_m = warp / kWarpsN;
  const int warp_n = warp % kWarpsN;
  const int block_m = static_cast<int>(blockIdx.y) * BM;
  const int block_n = static_cast<int>(blockIdx.x) * BN;

  const int k_tiles = K / BK;
  // The next K step's tiles in global memory, advanced by one step per load.
  const __nv_bfloat16* a_next = A + static_cast<long long>(block_m) * K;
  const __nv_bfloat16* b_next = B + block_n;
  const long long b_step = static_cast<long long>(BK) * N;

  // Issues the copies of K step `kt` (the next one not yet loaded) into its stage; always
  // commits a group (possibly empty) so that group counting in the main loop stays uniform.
  auto load_stage = [&](int kt) {
    if (kt < k_tiles) {
      const int stage = kt % STAGES;
      gemm_tile::load_tile_async<BM, BK, kThreads>(smem_a + stage * kStageA, a_next, K, tid);
      gemm_tile::load_tile_async<BK, BN, kThreads>(smem_b + stage * kStageB, b_next, N, tid);
      a_next += BK;
      b_next += b_step;
    }
    gemm_tile::cp_async_commit();
  };

  float acc[kFragsM][kFragsN][4];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[i][j][r] = 0.0f;
    }
  }

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s)
    load_stage(s);

  // Lane-dependent parts of the ldmatrix row addresses (see gemm_tile.cuh): lanes 0-15 point
  // at rows 0-15 of the fragment, lanes 16-31 at the same rows 8 columns further on.
  const int ld_row = lane % 16;
  const int ld_col = (lane / 16) * 8;
  const int a_row0 = warp_m * WM + ld_row;
  const int b_col0 = warp_n * WN + ld_col;

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Step kt's group is complete once at most STAGES - 2 younger groups are pending; the
    // barrier publishes every thread's copies and ends all reads of the stage refilled next
    // (the one computed in step kt - 1).
    gemm_tile::cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_stage(kt + STAGES - 1);

    const int stage = kt % STAGES;
    const __nv_bfloat16* const a_stage = smem_a + stage * kStageA;
    const __nv_bfloat16* const b_stage = smem_b + stage * kStageB;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      std::uint32_t a_frag[kFragsM][4];
      std::uint32_t b_frag[kFragsN][2];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
        gemm_tile::ldmatrix_x4(a_frag[i], a_stage + (a_row0 + i * 16) * kPitchA + kk + ld_col);
      }
#pragma unroll
      for (int j = 0; j < kFragsN / 2; ++j) {
        std::uint32_t r[4];
        gemm_tile::ldmatrix_x4_trans(r, b_stage + (kk + ld_row) * kPitchB + b_col0 + j * 16);
        b_frag[2 * j][0] = r[0];
        b_frag[2 * j][1] = r[1];
        b_frag[2 * j + 1][0] = r[2];
        b_frag[2 * j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j)
          gemm_tile::mma_bf16_16816(acc[i][j], a_frag[i], b_frag[j]);
      }
    }
  }
  gemm_tile::cp_async_wait<0>();

  // Epilogue: each lane holds two adjacent columns of rows g and g + 8 of every fragment.
  const int g = lane / 4;
  const int t = lane % 4;
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
    const int row = block_m + warp_m * WM + i * 16 + g;
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      const int col = block_n + warp_n * WN + j * 8 + 2 * t;
      float* const c0 = C + static_cast<long long>(row) * N + col;
      float* const c1 = c0 + 8LL * N;
      *reinterpret_cast<float2*>(c0) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(c1) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
  }
}
