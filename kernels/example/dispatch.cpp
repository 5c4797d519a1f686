// How production code uses the committed winners: the headers that tune_generate_header makes
// from records/*.json map a runtime shape to its bucket (the space's `when` predicates) and
// give the winning config of the GPU's architecture as constexpr values, ready to become
// template arguments or launch parameters. This program prints the choice for a few shapes and
// checks that each lands in the bucket the space says.
#include <cstdio>
#include <string_view>

#include "gemm_winners.hpp"
#include "reduce_winners.hpp"
#include "softmax_winners.hpp"

namespace {

int failures = 0;

void expect(std::string_view kernel, std::string_view shape, std::string_view got,
            std::string_view want) {
  std::printf("%-8s %-22s -> %-12s", kernel.data(), shape.data(), got.data());
  if (got != want) {
    std::printf("  WRONG: expected bucket '%s'", want.data());
    ++failures;
  }
  std::printf("\n");
}

}  // namespace

int main() {
  constexpr int sm = 90;  // in production: the device's compute capability

  {
    namespace w = tune_winners::gemm;
    const auto show = [](auto winner) {
      std::printf("         winner %s: %dx%d tile, %d stages\n", winner.tune_id, winner.BM,
                  winner.BN, winner.STAGES);
    };
    const w::Shape skinny{32, 4096, 4096}, square{4096, 4096, 4096};
    expect("gemm", "M=32 N=K=4096", w::name(*w::select(skinny)), "skinny");
    w::dispatch(sm, skinny, show);
    expect("gemm", "M=N=K=4096", w::name(*w::select(square)), "square");
    w::dispatch(sm, square, show);
    // An architecture that was not tuned for is reported, not guessed.
    if (w::dispatch(80, square, show)) ++failures;
    std::printf("         sm_80: no winner (not tuned for it)\n");
  }
  {
    namespace w = tune_winners::softmax;
    const auto show = [](auto winner) {
      std::printf("         winner %s: %d threads, %d-wide\n", winner.tune_id, winner.BLOCK,
                  winner.VEC);
    };
    const w::Shape short_rows{65536, 512}, long_rows{1024, 8192};
    expect("softmax", "COLS=512", w::name(*w::select(short_rows)), "cols<=1024");
    w::dispatch(sm, short_rows, show);
    expect("softmax", "COLS=8192", w::name(*w::select(long_rows)), "cols=8192");
    w::dispatch(sm, long_rows, show);
  }
  {
    namespace w = tune_winners::reduce;
    const auto show = [](auto winner) {
      std::printf("         winner %s: %d threads x %d items\n", winner.tune_id, winner.BLOCK,
                  winner.ITEMS);
    };
    const w::Shape small{1000}, large{100'000'000};
    expect("reduce", "N=1000", w::name(*w::select(small)), "n<=1M");
    w::dispatch(sm, small, show);
    expect("reduce", "N=1e8", w::name(*w::select(large)), "n=64M");
    w::dispatch(sm, large, show);
  }
  return failures == 0 ? 0 : 1;
}
