// Prints the winner the generated header holds for sm_90.
#include <cstdio>

#include "copy_winners.hpp"

namespace w = tune_winners::copy;

int main() {
  const auto b = w::select(w::Shape{});
  if (!b) return 1;
  w::dispatch(90, *b, [&](auto winner) {
    using W = decltype(winner);
    std::printf("%s: BLOCK=%d (%s)\n", w::name(*b).data(), W::BLOCK, W::tune_origin);
  });
  return 0;
}
