// The GPU test programs' one CUDA context, on the device TUNE_TEST_DEVICE (default 0), made
// current on every use (a test may have switched).
#pragma once

#include <tuner/cuda/driver.hpp>

#include <cstdlib>

namespace tune::test {

inline Context& ctx() {
  static Context context([] {
    const char* env = std::getenv("TUNE_TEST_DEVICE");
    return env ? std::atoi(env) : 0;
  }());
  context.make_current();
  return context;
}

}  // namespace tune::test
