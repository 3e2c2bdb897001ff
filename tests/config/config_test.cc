// Config loading: the default file parses to the defaults; bad keys, types and ranges fail
// naming the key and the line.
#include "config/config.h"

#include <gtest/gtest.h>

namespace shingled::config {
namespace {

// Expects `text` to fail with a message containing every piece of `parts`.
void ExpectError(const std::string& text, std::initializer_list<std::string> parts) {
  StatusOr<Config> c = ParseConfig(text, "test.toml");
  ASSERT_FALSE(c.ok()) << text;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  for (const std::string& part : parts) {
    EXPECT_NE(c.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << c.status().message();
  }
}

TEST(ConfigTest, DefaultFileGivesTheDefaults) {
  StatusOr<Config> c = LoadConfigFile(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const Config defaults;
  EXPECT_EQ(c->server.listen.host, defaults.server.listen.host);
  EXPECT_EQ(c->server.listen.port, 8480);
  EXPECT_EQ(c->server.read_timeout_ms, defaults.server.read_timeout_ms);
  EXPECT_EQ(c->limits.max_body_bytes, defaults.limits.max_body_bytes);
  EXPECT_EQ(c->limits.max_header_bytes, defaults.limits.max_header_bytes);
  EXPECT_EQ(c->limits.max_warc_body_bytes, defaults.limits.max_warc_body_bytes);
  EXPECT_EQ(c->limits.max_warc_uploads, defaults.limits.max_warc_uploads);
  EXPECT_EQ(c->ingest.queue_pages, defaults.ingest.queue_pages);
  EXPECT_EQ(c->ingest.batch_pages, defaults.ingest.batch_pages);
  EXPECT_EQ(c->store.path, defaults.store.path);
  EXPECT_EQ(c->store.max_map_size, defaults.store.max_map_size);
  EXPECT_EQ(c->store.cluster_relations, defaults.store.cluster_relations);
  EXPECT_FALSE(c->sketch.shingle_size.has_value());
  EXPECT_EQ(c->auth.token_file, "");
  EXPECT_EQ(c->logging.level, "info");
}

TEST(ConfigTest, EmptyTextGivesTheDefaults) {
  StatusOr<Config> c = ParseConfig("", "empty.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server.listen.ToString(), "127.0.0.1:8480");
}

TEST(ConfigTest, ReadsValues) {
  StatusOr<Config> c = ParseConfig(R"(
[server]
listen = "[::1]:0"
read_timeout_ms = 500
[store]
path = "/tmp/x"
similar_threshold = 1
cluster_relations = ["exact"]
[sketch]
shingle_size = 5
seed = "0xff"
[auth]
token_file = "/etc/token"
protect_reads = true
[ingest]
canonicalizer = "gumbo"
)",
                                   "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.listen.host, "::1");
  EXPECT_EQ(c->server.listen.port, 0);
  EXPECT_EQ(c->server.listen.ToString(), "[::1]:0");
  EXPECT_EQ(c->server.read_timeout_ms, 500);
  EXPECT_EQ(c->store.path, "/tmp/x");
  EXPECT_EQ(c->store.similar_threshold, 1.0);
  EXPECT_EQ(c->store.cluster_relations, std::vector<std::string>{"exact"});
  EXPECT_EQ(c->sketch.shingle_size, 5);
  EXPECT_EQ(c->sketch.seed, 0xffu);
  EXPECT_TRUE(c->auth.protect_reads);
  EXPECT_EQ(c->ingest.canonicalizer, "gumbo");
}

TEST(ConfigTest, UnknownKeyNamesKeyAndLine) {
  ExpectError("[server]\nlisten = \"127.0.0.1:1\"\nread_timeout = 5\n",
              {"test.toml:3:", "server.read_timeout", "unknown key"});
}

TEST(ConfigTest, UnknownTableNamesTableAndLine) {
  ExpectError("\n[sever]\nlisten = 1\n", {"test.toml:2:", "sever", "unknown table"});
}

TEST(ConfigTest, WrongTypeNamesKeyAndLine) {
  ExpectError("[limits]\n\nmax_body_bytes = \"16M\"\n",
              {"test.toml:3:", "limits.max_body_bytes", "expected an integer"});
  ExpectError("[store]\ndurable = 1\n", {"test.toml:2:", "store.durable", "true or false"});
  ExpectError("[store]\ncluster_relations = \"exact\"\n",
              {"test.toml:2:", "store.cluster_relations", "array"});
  ExpectError("server = 3\n", {"test.toml:1:", "server", "expected a table"});
}

TEST(ConfigTest, OutOfRangeNamesKeyAndLineAndIsNotClamped) {
  ExpectError("[server]\nmax_pipelined_requests = 0\n",
              {"test.toml:2:", "server.max_pipelined_requests", "0 is out of range 1..128"});
  ExpectError("[ingest]\nqueue_pages = 2000000\n",
              {"test.toml:2:", "ingest.queue_pages", "out of range"});
  ExpectError("[store]\nsimilar_threshold = 0.0\n",
              {"test.toml:2:", "store.similar_threshold", "out of range"});
  ExpectError("[sketch]\nshingle_size = 33\n", {"test.toml:2:", "sketch.shingle_size"});
  ExpectError("[logging]\nlevel = \"loud\"\n", {"test.toml:2:", "logging.level", "not one of"});
  ExpectError("[ingest]\ncanonicalizer = \"lxml\"\n",
              {"test.toml:2:", "ingest.canonicalizer", "not one of"});
  ExpectError("[store]\ncluster_relations = [\"exact\", \"fuzzy\"]\n",
              {"test.toml:2:", "store.cluster_relations", "fuzzy"});
  ExpectError("[store]\ninitial_map_size = 4194304\nmax_map_size = 2097152\n",
              {"test.toml:2:", "store.initial_map_size"});
}

TEST(ConfigTest, BadListenAddress) {
  ExpectError("[server]\nlisten = \"localhost\"\n", {"test.toml:2:", "server.listen"});
  ExpectError("[server]\nlisten = \"::1:80\"\n", {"server.listen", "[::1]:8480"});
  ExpectError("[server]\nlisten = \"h:70000\"\n", {"server.listen", "0..65535"});
}

TEST(ConfigTest, SyntaxErrorNamesLine) { ExpectError("[server]\nlisten = \n", {"test.toml:2:"}); }

TEST(ConfigTest, MissingFileIsNotFound) {
  StatusOr<Config> c = LoadConfigFile("/nonexistent/shingled.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

TEST(ConfigTest, ParseListenAddress) {
  StatusOr<ListenAddress> a = ParseListenAddress("localhost:8480");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "localhost");
  EXPECT_FALSE(ParseListenAddress("[::1]").ok());
  EXPECT_FALSE(ParseListenAddress(":80").ok());
  EXPECT_FALSE(ParseListenAddress("a:").ok());
  EXPECT_FALSE(ParseListenAddress("a:8x").ok());
}

}  // namespace
}  // namespace shingled::config
