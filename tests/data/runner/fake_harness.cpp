// A stand-in harness for the runner's CPU tests (tests/cli/runner_cli.py): the supervisor never
// calls it (the tests replace the worker with tests/data/runner/fake_worker.py), but a runner
// links exactly one harness.
#include <tuner/cuda/harness.hpp>

namespace {

tune::Launch setup(tune::SetupContext&) {
  throw tune::error("the fake harness is not meant to run");
}

}  // namespace

TUNE_HARNESS(setup)
