# tune_warnings: the warnings tune's own targets compile with (linked PRIVATE, never passed on
# to a consumer). -Werror only with TUNE_ENABLE_WERROR, which CI and the developer presets set.
include_guard(GLOBAL)
add_library(tune_warnings INTERFACE)
target_compile_options(tune_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wconversion -Wshadow -Wno-sign-conversion>)
if(TUNE_ENABLE_WERROR)
  target_compile_options(tune_warnings INTERFACE $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Werror>)
endif()
