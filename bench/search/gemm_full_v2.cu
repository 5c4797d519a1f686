// Version 2 of the search benchmark's gemm_full (kernels/gemm/gemm.cu), for the re-tune
// benchmark (bench/search/README.md "Re-tunes with a prior"): the same kernel with its STAGES
// scheme changed, as a conservative fix of a suspected pipeline race would change it. Each K
// step waits for every cp.async copy in flight (cp.async.wait_all) instead of all but the
// STAGES - 2 youngest groups, so only the one stage issued during the previous step's math
// hides load latency: STAGES = 3 and 4 keep their shared memory (and its cost in occupancy) but
// lose their deeper prefetch. The tiles' ranking stays; the stage counts' does not. Same space,
// same harness and the same result: a table of version 1 is a prior for version 2.
//
// gemm_tile.cuh is read first (it is `#pragma once`, so gemm.cu's include of it is empty), and
// the macro then renames only gemm.cu's own calls of cp_async_wait<N>.
#include "gemm_tile.cuh"

namespace gemm_tile {

/// Waits until none of this thread's committed cp.async groups is in flight, whatever
/// `Pending` asks.
template <int Pending>
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

}  // namespace gemm_tile

#define cp_async_wait cp_async_wait_all
#include "../../kernels/gemm/gemm.cu"
