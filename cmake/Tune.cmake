# tune's public CMake API. See the documentation blocks of each function.
include_guard(GLOBAL)
