// Compiled by tests/cli/header_cli.py against a generated header: prints the bucket of shapes
// and the sm_90 winner of each bucket.
#include <cstdio>

#include "pick_winners.hpp"

namespace w = tune_winners::pick;

static void show(const char* label, const w::Shape& s) {
  const auto b = w::select(s);
  if (!b) {
    std::printf("%s: none\n", label);
    return;
  }
  w::dispatch(90, *b, [&](auto winner) {
    using W = decltype(winner);
    std::printf("%s: %s BM=%lld LAYOUT=%s id=%s from=%s\n", label, w::name(*b).data(),
                static_cast<long long>(W::BM), W::LAYOUT, W::tune_id, W::tune_origin);
  });
}

int main() {
  show("row", w::Shape{512, "row", 0});
  show("quoted", w::Shape{2, "r\"ow", 0});
  show("ratio", w::Shape{1024, "col", 8});
  show("zero", w::Shape{1024, "col", 0});
  show("other", w::Shape{1024, "col", 1024});
  std::printf("sm_80: %d\n", w::dispatch(80, w::Bucket::ratio, [](auto) {}) ? 1 : 0);
  return 0;
}
