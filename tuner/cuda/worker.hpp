// The measuring worker: what a kernel's runner executable is. `tune_add_kernel(... HARNESS ...)`
// builds `<name>.runner` from the static library tune_runner (which holds `main`) and the
// kernel's harness sources; the supervisor (tuner/core/search/supervisor.hpp) in `tuner run` starts
// it once per bucket, and again after a candidate killed it:
//
//   <runner> --manifest M --bucket B --arch A [--device N]
//
// It creates a CUDA context on the device, says hello and then answers one request per line on
// stdin with one answer per line on stdout, as tuner/core/search/worker_protocol.hpp defines
// (docs/formats.md "Worker messages"): set up a candidate (load its cubin from the kernel cache,
// run the harness's setup, which runs the correctness gate) and time it, or set up two finalists
// again and time them in strict alternation (the paired runoff). A failing candidate is an answer,
// not a crash. After a CUDA error, which may have poisoned its context, it answers and exits.
// Anything a harness prints to stdout goes to stderr, so it cannot break the protocol. The worker
// keeps the default actions of SIGINT and SIGTERM: it runs in its own process group, and its
// supervisor kills that group when asked to stop.
//
// Exit status: 0 at the end of its input, 2 bad arguments or input, 3 a broken environment (no
// GPU, no driver) or after a CUDA error.
#pragma once

namespace tune {

/// The runner's `main`: parses the arguments and serves requests until stdin ends.
int worker_main(int argc, char** argv);

}  // namespace tune
