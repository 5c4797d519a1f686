// Dispatches the shapes given on the command line (`<sm> <N> <MODE>` triples) through the
// generated header and prints, for each, the bucket and the winning config it gets.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "scale_winners.hpp"

namespace w = tune_winners::scale;

// select() is constexpr: the buckets' predicates hold at compile time too.
static_assert(w::select(w::Shape{.N = 4096, .MODE = "fast"}) == w::Bucket::small);
static_assert(w::select(w::Shape{.N = 65536, .MODE = "fast"}) == w::Bucket::even);
static_assert(!w::select(w::Shape{.N = 65537, .MODE = "fast"}).has_value());
// arch_for_sm: its own arch, else the highest of its major below it, else nothing.
static_assert(w::arch_for_sm(80) == w::Arch::sm_80);
static_assert(w::arch_for_sm(86) == w::Arch::sm_80);
static_assert(w::arch_for_sm(89) == w::Arch::sm_80);
static_assert(w::arch_for_sm(90) == w::Arch::sm_90);
static_assert(!w::arch_for_sm(75).has_value());
static_assert(!w::arch_for_sm(100).has_value());

int main(int argc, char** argv) {
  for (int i = 1; i + 2 < argc; i += 3) {
    const int sm = std::atoi(argv[i]);
    const w::Shape shape{.N = std::atoll(argv[i + 1]), .MODE = argv[i + 2]};
    const auto bucket = w::select(shape);
    if (!bucket) {
      std::printf("sm %d N=%lld MODE=%s: no bucket takes this shape\n", sm,
                  static_cast<long long>(shape.N), argv[i + 2]);
      continue;
    }
    const bool tuned = w::dispatch(sm, *bucket, [&](auto winner) {
      using W = decltype(winner);
      std::printf("sm %d N=%lld MODE=%s: %s: BLOCK=%d UNROLL=%d (%s; %s)\n", sm,
                  static_cast<long long>(shape.N), argv[i + 2], w::name(*bucket).data(), W::BLOCK,
                  W::UNROLL, W::tune_id, W::tune_origin);
    });
    if (!tuned) std::printf("sm %d: not tuned for this architecture\n", sm);
  }
  return 0;
}
