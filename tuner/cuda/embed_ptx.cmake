# Writes the PTX file IN as a C++ source OUT defining `extern const char NAME[]` (NUL-terminated,
# as cuModuleLoadData wants it). Run by tune_cuda's build: cmake -DIN=.. -DOUT=.. -DNAME=.. -P.
file(READ "${IN}" ptx)
string(FIND "${ptx}" ")tune_ptx\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} holds the raw string's delimiter ')tune_ptx\"'; change it here")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by tuner/cuda/embed_ptx.cmake; do not edit.\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = R\"tune_ptx(${ptx})tune_ptx\";\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
