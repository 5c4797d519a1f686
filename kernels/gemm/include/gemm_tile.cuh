// Building blocks of the tiled bf16 GEMM (kernels/gemm/gemm.cu): asynchronous global-to-shared
// copies (cp.async), shared-to-register matrix loads (ldmatrix) and the tensor-core product
// (mma.sync m16n8k16, bf16 operands, fp32 accumulators), plus the tile loaders that move one
// pipeline stage. Everything here is device code for sm_80 and newer; the kernel is built for
// sm_90.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with g = lane / 4 and
// t = lane % 4:
//   A (16x16, row-major)  a0: (g,   2t..2t+1)  a1: (g+8, 2t..2t+1)
//                         a2: (g, 2t+8..2t+9)  a3: (g+8, 2t+8..2t+9)
//   B (16x8, k by n)      b0: (k 2t..2t+1, n g)  b1: (k 2t+8..2t+9, n g)
//   C (16x8, fp32)        c0,c1: (g, 2t..2t+1)   c2,c3: (g+8, 2t..2t+1)
// `ldmatrix.x4` loads four 8x8 b16 matrices whose row addresses come from lanes 0-7, 8-15,
// 16-23 and 24-31; lane l receives row l/4, columns 2(l%4)..+1 of each (with `.trans`, column
// l/4, rows 2(l%4)..+1), which is exactly the A fragment above for a row-major A tile and the
// B fragment for a k-major (row-major [K,N]) B tile.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace gemm_tile {

/// Bytes of one cp.async transfer, and bf16 elements in it.
constexpr int kCopyBytes = 16;
constexpr int kCopyElems = kCopyBytes / 2;
/// Row padding of the shared-memory tiles, in bf16 elements (16 bytes). With power-of-two tile
/// widths the padded row pitch is an odd multiple of 16 bytes, so the eight 16-byte rows one
/// ldmatrix phase reads fall into eight different bank groups: no bank conflicts.
constexpr int kPad = 8;

/// The shared-memory (state space) address of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// Starts a 16-byte asynchronous copy global -> shared, cached in L2 only (.cg).
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem_dst)),
               "l"(gmem_src)
               : "memory");
}

/// Closes the current group of cp.async copies.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most `Pending` committed groups of this thread are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

/// Loads four 8x8 b16 matrices from shared memory (see the layout note above).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row))
               : "memory");
}

/// As ldmatrix_x4, each matrix transposed on the way into registers.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row))
               : "memory");
}

/// c += a * b on the tensor cores: a 16x16 bf16 A fragment, a 16x8 bf16 B fragment and a 16x8
/// fp32 accumulator fragment, as laid out above.
__device__ __forceinline__ void mma_bf16_16816(float (&c)[4], const std::uint32_t (&a)[4],
                                               const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// Copies a Rows x Cols bf16 tile of a row-major matrix (row pitch `ld` elements, starting at
/// `src`) into shared memory with row pitch Cols + kPad, asynchronously, spread over Threads
/// threads in 16-byte pieces. Consecutive threads take consecutive pieces of a row, so the
/// global reads coalesce. Cols must be a multiple of 8 and `src`, `ld` 16-byte compatible.
template <int Rows, int Cols, int Threads>
__device__ __forceinline__ void load_tile_async(__nv_bfloat16* dst, const __nv_bfloat16* src,
                                                int ld, int tid) {
  static_assert(Cols % kCopyElems == 0, "tile rows must be whole 16-byte pieces");
  constexpr int kPiecesPerRow = Cols / kCopyElems;
  constexpr int kPieces = Rows * kPiecesPerRow;
  constexpr int kPitch = Cols + kPad;
#pragma unroll
  for (int i = 0; i < (kPieces + Threads - 1) / Threads; ++i) {
    const int piece = i * Threads + tid;
    if (kPieces % Threads == 0 || piece < kPieces) {
      const int row = piece / kPiecesPerRow;
      const int col = (piece % kPiecesPerRow) * kCopyElems;
      cp_async_16(dst + row * kPitch + col, src + static_cast<long long>(row) * ld + col);
    }
  }
}

}  // namespace gemm_tile
