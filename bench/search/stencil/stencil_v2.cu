// Version 2 of the search benchmark's stencil (stencil.cu), for the re-tune benchmark
// (bench/search/README.md "Re-tunes with a prior"): the same kernel with one load path changed,
// as a small edit to a tuned kernel would. LOAD=ldg reads through __ldcs (the streaming,
// evict-first path) instead of __ldg (the read-only data cache); LOAD=global and LOAD=shared are
// as in version 1. Same space, same harness: a table of version 1 is a prior for version 2.
// nvcc includes the CUDA runtime headers before this file, so the macro changes only the
// stencil's own calls.
#define __ldg __ldcs
#include "stencil.cu"
