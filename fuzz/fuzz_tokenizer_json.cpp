// libFuzzer target: the byte-level BPE tokenizer (text/tokenizer.h). The last input byte picks:
//   even: the rest is text for the Qwen-style fixture tokenizer (tests/text/fixtures): encoding
//         must succeed on valid UTF-8 (and throw sparserl::error on invalid), give known ids,
//         and decode(encode(t)) must be NFC(t) (that file has no flags that eat text);
//   odd:  the rest is a tokenizer.json, optionally followed by a NUL and a text: loading must
//         succeed or throw sparserl::error "fuzz: ..." on one line; a loaded tokenizer must encode
//         the text to ids it knows (or throw sparserl::error) and decode them to valid UTF-8.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sparse/error.h"
#include "text/normalizer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace {

using sparserl::text::bpe_tokenizer;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_tokenizer_json: %s\n", what.c_str());
  std::abort();
}

const bpe_tokenizer& fixture() {
  static const bpe_tokenizer tok =
      bpe_tokenizer::load(SPARSERL_SOURCE_DIR "/tests/text/fixtures/tokenizer.json");
  return tok;
}

void check_ids(const bpe_tokenizer& tok, const std::vector<int32_t>& ids) {
  for (int32_t id : ids)
    if (!tok.id_to_token(id)) finding("encode gave the unknown id " + std::to_string(id));
}

std::vector<int32_t> encode_checked(const bpe_tokenizer& tok, std::string_view text,
                                    bool add_special) {
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, add_special);
  } catch (const std::exception& e) {
    finding(std::string("encode of valid UTF-8 threw: ") + e.what());
  }
  check_ids(tok, ids);
  return ids;
}

void round_trip(std::string_view bytes) {
  const bpe_tokenizer& tok = fixture();
  if (sparserl::text::find_invalid_utf8(bytes) != std::string_view::npos) {
    try {
      tok.encode(bytes);
      finding("encode accepted invalid UTF-8");
    } catch (const sparserl::error&) {
    }
  }
  const std::string text = sparserl::text::to_valid_utf8(bytes);
  static const sparserl::text::normalizer nfc({sparserl::text::normal_form::nfc});
  const std::string decoded = tok.decode(encode_checked(tok, text, false));
  if (decoded != nfc.apply(text)) finding("decode(encode(t)) != NFC(t)");
  encode_checked(tok, text, true);
}

void load_and_use(std::string_view bytes) {
  const size_t nul = bytes.find('\0');
  const std::string_view json = bytes.substr(0, nul);
  const std::string text =
      nul == std::string_view::npos ? "" : sparserl::text::to_valid_utf8(bytes.substr(nul + 1));
  std::optional<bpe_tokenizer> tok;
  try {
    tok.emplace(bpe_tokenizer::from_json_text(json, "fuzz"));
  } catch (const sparserl::error& e) {
    const std::string what = e.what();
    if (what.rfind("fuzz: ", 0) != 0 || what.find('\n') != std::string::npos)
      finding("bad message: " + what);
    return;
  } catch (const std::exception& e) {
    finding(std::string("load threw an exception other than sparserl::error: ") + e.what());
  }
  // A loaded vocabulary may lack what the text needs: a clear error is fine, a crash is not.
  try {
    const std::vector<int32_t> ids = tok->encode(text, true);
    check_ids(*tok, ids);
    if (sparserl::text::find_invalid_utf8(tok->decode(ids)) != std::string::npos)
      finding("decode gave invalid UTF-8");
    tok->decode(tok->encode(text, false), true);
  } catch (const sparserl::error& e) {
    if (std::string(e.what()).find('\n') != std::string::npos)
      finding(std::string("multi-line message: ") + e.what());
  } catch (const std::exception& e) {
    finding(std::string("encode/decode threw an exception other than sparserl::error: ") +
            e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fixture();  // once, outside the timed inputs
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size - 1);
  if (data[size - 1] & 1)
    load_and_use(bytes);
  else
    round_trip(bytes);
  return 0;
}
