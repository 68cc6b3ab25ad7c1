#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "model/safetensors.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr st_dtype all_dtypes[] = {st_dtype::f64, st_dtype::f32,    st_dtype::f16, st_dtype::bf16,
                                   st_dtype::i64, st_dtype::i32,    st_dtype::i16, st_dtype::i8,
                                   st_dtype::u8,  st_dtype::boolean};

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A deterministic byte pattern that differs per tensor, so a swapped or shifted view shows.
std::vector<unsigned char> pattern(size_t bytes, unsigned seed) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>(seed * 31 + i * 7 + 1);
  return v;
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sparserl_st_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  // A file whose header is `header` verbatim followed by `buffer_bytes` zero bytes.
  std::string raw_file(const std::string& header, size_t buffer_bytes,
                       const std::string& name = "raw.safetensors") {
    const std::string p = path(name);
    write_all(p, le64(header.size()) + header + std::string(buffer_bytes, '\0'));
    return p;
  }

  // Opening must fail with one line naming the file and the problem.
  void expect_open_error(const std::string& file, const std::string& phrase) {
    try {
      safetensors_file f(file);
      ADD_FAILURE() << "opened " << file << " though expecting \"" << phrase << "\"";
    } catch (const error& e) {
      const std::string what = e.what();
      EXPECT_THAT(what, HasSubstr(file));
      EXPECT_THAT(what, HasSubstr(phrase));
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }

  std::string dir_;
};

TEST_F(SafetensorsTest, EveryDtypeRoundTripsIncludingScalarsAndEmptyTensors) {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<tensor_data> tensors;
  unsigned seed = 0;
  for (st_dtype d : all_dtypes) {
    for (const std::vector<int64_t>& shape :
         {std::vector<int64_t>{2, 3}, std::vector<int64_t>{}, std::vector<int64_t>{0, 4}}) {
      const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(d);
      storage.push_back(pattern(bytes, ++seed));
      // Names in an order the writer must sort.
      const std::string name = "t" + std::to_string(100 - seed) + "." + dtype_name(d);
      tensors.push_back({name, d, shape, storage.back().data(), bytes});
    }
  }
  const std::map<std::string, std::string> meta = {{"format", "pt"}, {"note", "héllo \"x\""}};
  write_safetensors(path("all.safetensors"), tensors, meta);

  safetensors_file f(path("all.safetensors"));
  EXPECT_EQ(f.metadata(), meta);
  ASSERT_EQ(f.names().size(), tensors.size());
  for (const tensor_data& t : tensors) {
    const tensor_view& v = f.get(t.name);
    EXPECT_EQ(v.dtype, t.dtype) << t.name;
    EXPECT_EQ(v.shape, t.shape) << t.name;
    ASSERT_EQ(v.bytes, t.bytes) << t.name;
    EXPECT_EQ(v.numel(), shape_numel(t.shape));
    if (t.bytes > 0) {  // memcmp with a null pointer (an empty tensor) is undefined
      EXPECT_EQ(std::memcmp(v.data, t.data, t.bytes), 0) << t.name;
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % dtype_size(t.dtype), 0u) << t.name;
  }
  EXPECT_THROW(f.get("absent"), error);
}

TEST_F(SafetensorsTest, HeaderIsSortedSpacePaddedAndDataWidestDtypeFirst) {
  const float b[3] = {1, 2, 3};
  const int64_t a[1] = {42};
  const uint8_t c[1] = {9};
  write_safetensors(path("h.safetensors"), {{"c", st_dtype::u8, {1}, c, sizeof c},
                                            {"b", st_dtype::f32, {3}, b, sizeof b},
                                            {"a", st_dtype::i64, {1}, a, sizeof a}});
  const std::string bytes = read_all(path("h.safetensors"));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u);
  ASSERT_EQ(bytes.size(), 8 + n + sizeof a + sizeof b + sizeof c);
  const std::string header = bytes.substr(8, n);
  EXPECT_LT(header.find("\"a\""), header.find("\"b\""));
  EXPECT_LT(header.find("\"b\""), header.find("\"c\""));
  EXPECT_EQ(header.find_last_not_of(' '), header.find_last_of('}'));
  const json doc = json::parse(header);
  EXPECT_EQ(doc["a"]["data_offsets"], json({0, 8}));
  EXPECT_EQ(doc["b"]["data_offsets"], json({8, 20}));
  EXPECT_EQ(doc["c"]["data_offsets"], json({20, 21}));
  EXPECT_FALSE(doc.contains("__metadata__"));  // no metadata given, none written
  int64_t a_back;
  std::memcpy(&a_back, bytes.data() + 8 + n, sizeof a_back);
  EXPECT_EQ(a_back, 42);
}

TEST_F(SafetensorsTest, WriteRejectsBadTensorsAndLeavesNoTempFile) {
  const float x[2] = {1, 2};
  const std::string p = path("bad.safetensors");
  EXPECT_THROW(write_safetensors(p, {{"x", st_dtype::f32, {3}, x, sizeof x}}), error);
  EXPECT_THROW(write_safetensors(p, {{"x", st_dtype::f32, {2}, x, sizeof x},
                                     {"x", st_dtype::f32, {2}, x, sizeof x}}),
               error);
  EXPECT_THROW(write_safetensors(p, {{"x", st_dtype::f32, {-2}, x, sizeof x}}), error);
  EXPECT_THROW(write_safetensors(p, {{"__metadata__", st_dtype::f32, {2}, x, sizeof x}}), error);
  EXPECT_THROW(write_safetensors(p, {{"bad\xff", st_dtype::f32, {2}, x, sizeof x}}), error);
  EXPECT_THROW(
      write_safetensors(path("no/such/dir.safetensors"), {{"x", st_dtype::f32, {2}, x, sizeof x}}),
      error);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(SafetensorsTest, WriteReplacesAnExistingFileAtomically) {
  const float one[1] = {1}, two[2] = {3, 4};
  const std::string p = path("m.safetensors");
  write_safetensors(p, {{"w", st_dtype::f32, {1}, one, sizeof one}});
  safetensors_file old_view(p);  // a reader keeps its mapping of the old file
  write_safetensors(p, {{"w", st_dtype::f32, {2}, two, sizeof two}});
  EXPECT_EQ(static_cast<const float*>(old_view.get("w").data)[0], 1.0f);
  safetensors_file fresh(p);
  EXPECT_EQ(fresh.get("w").shape, std::vector<int64_t>{2});
  EXPECT_EQ(static_cast<const float*>(fresh.get("w").data)[1], 4.0f);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(SafetensorsTest, ReadsAHandBuiltFileAndMovesKeepViewsValid) {
  const std::string header =
      R"({"__metadata__":{"k":"v"},"w":{"dtype":"I32","shape":[2],"data_offsets":[0,8]},)"
      R"("s":{"dtype":"U8","shape":[],"data_offsets":[8,9]}})";
  const int32_t w[2] = {-5, 7};
  std::string buffer(reinterpret_cast<const char*>(w), sizeof w);
  buffer += '\x09';
  write_all(path("hand.safetensors"), le64(header.size()) + header + buffer);
  safetensors_file f(path("hand.safetensors"));
  safetensors_file moved = std::move(f);
  EXPECT_EQ(moved.names(), (std::vector<std::string>{"s", "w"}));
  EXPECT_EQ(moved.metadata().at("k"), "v");
  int32_t read[2];  // the unpadded header leaves "w" unaligned: copy out, no int32_t* deref
  std::memcpy(read, moved.get("w").data, sizeof read);
  EXPECT_EQ(read[0], -5);
  EXPECT_EQ(read[1], 7);
  EXPECT_EQ(*static_cast<const uint8_t*>(moved.get("s").data), 9);
  EXPECT_TRUE(moved.get("s").shape.empty());
  EXPECT_TRUE(f.names().empty());
}

TEST_F(SafetensorsTest, RejectsCorruptFilesWithOneLineNamingTheFile) {
  const std::string ok = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  struct corruption {
    std::string header;
    size_t buffer;
    std::string phrase;
  };
  const std::vector<corruption> cases = {
      {"{" + ok + ", \"b\": ", 8, "invalid JSON"},
      {"[1, 2]", 0, "not a JSON object"},
      {R"({"a":{"dtype":"F8","shape":[2],"data_offsets":[0,2]}})", 2, "unknown dtype 'F8'"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8, "needs 12 bytes"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4, "out of the 4-byte"},
      {R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 8, "out of the"},
      {R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8, "negative dim"},
      {R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8, "non-integer dim"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-1,7]}})", 8, "data_offsets"},
      {R"({"a":{"dtype":"F32","shape":[2]}})", 8, "data_offsets"},
      {R"({"a":{"shape":[2],"data_offsets":[0,8]}})", 8, "dtype"},
      {R"({"a":[1]})", 8, "not an object"},
      {"{" + ok + R"(,"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12, "overlap"},
      {"{" + ok + R"(,"b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})", 16, "gap"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12, "gap"},
      {"{" + ok + "}", 12, "gap"},  // trailing bytes no tensor owns
      {"{" + ok + "," + ok + "}", 8, "duplicate tensor name 'a'"},
      {"{" + ok + R"(,"__metadata__":{"n":3}})", 8, "not a string"},
      {"{" + ok + R"(,"__metadata__":[]})", 8, "__metadata__"},
      // A name with a line break (a fuzzer finding) is escaped, so the message stays one line.
      {R"({"a\nb":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8, "tensor 'a\\x0ab'"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].header);
    expect_open_error(raw_file(cases[i].header, cases[i].buffer), cases[i].phrase);
  }
}

TEST_F(SafetensorsTest, RejectsShortFilesAndOversizedHeaders) {
  write_all(path("short.safetensors"), "abc");
  expect_open_error(path("short.safetensors"), "too short");
  expect_open_error(path("missing.safetensors"), "cannot open");
  // Header length past the end of the file.
  write_all(path("long.safetensors"), le64(1000) + "{}");
  expect_open_error(path("long.safetensors"), "oversized header");
  // Header length within the file but over the 100 MB cap: a sparse file costs no disk.
  const std::string big = path("big.safetensors");
  write_all(big, le64(150'000'000));
  fs::resize_file(big, 200'000'000);
  expect_open_error(big, "oversized header");
}

TEST_F(SafetensorsTest, EmptyFileOfNoTensorsIsValid) {
  write_safetensors(path("e.safetensors"), {}, {{"only", "metadata"}});
  safetensors_file f(path("e.safetensors"));
  EXPECT_TRUE(f.names().empty());
  EXPECT_EQ(f.metadata().at("only"), "metadata");
}

bool python_safetensors_available() {
  return std::system("python3 -c 'import safetensors.numpy, numpy' > /dev/null 2>&1") == 0;
}

TEST_F(SafetensorsTest, InteroperatesWithThePythonPackage) {
  if (!python_safetensors_available()) GTEST_SKIP() << "python3 safetensors/numpy not importable";
  const std::string from_py = path("py.safetensors");
  const std::string script = path("make.py");
  write_all(script,
            "import sys, numpy as np\n"
            "from safetensors.numpy import save_file\n"
            "save_file({'w.f32': np.arange(12, dtype=np.float32).reshape(3, 4) / 4,\n"
            "           'w.f64': np.array([1.5, -2.25]),\n"
            "           'w.f16': np.array([0.5, 65504, -1], dtype=np.float16),\n"
            "           'w.i64': np.arange(-3, 3, dtype=np.int64),\n"
            "           'w.u8': np.arange(5, dtype=np.uint8),\n"
            "           'w.bool': np.array([True, False, True]),\n"
            "           'w.scalar': np.array(7, dtype=np.int32),\n"
            "           'w.empty': np.zeros((0, 3), dtype=np.int16)},\n"
            "          sys.argv[1], metadata={'format': 'np'})\n");
  ASSERT_EQ(std::system(("python3 " + script + " " + from_py).c_str()), 0);
  safetensors_file f(from_py);
  EXPECT_EQ(f.metadata().at("format"), "np");
  const tensor_view& w = f.get("w.f32");
  EXPECT_EQ(w.shape, (std::vector<int64_t>{3, 4}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(static_cast<const float*>(w.data)[i], i / 4.0f);
  EXPECT_EQ(static_cast<const double*>(f.get("w.f64").data)[1], -2.25);
  EXPECT_EQ(static_cast<const uint16_t*>(f.get("w.f16").data)[1], 0x7bff);
  EXPECT_EQ(static_cast<const int64_t*>(f.get("w.i64").data)[0], -3);
  EXPECT_EQ(static_cast<const uint8_t*>(f.get("w.u8").data)[4], 4);
  EXPECT_EQ(f.get("w.bool").dtype, st_dtype::boolean);
  EXPECT_EQ(static_cast<const uint8_t*>(f.get("w.bool").data)[2], 1);
  EXPECT_TRUE(f.get("w.scalar").shape.empty());
  EXPECT_EQ(*static_cast<const int32_t*>(f.get("w.scalar").data), 7);
  EXPECT_EQ(f.get("w.empty").shape, (std::vector<int64_t>{0, 3}));

  // And the other way: the Python package loads what we write.
  const std::string to_py = path("cpp.safetensors");
  const int32_t v[4] = {1, -2, 3, -4};
  const uint16_t bf[2] = {0x3f80, 0xc000};  // 1.0, -2.0
  write_safetensors(to_py,
                    {{"v", st_dtype::i32, {2, 2}, v, sizeof v},
                     {"bf", st_dtype::bf16, {2}, bf, sizeof bf},
                     {"e", st_dtype::f32, {0}, nullptr, 0}},
                    {{"who", "sparserl"}});
  write_all(script,
            "import sys, numpy as np\n"
            "from safetensors import safe_open\n"
            "with safe_open(sys.argv[1], 'np') as f: assert f.metadata() == {'who': 'sparserl'}\n"
            "import json, struct\n"
            "raw = open(sys.argv[1], 'rb').read()\n"
            "n = struct.unpack('<Q', raw[:8])[0]\n"
            "h = json.loads(raw[8:8 + n])\n"
            "assert h['bf']['dtype'] == 'BF16' and h['bf']['shape'] == [2]\n"
            "with safe_open(sys.argv[1], 'np') as f:\n"
            "    v = f.get_tensor('v'); e = f.get_tensor('e')\n"
            "assert v.tolist() == [[1, -2], [3, -4]] and v.dtype == np.int32, v\n"
            "assert e.shape == (0,)\n");
  EXPECT_EQ(std::system(("python3 " + script + " " + to_py).c_str()), 0);
}

// Sharded checkpoints --------------------------------------------------------------------------

class ShardedTest : public SafetensorsTest {
 protected:
  void write_shard(const std::string& file, const std::vector<std::string>& names) {
    std::vector<tensor_data> tensors;
    for (const std::string& name : names)
      tensors.push_back({name, st_dtype::f32, {1}, &values_[name.size() % 4], sizeof(float)});
    write_safetensors(path(file), tensors);
  }
  void write_index(const json& weight_map) {
    write_all(path("model.safetensors.index.json"),
              json{{"metadata", {{"total_size", 12}}}, {"weight_map", weight_map}}.dump());
  }
  void expect_load_error(const std::string& phrase) {
    try {
      load_sharded(dir_);
      ADD_FAILURE() << "loaded though expecting \"" << phrase << "\"";
    } catch (const error& e) {
      EXPECT_THAT(e.what(), HasSubstr(phrase));
    }
  }
  const float values_[4] = {0.5f, 1.5f, 2.5f, 3.5f};
};

TEST_F(ShardedTest, LoadsTensorsAcrossShards) {
  write_shard("model-00001-of-00002.safetensors", {"a", "bb"});
  write_shard("model-00002-of-00002.safetensors", {"ccc"});
  write_index({{"a", "model-00001-of-00002.safetensors"},
               {"bb", "model-00001-of-00002.safetensors"},
               {"ccc", "model-00002-of-00002.safetensors"}});
  const sharded_checkpoint ckpt = load_sharded(dir_);
  EXPECT_EQ(ckpt.names(), (std::vector<std::string>{"a", "bb", "ccc"}));
  EXPECT_EQ(ckpt.index_metadata().at("total_size"), 12);
  for (const std::string& name : ckpt.names())
    EXPECT_EQ(*static_cast<const float*>(ckpt.get(name).data), values_[name.size() % 4]) << name;
  EXPECT_EQ(ckpt.tensors().size(), 3u);
  EXPECT_THROW(ckpt.get("d"), error);
}

TEST_F(ShardedTest, SingleFileWithoutIndexWorks) {
  write_shard("model.safetensors", {"x", "yy"});
  const sharded_checkpoint ckpt = load_sharded(dir_);
  EXPECT_EQ(ckpt.names(), (std::vector<std::string>{"x", "yy"}));
  EXPECT_EQ(*static_cast<const float*>(ckpt.get("yy").data), values_[2]);
  EXPECT_TRUE(ckpt.index_metadata().empty());
}

TEST_F(ShardedTest, EmptyDirectoryIsAnError) { expect_load_error("neither"); }

TEST_F(ShardedTest, MissingShardIsAnError) {
  write_shard("s1.safetensors", {"a"});
  write_index({{"a", "s1.safetensors"}, {"b", "s2.safetensors"}});
  expect_load_error("missing shard s2.safetensors");
}

TEST_F(ShardedTest, TensorAbsentFromItsShardIsAnError) {
  write_shard("s1.safetensors", {"a"});
  write_index({{"a", "s1.safetensors"}, {"b", "s1.safetensors"}});
  expect_load_error("'b' is mapped to s1.safetensors but that shard does not contain it");
}

TEST_F(ShardedTest, TensorInTwoShardsIsAnError) {
  write_shard("s1.safetensors", {"a", "b"});
  write_shard("s2.safetensors", {"b"});
  write_index({{"a", "s1.safetensors"}, {"b", "s2.safetensors"}});
  expect_load_error("'b' is present in both s1.safetensors and s2.safetensors");
}

TEST_F(ShardedTest, MalformedIndexIsAnError) {
  write_shard("s1.safetensors", {"a"});
  write_index({{"a", "../s1.safetensors"}});
  expect_load_error("not a plain file name");
  write_index({{"a", 3}});
  expect_load_error("not a string");
  write_all(path("model.safetensors.index.json"), R"({"metadata": {}})");
  expect_load_error("weight_map");
  write_all(path("model.safetensors.index.json"), "{");
  expect_load_error("invalid JSON");
}

TEST_F(ShardedTest, CorruptShardErrorNamesTheShard) {
  write_all(path("s1.safetensors"), le64(2) + "{]");
  write_index({{"a", "s1.safetensors"}});
  expect_load_error(path("s1.safetensors"));
}

}  // namespace
}  // namespace sparserl
