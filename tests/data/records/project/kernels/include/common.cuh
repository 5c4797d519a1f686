#pragma once
__device__ inline float scaled(int x) { return 0.5f * static_cast<float>(x); }
