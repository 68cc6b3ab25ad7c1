#include "model/hf_config.h"

#include <fstream>

#include "sparse/error.h"
#include "sparse/gzip_file.h"
#include "sparse/json_depth.h"
#include "sparse/quote_text.h"

namespace sparserl {

namespace {

using json = nlohmann::json;

// Reads one key with a type check; `required` keys must be present and non-null.
class reader {
 public:
  reader(const json& doc, const std::string& source) : doc_(doc), source_(source) {}

  [[noreturn]] void fail(const std::string& why) const { throw error(source_ + ": " + why); }

  const json* find(const std::string& key) const {
    const auto it = doc_.find(key);
    return it == doc_.end() || it->is_null() ? nullptr : &*it;
  }

  int64_t integer(const std::string& key, bool required, int64_t fallback) const {
    const json* v = find(key);
    if (v == nullptr) {
      if (required) fail("missing required key \"" + key + "\"");
      return fallback;
    }
    if (!v->is_number_integer()) fail("\"" + key + "\" must be an integer, got " + v->dump());
    return v->get<int64_t>();
  }

  double number(const std::string& key, double fallback) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_number()) fail("\"" + key + "\" must be a number, got " + v->dump());
    return v->get<double>();
  }

  bool boolean(const std::string& key, bool fallback) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail("\"" + key + "\" must be true or false, got " + v->dump());
    return v->get<bool>();
  }

  std::string text(const std::string& key, const std::string& fallback) const {
    const json* v = find(key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) fail("\"" + key + "\" must be a string, got " + v->dump());
    return v->get<std::string>();
  }

  // bos/eos ids: an integer, a list of integers, or null.
  std::vector<int64_t> ids(const std::string& key) const {
    const json* v = find(key);
    if (v == nullptr) return {};
    if (v->is_number_integer()) return {v->get<int64_t>()};
    if (!v->is_array()) fail("\"" + key + "\" must be an integer or a list, got " + v->dump());
    std::vector<int64_t> out;
    for (const json& id : *v) {
      if (!id.is_number_integer()) fail("\"" + key + "\" has a non-integer id " + id.dump());
      out.push_back(id.get<int64_t>());
    }
    return out;
  }

 private:
  const json& doc_;
  std::string source_;
};

void check_rope_type(const reader& r, const json& params, const std::string& key) {
  if (!params.is_object()) r.fail("\"" + key + "\" must be an object, got " + params.dump());
  for (const char* type_key : {"rope_type", "type"}) {
    const auto it = params.find(type_key);
    if (it == params.end()) continue;
    if (!it->is_string() || it->get<std::string>() != "default")
      r.fail("\"" + key + "\" has rope type " + it->dump() +
             ": only \"default\" rotary embeddings are supported");
  }
}

// rope_theta is top-level in transformers 4.x and inside rope_parameters in 5.x.
double parse_rope_theta(const reader& r) {
  if (const json* scaling = r.find("rope_scaling")) check_rope_type(r, *scaling, "rope_scaling");
  const json* params = r.find("rope_parameters");
  if (params == nullptr) return r.number("rope_theta", 10000.0);
  check_rope_type(r, *params, "rope_parameters");
  const reader inner(*params, "rope_parameters");
  try {
    return inner.number("rope_theta", r.number("rope_theta", 10000.0));
  } catch (const error& e) {
    r.fail(e.what());
  }
}

void check_model_type(const reader& r, bool allow_other) {
  const std::string type = r.text("model_type", "");
  if (type != "qwen3" && !allow_other)
    r.fail("model_type is " +
           (type.empty() ? std::string("missing") : quote_text(type, name_quote_bytes)) +
           ", expected \"qwen3\"");
  const std::string act = r.text("hidden_act", "silu");
  if (act != "silu")
    r.fail("hidden_act " + quote_text(act, name_quote_bytes) +
           " is not supported (Qwen3 uses silu)");
}

void check_positive(const std::string& source, const char* key, int64_t value) {
  if (value <= 0)
    throw error(source + ": \"" + key + "\" must be positive, got " + std::to_string(value));
}

json ids_json(const std::vector<int64_t>& ids) {
  if (ids.empty()) return nullptr;
  if (ids.size() == 1) return ids[0];
  return ids;
}

}  // namespace

void validate(const qwen3_config& c, const std::string& source) {
  check_positive(source, "vocab_size", c.vocab_size);
  check_positive(source, "hidden_size", c.hidden_size);
  check_positive(source, "intermediate_size", c.intermediate_size);
  check_positive(source, "num_hidden_layers", c.num_hidden_layers);
  check_positive(source, "num_attention_heads", c.num_attention_heads);
  check_positive(source, "num_key_value_heads", c.num_key_value_heads);
  check_positive(source, "head_dim", c.head_dim);
  check_positive(source, "max_position_embeddings", c.max_position_embeddings);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw error(source + ": num_key_value_heads " + std::to_string(c.num_key_value_heads) +
                " does not divide num_attention_heads " + std::to_string(c.num_attention_heads));
  if (c.head_dim % 2 != 0)  // rotary embeddings rotate pairs of channels
    throw error(source + ": head_dim " + std::to_string(c.head_dim) + " must be even");
  if (!(c.rms_norm_eps > 0)) throw error(source + ": rms_norm_eps must be positive");
  if (!(c.rope_theta > 0)) throw error(source + ": rope_theta must be positive");
  for (int64_t id : c.bos_token_ids)
    if (id < 0 || id >= c.vocab_size)
      throw error(source + ": bos_token_id " + std::to_string(id) + " is outside the vocabulary");
  for (int64_t id : c.eos_token_ids)
    if (id < 0 || id >= c.vocab_size)
      throw error(source + ": eos_token_id " + std::to_string(id) + " is outside the vocabulary");
}

qwen3_config parse_qwen3_config(const json& doc, const std::string& source, bool allow_other) {
  if (!doc.is_object()) throw error(source + ": config is not a JSON object");
  const reader r(doc, source);
  check_model_type(r, allow_other);
  qwen3_config c;
  c.vocab_size = r.integer("vocab_size", true, 0);
  c.hidden_size = r.integer("hidden_size", true, 0);
  c.intermediate_size = r.integer("intermediate_size", true, 0);
  c.num_hidden_layers = r.integer("num_hidden_layers", true, 0);
  c.num_attention_heads = r.integer("num_attention_heads", true, 0);
  check_positive(source, "num_attention_heads", c.num_attention_heads);
  c.num_key_value_heads = r.integer("num_key_value_heads", false, c.num_attention_heads);
  if (r.find("head_dim") != nullptr) {
    c.head_dim = r.integer("head_dim", true, 0);
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      throw error(source + ": num_attention_heads " + std::to_string(c.num_attention_heads) +
                  " does not divide hidden_size " + std::to_string(c.hidden_size) +
                  " and there is no explicit head_dim");
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  c.max_position_embeddings = r.integer("max_position_embeddings", false, 32768);
  c.rms_norm_eps = r.number("rms_norm_eps", 1e-6);
  c.rope_theta = parse_rope_theta(r);
  c.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  c.attention_bias = r.boolean("attention_bias", false);
  c.torch_dtype = r.text("dtype", r.text("torch_dtype", "bfloat16"));
  c.bos_token_ids = r.ids("bos_token_id");
  c.eos_token_ids = r.ids("eos_token_id");
  validate(c, source);
  return c;
}

qwen3_config load_qwen3_config(const std::string& path, bool allow_other) {
  std::ifstream in(path);
  if (!in) throw error("cannot read config " + path);
  json doc;
  try {
    doc = json::parse(in, json_depth_limit());
  } catch (const json::exception& e) {
    throw error("invalid JSON in config " + path + ": " + e.what());
  } catch (const error& e) {
    throw error("invalid JSON in config " + path + ": " + e.what());
  }
  return parse_qwen3_config(doc, path, allow_other);
}

json to_json(const qwen3_config& c) {
  validate(c, "qwen3_config");
  // Keys and defaults follow transformers' Qwen3Config so from_pretrained needs nothing else.
  return json{{"architectures", {"Qwen3ForCausalLM"}},
              {"model_type", "qwen3"},
              {"vocab_size", c.vocab_size},
              {"hidden_size", c.hidden_size},
              {"intermediate_size", c.intermediate_size},
              {"num_hidden_layers", c.num_hidden_layers},
              {"num_attention_heads", c.num_attention_heads},
              {"num_key_value_heads", c.num_key_value_heads},
              {"head_dim", c.head_dim},
              {"hidden_act", "silu"},
              {"max_position_embeddings", c.max_position_embeddings},
              {"rms_norm_eps", c.rms_norm_eps},
              {"rope_theta", c.rope_theta},
              {"rope_scaling", nullptr},
              {"attention_bias", c.attention_bias},
              {"attention_dropout", 0.0},
              {"tie_word_embeddings", c.tie_word_embeddings},
              {"torch_dtype", c.torch_dtype},
              {"bos_token_id", ids_json(c.bos_token_ids)},
              {"eos_token_id", ids_json(c.eos_token_ids)},
              {"use_cache", true},
              {"use_sliding_window", false},
              {"sliding_window", nullptr},
              {"max_window_layers", c.num_hidden_layers},
              {"initializer_range", 0.02}};
}

void write_config(const std::string& path, const qwen3_config& cfg) {
  const std::string text = to_json(cfg).dump(2) + "\n";
  write_file_atomic(path, {text});
}

}  // namespace sparserl
