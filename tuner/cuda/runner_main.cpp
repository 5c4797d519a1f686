// The runner executable's entry point, in the tune_runner library: each kernel's runner is this
// library linked with the kernel's harness sources (tune_add_kernel HARNESS).
#include <tuner/cuda/worker.hpp>

int main(int argc, char** argv) {
  return tune::worker_main(argc, argv);
}
