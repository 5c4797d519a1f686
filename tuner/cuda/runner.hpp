// The runner (DESIGN.md "Interfaces", runner): the program `tune_add_kernel(... HARNESS ...)`
// builds for a kernel, from the static library tune_runner (which holds `main`) and the
// kernel's harness sources. It has two modes in one executable:
//
//   <runner> --manifest M --bucket B --log L [--arch A] [--device N] [--budget S]
//            [--timeout S] [--result R]
//     The supervisor (no CUDA context in this process). It runs the search of one bucket
//     through Autotuner::run_objective, sending each candidate to a measuring worker process
//     (itself, with --worker) with a deadline, and replaces the worker when it dies or hangs:
//     that candidate is logged invalid with the reason and the search goes on. The best two
//     then meet in the paired runoff. The bucket's result goes to --result as JSON.
//
//   <runner> --worker --manifest M --bucket B --arch A [--device N]
//     The worker: one JSON request per line on stdin, one JSON answer per line on stdout
//     (the protocol below). It exits after a CUDA error, which may have poisoned its context.
//
// Protocol. At start the worker answers `{"ready":true,"device":"NVIDIA H200","driver":"..."}`
// or `{"ready":false,"error":"..."}` (and exits). Then:
//   {"op":"measure","config":{params},"key":"<hex>"}
//     -> a trial: {"state":"measured","median_ms":..,"min_ms":..,"reps":..,"batched":..,
//                  "warnings":[..],"device":".."} or {"state":"invalid","reason":".."}
//   {"op":"runoff","incumbent":{"config":{..},"key":".."},"challenger":{...}}
//     -> {"incumbent_ms":[..],"challenger_ms":[..],"batched":..,"warnings":[..],"device":".."}
//        or {"incumbent_failure":"..","challenger_failure":".."} (either or both)
//        or {"failure":".."} (the paired bench failed after both setups)
//   Any answer may carry "exiting":true: the worker exits after it (a CUDA error).
//
// Exit status of the supervisor: 0 with a winner, 1 without one (nothing valid, an incumbent
// failed), 2 bad input, 3 a broken environment (the worker cannot start: no GPU), 130 / 143
// on SIGINT / SIGTERM (the worker is killed, the log stays consistent, no result is written).
#pragma once

namespace tune {

/// The runner's `main`: parses the arguments and runs the supervisor or the worker.
int runner_main(int argc, char** argv);

}  // namespace tune
