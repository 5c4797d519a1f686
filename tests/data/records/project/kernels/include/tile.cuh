#pragma once
#include "common.cuh"

__device__ inline float tile_value(int bm, int bn) { return scaled(bm * bn); }
