// Lists the embedded images of `scale` (tests/cmake/embed_test.py builds only the generated
// files, so this is compiled only by hand).
#include <cstdio>

#include "scale_embedded.hpp"

int main() {
  const tune::runtime::EmbeddedKernel& k = tune_winners::app::scale::embedded();
  for (std::size_t i = 0; i < k.count; ++i)
    std::printf("%s %s %s\n", k.images[i].arch, k.images[i].bucket_name, k.images[i].config_id);
  return 0;
}
