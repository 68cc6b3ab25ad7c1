#include "eval/source_screen.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "kernel/cuda_lexer.h"
#include "sparse/quote_text.h"

namespace sparserl {

namespace {

struct offence {
  int line;
  std::string what;
};
using check = std::optional<offence>;

// ---- identifier rules
// -----------------------------------------------------------------------------

struct banned_group {
  std::set<std::string> names;
  const char* why;  // appended to "'<name>' is not allowed "
};

const std::vector<banned_group>& banned_groups() {
  static const std::vector<banned_group> groups = {
      {{"asm", "__asm", "__asm__"}, "(no inline assembly)"},
      {{"_Pragma", "__pragma"}, "(it builds directives out of strings)"},
      {{"__host__"}, "(device code only: no host functions)"},
      {{"__attribute__", "__declspec"}, "(no attributes; use __align__ or __launch_bounds__)"},
      {{"printf", "vprintf", "fprintf", "sprintf", "snprintf", "vsprintf",     "vsnprintf",
        "puts",   "putchar", "fputs",   "fputc",   "putc",     "scanf",        "fscanf",
        "sscanf", "gets",    "fgets",   "getchar", "perror",   "__assertfail", "assert"},
       "(no I/O in device code)"},
      {{"malloc", "calloc", "realloc", "free", "new", "delete", "alloca", "aligned_alloc",
        "posix_memalign", "memalign", "valloc", "pvalloc"},
       "(no dynamic memory: the harness allocates everything)"},
      {{"cudaLaunchDevice", "cudaGetParameterBuffer", "cudaDeviceSynchronize"},
       "(no dynamic parallelism)"},
      {{"main"}, "(the harness owns the host side)"},
      {{"__CUDA_ARCH__", "__CUDACC__", "__CUDACC_RTC__", "__NVCC__", "__CUDA_ARCH_LIST__",
        "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__"},
       "(code must not depend on the compiler or pass; the target is fixed)"},
      {{"fopen",    "fclose",    "fread",      "fwrite",         "freopen",      "fdopen",
        "fflush",   "fseek",     "ftell",      "rewind",         "remove",       "rename",
        "tmpfile",  "tmpnam",    "mkstemp",    "open",           "openat",       "creat",
        "close",    "read",      "write",      "pread",          "pwrite",       "lseek",
        "unlink",   "unlinkat",  "rmdir",      "mkdir",          "chdir",        "chmod",
        "chown",    "link",      "symlink",    "truncate",       "ftruncate",    "stat",
        "lstat",    "fstat",     "opendir",    "readdir",        "system",       "popen",
        "pclose",   "execl",     "execlp",     "execle",         "execv",        "execvp",
        "execvpe",  "execve",    "fexecve",    "posix_spawn",    "posix_spawnp", "fork",
        "vfork",    "clone",     "syscall",    "dlopen",         "dlsym",        "dlclose",
        "dlmopen",  "mmap",      "munmap",     "mprotect",       "mremap",       "ptrace",
        "kill",     "raise",     "signal",     "sigaction",      "exit",         "_exit",
        "_Exit",    "abort",     "atexit",     "at_quick_exit",  "quick_exit",   "getenv",
        "setenv",   "putenv",    "unsetenv",   "environ",        "socket",       "connect",
        "bind",     "listen",    "accept",     "send",           "recv",         "sendto",
        "recvfrom", "sendmsg",   "recvmsg",    "pipe",           "dup",          "dup2",
        "dup3",     "ioctl",     "fcntl",      "setuid",         "setgid",       "setsid",
        "sleep",    "usleep",    "nanosleep",  "pthread_create", "pthread_kill", "setjmp",
        "longjmp",  "sigsetjmp", "siglongjmp", "FILE",           "stdin",        "stdout",
        "stderr",   "errno",     "prctl",      "seccomp"},
       "(no system, file or process calls)"},
  };
  return groups;
}

const std::set<std::string>& allowed_builtins() {
  static const std::set<std::string> names = {"__builtin_expect", "__builtin_assume",
                                              "__builtin_assume_aligned", "__builtin_unreachable"};
  return names;
}

// Reserved identifiers (leading "__" or "_" + capital) are compiler territory: only CUDA's own
// keywords and intrinsics may appear.
const std::set<std::string>& allowed_reserved() {
  static const std::set<std::string> names = {
      "__global__",
      "__device__",
      "__shared__",
      "__constant__",
      "__restrict__",
      "__restrict",
      "__forceinline__",
      "__noinline__",
      "__inline__",
      "__launch_bounds__",
      "__align__",
      "__grid_constant__",
      "__VA_ARGS__",
      "__syncthreads",
      "__syncthreads_count",
      "__syncthreads_and",
      "__syncthreads_or",
      "__syncwarp",
      "__activemask",
      "__ballot_sync",
      "__any_sync",
      "__all_sync",
      "__uni_sync",
      "__trap",
      "__nanosleep",
      "__saturatef",
      "__sad",
      "__usad",
      "__isGlobal",
      "__isShared",
      "__isConstant",
      "__isLocal",
      "__has_include",
  };
  return names;
}

// Intrinsic families: float/double/half/bfloat16 math and conversions (__fadd_rn, __float2int_rn,
// __hadd, __nv_bfloat16, ...), warp shuffles and reductions, cache-hinted loads and stores, bit
// tricks and SIMD-in-a-word (__vadd4).
constexpr const char* allowed_reserved_prefixes[] = {
    "__shfl_", "__reduce_",   "__match_",      "__threadfence", "__ld",    "__st",
    "__f",     "__d",         "__h",           "__int",         "__uint",  "__ll",
    "__ull",   "__float",     "__double",      "__nv_",         "__popc",  "__clz",
    "__brev",  "__byte_perm", "__funnelshift", "__mul",         "__umul",  "__v",
    "__exp",   "__log",       "__pow",         "__sin",         "__cos",   "__tan",
    "__rhadd", "__uhadd",     "__urhadd",      "__rcp",         "__cvta_", "__longlong",
};

bool is_reserved(const std::string& id) {
  return id.size() >= 2 && id[0] == '_' && (id[1] == '_' || (id[1] >= 'A' && id[1] <= 'Z'));
}

std::string not_allowed(const std::string& id, const char* why) {
  return quote_text(id) + " is not allowed " + why;
}

// "" when the identifier may appear, else the reason.
std::string identifier_rule(const std::string& id) {
  for (const banned_group& g : banned_groups())
    if (g.names.count(id)) return not_allowed(id, g.why);
  const bool runtime_api =
      (id.size() > 4 && id.compare(0, 4, "cuda") == 0 && id[4] >= 'A' && id[4] <= 'Z') ||
      (id.size() > 2 && id.compare(0, 2, "cu") == 0 && id[2] >= 'A' && id[2] <= 'Z');
  if (runtime_api) return not_allowed(id, "(no CUDA runtime or driver API calls in device code)");
  if (id.compare(0, 10, "__builtin_") == 0) {
    if (allowed_builtins().count(id)) return "";
    return not_allowed(id,
                       "(compiler built-ins other than __builtin_expect, __builtin_assume, "
                       "__builtin_assume_aligned, __builtin_unreachable)");
  }
  if (!is_reserved(id) || allowed_reserved().count(id)) return "";
  for (const char* p : allowed_reserved_prefixes)
    if (id.compare(0, std::strlen(p), p) == 0) return "";
  return not_allowed(id,
                     "(reserved identifiers must be CUDA keywords or intrinsics; "
                     "see docs/kernel-abi.md)");
}

// ---- raw bytes
// --------------------------------------------------------------------------------------

check screen_bytes(const std::string& s, size_t max_bytes) {
  if (s.size() > max_bytes)
    return offence{1, "the source has " + std::to_string(s.size()) + " bytes, above the limit of " +
                          std::to_string(max_bytes)};
  int line = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      ++line;
    } else if (c == '\r') {
      if (i + 1 >= s.size() || s[i + 1] != '\n')
        return offence{line, "carriage return not followed by a newline"};
    } else if (c == 0) {
      return offence{line, "NUL byte"};
    } else if ((c < 0x20 && c != '\t' && c != '\f' && c != '\v') || c == 0x7f) {
      return offence{line, "control character " + quote_text(std::string(1, s[i]))};
    } else if (c == '?' && i + 2 < s.size() && s[i + 1] == '?' &&
               std::strchr("=/'()!<>-", s[i + 2]) != nullptr) {
      return offence{line, "trigraph " + quote_text(s.substr(i, 3)) + " is not allowed"};
    }
  }
  return std::nullopt;
}

// ---- tokens
// ---------------------------------------------------------------------------------------

bool is_raw_string(const token& t) {
  if (t.kind != token_kind::string) return false;
  const size_t quote = t.text.find('"');
  return quote != std::string::npos && quote > 0 && t.text[quote - 1] == 'R';
}

std::string other_token(const token& t) {
  const auto c = static_cast<unsigned char>(t.text[0]);
  if (c == '\\') return "stray backslash (no universal character names outside literals)";
  if (c >= 0x80) return "non-ASCII byte " + quote_text(t.text) + " outside comments and literals";
  return "unexpected character " + quote_text(t.text);
}

class screener {
 public:
  screener(const std::vector<token>& tokens, const screen_options& options)
      : t_(tokens), options_(options) {}

  check run() {
    for (size_t i = 0; i < t_.size(); ++i) {
      if (t_[i].line_start && t_[i].text == "#" && t_[i].kind == token_kind::punct) {
        if (check bad = directive(i)) return bad;
      }
      if (check bad = plain(i)) return bad;
    }
    return std::nullopt;
  }

 private:
  // Rules for every token, inside directives too.
  check plain(size_t i) {
    const token& tok = t_[i];
    auto at = [&](std::string what) { return offence{tok.line, std::move(what)}; };
    switch (tok.kind) {
      case token_kind::other:
        return at(other_token(tok));
      case token_kind::string:
        if (is_raw_string(tok)) return at("raw string literals are not allowed");
        return std::nullopt;
      case token_kind::identifier:
        if (tok.text == "extern") return extern_rule(i);
        if (std::string bad = identifier_rule(tok.text); !bad.empty()) return at(bad);
        return std::nullopt;
      case token_kind::punct:
        if (tok.text == "##") return at("token pasting ('##') is not allowed");
        if (tok.text == "#" && !tok.line_start && !in_define(i))
          return at("stray '#' outside a #define");
        if (tok.text == "<<" && i + 1 < t_.size() && t_[i + 1].text == "<" &&
            t_[i + 1].offset == tok.offset + tok.length)
          return at("'<<<' is not allowed (no dynamic parallelism)");
        return std::nullopt;
      default:
        return std::nullopt;
    }
  }

  check extern_rule(size_t i) {
    if (match_entry_definition(t_, i) != no_token) return std::nullopt;
    if (i + 1 < t_.size() && t_[i + 1].text == "__shared__") return std::nullopt;
    return offence{t_[i].line,
                   "'extern' is allowed only as 'extern \"C\" __global__ void <entry>(' and "
                   "'extern __shared__'"};
  }

  bool same_line(size_t i, size_t j) const {
    return j < t_.size() && t_[j].logical_line == t_[i].logical_line;
  }

  // True when token i lies in a #define directive (where '#' stringizes).
  bool in_define(size_t i) const {
    size_t start = i;
    while (start > 0 && t_[start - 1].logical_line == t_[i].logical_line) --start;
    return start != i && t_[start].text == "#" && t_[start].line_start && start + 1 < t_.size() &&
           t_[start + 1].text == "define";
  }

  check directive(size_t hash) {
    const int line = t_[hash].line;
    if (!same_line(hash, hash + 1)) return std::nullopt;  // the null directive
    const token& name = t_[hash + 1];
    if (name.kind != token_kind::identifier)
      return offence{line, "line markers ('# <number>') are not allowed"};
    static const std::set<std::string> allowed = {"define", "undef",  "if",     "ifdef",
                                                  "ifndef", "elif",   "else",   "endif",
                                                  "error",  "pragma", "include"};
    if (!allowed.count(name.text))
      return offence{line,
                     "preprocessor directive " + quote_text("#" + name.text) + " is not allowed"};
    if (name.text == "include") return include(hash + 2, line);
    if (name.text == "pragma") {
      const bool unroll = same_line(hash, hash + 2) &&
                          (t_[hash + 2].text == "unroll" || t_[hash + 2].text == "nounroll");
      if (!unroll) {
        const std::string what = same_line(hash, hash + 2) ? t_[hash + 2].text : std::string();
        return offence{line, quote_text("#pragma " + what) +
                                 " is not allowed (only #pragma unroll and #pragma nounroll)"};
      }
    }
    return std::nullopt;
  }

  check include(size_t at, int line) {
    const token* h = same_line(at - 2, at) ? &t_[at] : nullptr;
    const bool literal =
        h && (h->kind == token_kind::header_name ||
              (h->kind == token_kind::string && h->text.size() >= 2 && h->text.front() == '"'));
    if (!literal) return offence{line, "#include must name a header literally"};
    if (same_line(at - 2, at + 1)) return offence{line, "unexpected text after #include"};
    const std::string header = h->text.substr(1, h->text.size() - 2);
    const auto& ok = options_.allowed_includes;
    if (std::find(ok.begin(), ok.end(), header) != ok.end()) return std::nullopt;
    std::string list;
    for (const std::string& a : ok) list += (list.empty() ? "" : ", ") + a;
    return offence{line, "#include of " + quote_text(header) + " is not allowed (allowed: " +
                             (list.empty() ? std::string("none") : list) + ")"};
  }

  const std::vector<token>& t_;
  const screen_options& options_;
};

}  // namespace

screen_result screen_device_source(const std::string& source, const screen_options& options) {
  check bad = screen_bytes(source, options.max_bytes);
  if (!bad) {
    const lex_result lexed = lex_cuda(source);
    if (!lexed.error.empty()) bad = offence{lexed.error_line, lexed.error};
    if (!bad) bad = screener(lexed.tokens, options).run();
  }
  screen_result out;
  if (!bad) return out;
  out.ok = false;
  out.line = bad->line;
  out.reason = "line " + std::to_string(bad->line) + ": " + bad->what;
  return out;
}

}  // namespace sparserl
