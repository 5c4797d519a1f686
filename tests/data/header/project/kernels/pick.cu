// A kernel only `tuner header` reads: its hash enters the records' source hash.
extern "C" __global__ void pick(float* x) {
  x[0] = BM;
}
