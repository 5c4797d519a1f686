// Links the installed tune::core and prints a config id.
#include <cstdio>

#include <tuner/core/base/config.hpp>

int main() {
  const tune::Config c{{"BM", 64}, {"LAYOUT", "row"}};
  std::printf("%s\n", c.id().c_str());
  return 0;
}
