#include "text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "sparse/error.h"

namespace sparserl::text {

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof(buffer)) < 0)
    return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

// Per-thread match state, so one compiled pattern serves encode_batch's threads without locks.
// The JIT stack grows to 8 MiB: deep backtracking over long runs fails cleanly, not silently.
struct match_state {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);

  match_state() {
    if (!data || !context) throw error("regex: out of memory creating PCRE2 match data");
    if (stack) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~match_state() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  match_state(const match_state&) = delete;
  match_state& operator=(const match_state&) = delete;
};

match_state& thread_state() {
  thread_local match_state state;
  return state;
}

size_t next_char_end(std::string_view s, size_t pos) {
  ++pos;
  while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
  return pos;
}

}  // namespace

void regex::code_deleter::operator()(void* code) const {
  pcre2_code_free(static_cast<pcre2_code*>(code));
}

regex::regex(std::string_view pattern, bool literal) : pattern_(pattern) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | (literal ? PCRE2_LITERAL : 0);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &err, &offset, nullptr);
  if (!code)
    throw error("invalid regex '" + pattern_ + "' at offset " + std::to_string(offset) + ": " +
                pcre2_message(err));
  code_ = std::shared_ptr<void>(code, code_deleter{});
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

void regex::find_all(std::string_view subject, std::vector<match_span>& out) const {
  auto* code = static_cast<const pcre2_code*>(code_.get());
  match_state& state = thread_state();
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  size_t from = 0;
  size_t last_end = std::string_view::npos;
  while (from <= subject.size()) {
    int rc = jit_ ? pcre2_jit_match(code, text, subject.size(), from, 0, state.data, state.context)
                  : PCRE2_ERROR_JIT_BADOPTION;
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)  // no JIT, or its stack ran out: interpret instead
      rc = pcre2_match(code, text, subject.size(), from, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                       state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0)
      throw error("regex '" + pattern_ + "' failed on a " + std::to_string(subject.size()) +
                  "-byte text: " + pcre2_message(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data);
    const size_t begin = ov[0], end = ov[1];
    if (begin == end && end == last_end) {  // empty match touching the last one: step a char
      if (from >= subject.size()) return;
      from = next_char_end(subject, from);
      continue;
    }
    out.push_back({begin, end});
    last_end = end;
    from = end;
  }
}

}  // namespace sparserl::text
