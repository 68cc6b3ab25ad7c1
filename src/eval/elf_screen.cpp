#include "eval/elf_screen.h"

#include <elf.h>

#include <cstring>
#include <set>

namespace sparserl {

namespace {

#if defined(__x86_64__)
constexpr uint16_t host_machine = EM_X86_64;
constexpr uint32_t irelative = R_X86_64_IRELATIVE;
#elif defined(__aarch64__)
constexpr uint16_t host_machine = EM_AARCH64;
constexpr uint32_t irelative = R_AARCH64_IRELATIVE;
#else
#error "elf_screen: unsupported host architecture"
#endif

// The libraries the emulator child has loaded before it loads a program.
const std::set<std::string> allowed_needed = {
    "libstdc++.so.6",       "libm.so.6", "libc.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1"};

class image_view {
 public:
  explicit image_view(const std::vector<char>& bytes) : b_(bytes) {}
  template <typename T>
  bool read(uint64_t offset, T& out) const {
    if (offset > b_.size() || sizeof(T) > b_.size() - offset) return false;
    std::memcpy(&out, b_.data() + offset, sizeof(T));
    return true;
  }
  bool string_at(uint64_t offset, std::string& out) const {
    if (offset >= b_.size()) return false;
    const char* p = b_.data() + offset;
    const size_t n = ::strnlen(p, b_.size() - offset);
    if (n == b_.size() - offset) return false;  // no terminator inside the file
    out.assign(p, n);
    return true;
  }

 private:
  const std::vector<char>& b_;
};

struct segments {
  std::vector<Elf64_Phdr> loads;
  // File offset of virtual address `v`, or false when no loaded segment holds it.
  bool offset_of(uint64_t v, uint64_t& off) const {
    for (const Elf64_Phdr& p : loads) {
      if (v >= p.p_vaddr && v - p.p_vaddr < p.p_filesz) {
        off = p.p_offset + (v - p.p_vaddr);
        return true;
      }
    }
    return false;
  }
};

struct dynamic_info {
  uint64_t strtab = 0, rela = 0, relasz = 0, jmprel = 0, pltrelsz = 0;
  std::vector<uint64_t> needed;
};

std::string check_header(const image_view& img, Elf64_Ehdr& eh) {
  if (!img.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return "not a 64-bit little-endian ELF file";
  if (eh.e_type != ET_DYN) return "not a shared object";
  if (eh.e_machine != host_machine) return "built for another machine";
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0) return "bad program headers";
  if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(Elf64_Shdr)) return "no section headers";
  return "";
}

std::string check_program_headers(const image_view& img, const Elf64_Ehdr& eh, segments& segs,
                                  Elf64_Phdr& dynamic) {
  bool have_dynamic = false;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!img.read(eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr), ph))
      return "program header outside the file";
    if (ph.p_type == PT_LOAD) segs.loads.push_back(ph);
    if (ph.p_type == PT_INTERP) return "has a program interpreter";
    if (ph.p_type == PT_GNU_STACK && (ph.p_flags & PF_X)) return "asks for an executable stack";
    if (ph.p_type == PT_DYNAMIC) {
      if (have_dynamic) return "two dynamic segments";
      have_dynamic = true;
      dynamic = ph;
    }
  }
  return have_dynamic ? "" : "no dynamic segment";
}

std::string check_dynamic(const image_view& img, const Elf64_Phdr& dyn, dynamic_info& info) {
  for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dyn.p_filesz; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    if (!img.read(dyn.p_offset + at, d)) return "dynamic section outside the file";
    switch (d.d_tag) {
      case DT_NULL:
        return "";
      case DT_INIT:
        return "runs code at load time (DT_INIT)";
      case DT_INIT_ARRAY:
        return "runs code at load time (DT_INIT_ARRAY: static initialisers)";
      case DT_PREINIT_ARRAY:
        return "runs code at load time (DT_PREINIT_ARRAY)";
      case DT_FINI:
        return "runs code at unload time (DT_FINI)";
      case DT_FINI_ARRAY:
        return "runs code at unload time (DT_FINI_ARRAY: static destructors)";
      case DT_AUDIT:
      case DT_DEPAUDIT:
        return "names an audit library";
      case DT_FILTER:
      case DT_AUXILIARY:
        return "names a filter library";
      case DT_NEEDED:
        info.needed.push_back(d.d_un.d_val);
        break;
      case DT_STRTAB:
        info.strtab = d.d_un.d_ptr;
        break;
      case DT_RELA:
        info.rela = d.d_un.d_ptr;
        break;
      case DT_RELASZ:
        info.relasz = d.d_un.d_val;
        break;
      case DT_JMPREL:
        info.jmprel = d.d_un.d_ptr;
        break;
      case DT_PLTRELSZ:
        info.pltrelsz = d.d_un.d_val;
        break;
      default:
        break;
    }
  }
  return "dynamic section has no terminator";
}

std::string check_needed(const image_view& img, const segments& segs, const dynamic_info& info) {
  if (info.needed.empty()) return "";
  uint64_t strtab = 0;
  if (!segs.offset_of(info.strtab, strtab)) return "string table outside the loaded segments";
  for (uint64_t name_offset : info.needed) {
    std::string name;
    if (!img.string_at(strtab + name_offset, name)) return "unreadable library name";
    if (!allowed_needed.count(name)) return "depends on library " + name;
  }
  return "";
}

std::string check_relocations(const image_view& img, const segments& segs, uint64_t addr,
                              uint64_t bytes) {
  if (bytes == 0) return "";
  uint64_t off = 0;
  if (!segs.offset_of(addr, off)) return "relocations outside the loaded segments";
  for (uint64_t at = 0; at + sizeof(Elf64_Rela) <= bytes; at += sizeof(Elf64_Rela)) {
    Elf64_Rela rel;
    if (!img.read(off + at, rel)) return "relocation outside the file";
    if (ELF64_R_TYPE(rel.r_info) == irelative)
      return "runs code at load time (IRELATIVE relocation: an ifunc resolver)";
  }
  return "";
}

std::string check_symbols(const image_view& img, const Elf64_Ehdr& eh) {
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!img.read(eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), sh))
      return "section header outside the file";
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= sh.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!img.read(sh.sh_offset + at, sym)) return "symbol table outside the file";
      if (ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC && sym.st_shndx != SHN_UNDEF)
        return "defines an ifunc (its resolver would run at load time)";
    }
  }
  return "";
}

}  // namespace

std::string screen_shared_object(const std::vector<char>& image) {
  const image_view img(image);
  Elf64_Ehdr eh;
  segments segs;
  Elf64_Phdr dynamic{};
  dynamic_info info;
  std::string why = check_header(img, eh);
  if (why.empty()) why = check_program_headers(img, eh, segs, dynamic);
  if (why.empty()) why = check_dynamic(img, dynamic, info);
  if (why.empty()) why = check_needed(img, segs, info);
  if (why.empty()) why = check_relocations(img, segs, info.rela, info.relasz);
  if (why.empty()) why = check_relocations(img, segs, info.jmprel, info.pltrelsz);
  if (why.empty()) why = check_symbols(img, eh);
  return why;
}

}  // namespace sparserl
