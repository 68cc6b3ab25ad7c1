#pragma once
// Checks a shared object built from untrusted source before the CPU emulator child loads it: the
// child loads it before entering seccomp, so nothing in it may run at load time. Rejected:
// initialisers and finalisers (DT_INIT, DT_INIT_ARRAY, DT_PREINIT_ARRAY, DT_FINI, DT_FINI_ARRAY:
// static constructors, __attribute__((constructor))), IFUNC resolvers (STT_GNU_IFUNC symbols,
// R_X86_64_IRELATIVE relocations), audit/filter libraries, dependencies outside the C/C++ runtime
// (which the child has loaded already), and an executable stack. The image is parsed from bytes
// with every offset checked, so a malformed file is rejected, never read out of bounds.
#include <string>
#include <vector>

namespace sparserl {

// "" when `image` may be loaded, else the reason ("runs code at load time: DT_INIT_ARRAY").
std::string screen_shared_object(const std::vector<char>& image);

}  // namespace sparserl
