// The C API of llama.cpp, and nothing of its C++ headers.
#include <llama.h>
