// The runner executable's entry point, in the tune_runner library: each kernel's runner is this
// library linked with the kernel's harness sources (tune_add_kernel HARNESS).
#include <tuner/cuda/runner.hpp>

int main(int argc, char** argv) {
  return tune::runner_main(argc, argv);
}
