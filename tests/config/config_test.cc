// Config loading: the default file parses to the defaults; bad keys, types and ranges fail
// naming the key and the line.
#include "config/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

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
  EXPECT_EQ(c->ingest.min_batch_pages, defaults.ingest.min_batch_pages);
  EXPECT_EQ(c->ingest.measure_batch_size, defaults.ingest.measure_batch_size);
  EXPECT_FALSE(c->ingest.measure_batch_size);
  EXPECT_EQ(c->store.path, defaults.store.path);
  EXPECT_EQ(c->store.max_map_size, defaults.store.max_map_size);
  EXPECT_EQ(c->store.cluster_relations, defaults.store.cluster_relations);
  EXPECT_EQ(c->store.warm_map, defaults.store.warm_map);
  EXPECT_TRUE(c->store.warm_map);
  EXPECT_EQ(c->store.key_filter, defaults.store.key_filter);
  EXPECT_TRUE(c->store.key_filter);
  EXPECT_EQ(c->store.backend, "lmdb");
  EXPECT_EQ(c->store.redis, defaults.store.redis);
  EXPECT_FALSE(c->sketch.shingle_size.has_value());
  EXPECT_EQ(c->auth.token_file, "");
  EXPECT_EQ(c->logging.level, "info");
  EXPECT_FALSE(c->crawler.enabled);
  EXPECT_TRUE(c->crawler.seeds.empty());
  EXPECT_EQ(c->crawler.every_s, defaults.crawler.every_s);
  EXPECT_EQ(c->crawler.every_s, 86400);
  EXPECT_EQ(c->crawler.max_pages, defaults.crawler.max_pages);
  EXPECT_EQ(c->crawler.max_depth, defaults.crawler.max_depth);
  EXPECT_EQ(c->crawler.per_host_delay_ms, defaults.crawler.per_host_delay_ms);
  EXPECT_EQ(c->crawler.max_crawl_delay_ms, defaults.crawler.max_crawl_delay_ms);
  EXPECT_EQ(c->crawler.max_fetches_per_host, defaults.crawler.max_fetches_per_host);
  EXPECT_EQ(c->crawler.max_active_fetches, defaults.crawler.max_active_fetches);
  EXPECT_EQ(c->crawler.user_agent, defaults.crawler.user_agent);
  EXPECT_EQ(c->crawler.sweep_prefix, defaults.crawler.sweep_prefix);
  EXPECT_EQ(c->crawler.content_types, defaults.crawler.content_types);
  EXPECT_EQ(c->crawler.max_redirects, defaults.crawler.max_redirects);
  EXPECT_EQ(c->crawler.connect_timeout_ms, defaults.crawler.connect_timeout_ms);
  EXPECT_EQ(c->crawler.total_timeout_ms, defaults.crawler.total_timeout_ms);
  EXPECT_EQ(c->crawler.max_body_bytes, defaults.crawler.max_body_bytes);
  EXPECT_EQ(c->crawler.warc_dir, "");  // no WARC output unless asked for
  EXPECT_EQ(c->crawler.warc_max_bytes, defaults.crawler.warc_max_bytes);
  EXPECT_TRUE(c->crawler.obey_robots);
  EXPECT_FALSE(c->crawler.allow_private_addresses);
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
chunk_input = "raw_bytes"
chunk_min_size = 230
chunk_max_size = 1400
chunk_main_divisor = 270
chunk_backup_divisor = 135
[auth]
token_file = "/etc/token"
protect_reads = true
[ingest]
canonicalizer = "gumbo"
measure_batch_size = true
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
  EXPECT_EQ(c->sketch.chunk_input, "raw_bytes");
  EXPECT_EQ(c->sketch.chunk_min_size, 230);
  EXPECT_EQ(c->sketch.chunk_max_size, 1400);
  EXPECT_EQ(c->sketch.chunk_main_divisor, 270);
  EXPECT_EQ(c->sketch.chunk_backup_divisor, 135);
  EXPECT_TRUE(c->auth.protect_reads);
  EXPECT_EQ(c->ingest.canonicalizer, "gumbo");
  EXPECT_TRUE(c->ingest.measure_batch_size);
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
  ExpectError("[store]\nwarm_map = \"yes\"\n", {"test.toml:2:", "store.warm_map", "true or false"});
  ExpectError("[store]\nkey_filter = 1\n", {"test.toml:2:", "store.key_filter", "true or false"});
  ExpectError("[ingest]\nmeasure_batch_size = 1\n",
              {"test.toml:2:", "ingest.measure_batch_size", "true or false"});
  ExpectError("[store]\ncluster_relations = \"exact\"\n",
              {"test.toml:2:", "store.cluster_relations", "array"});
  ExpectError("server = 3\n", {"test.toml:1:", "server", "expected a table"});
}

TEST(ConfigTest, OutOfRangeNamesKeyAndLineAndIsNotClamped) {
  ExpectError("[server]\nmax_pipelined_requests = 0\n",
              {"test.toml:2:", "server.max_pipelined_requests", "0 is out of range 1..128"});
  ExpectError(
      "[ingest]\nbatch_pages = 2000\nmin_batch_pages = 3000\n",
      {"test.toml:3:", "ingest.min_batch_pages", "3000 is above ingest.batch_pages (2000)"});
  ExpectError("[ingest]\nmin_batch_pages = 20000\n",
              {"test.toml:2:", "ingest.min_batch_pages", "above ingest.batch_pages (16000)"});
  ExpectError("[ingest]\nmin_batch_pages = 0\n",
              {"test.toml:2:", "ingest.min_batch_pages", "out of range"});
  ExpectError("[ingest]\nqueue_pages = 2000000\n",
              {"test.toml:2:", "ingest.queue_pages", "out of range"});
  ExpectError("[store]\nsimilar_threshold = 0.0\n",
              {"test.toml:2:", "store.similar_threshold", "out of range"});
  ExpectError("[sketch]\nshingle_size = 33\n", {"test.toml:2:", "sketch.shingle_size"});
  ExpectError("[sketch]\nchunk_min_size = 15\n", {"test.toml:2:", "sketch.chunk_min_size"});
  ExpectError("[sketch]\nchunk_max_size = 1048577\n", {"test.toml:2:", "sketch.chunk_max_size"});
  ExpectError("[sketch]\nchunk_backup_divisor = 1\n",
              {"test.toml:2:", "sketch.chunk_backup_divisor"});
  ExpectError("[sketch]\nchunk_input = \"words\"\n", {"test.toml:2:", "sketch.chunk_input"});
  ExpectError("[logging]\nlevel = \"loud\"\n", {"test.toml:2:", "logging.level", "not one of"});
  ExpectError("[ingest]\ncanonicalizer = \"lxml\"\n",
              {"test.toml:2:", "ingest.canonicalizer", "not one of"});
  ExpectError("[store]\ncluster_relations = [\"exact\", \"fuzzy\"]\n",
              {"test.toml:2:", "store.cluster_relations", "fuzzy"});
  ExpectError("[store]\ninitial_map_size = 4194304\nmax_map_size = 2097152\n",
              {"test.toml:2:", "store.initial_map_size"});
}

// The verified relation's threshold, the relation's name, the verification sample's k.
TEST(ConfigTest, VerifiedSecondStageKeys) {
  const Config defaults;
  EXPECT_EQ(defaults.store.cluster_relations, (std::vector<std::string>{"exact", "verified"}));
  EXPECT_EQ(defaults.store.verified_threshold, 0.9);
  StatusOr<Config> c = ParseConfig(
      "[store]\ncluster_relations = [\"exact\", \"verified\", \"fungible\"]\nverified_threshold = "
      "0.85\n"
      "[sketch]\nverify_sample_size = 384\n",
      "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->store.verified_threshold, 0.85);
  EXPECT_EQ(c->sketch.verify_sample_size, 384);
  EXPECT_EQ(c->store.cluster_relations.size(), 3u);
  ExpectError("[store]\nverified_threshold = 1.5\n",
              {"test.toml:2:", "store.verified_threshold", "out of range"});
  ExpectError("[sketch]\nverify_sample_size = 481\n",
              {"test.toml:2:", "sketch.verify_sample_size"});
}

// The server's limits against one client, or many, holding it.
TEST(ConfigTest, ServerLimitKeysAreReadAndValidated) {
  const Config defaults;
  EXPECT_EQ(defaults.server.header_timeout_ms, 10000);
  EXPECT_EQ(defaults.server.max_sessions_per_client, 128);
  EXPECT_EQ(defaults.server.max_body_bytes_in_flight, int64_t{256} << 20);
  StatusOr<Config> def = LoadConfigFile(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->server.header_timeout_ms, defaults.server.header_timeout_ms);
  EXPECT_EQ(def->server.max_sessions_per_client, defaults.server.max_sessions_per_client);
  EXPECT_EQ(def->server.max_body_bytes_in_flight, defaults.server.max_body_bytes_in_flight);
  EXPECT_EQ(def->server.min_body_bytes_per_window, defaults.server.min_body_bytes_per_window);
  EXPECT_EQ(def->server.body_rate_window_ms, defaults.server.body_rate_window_ms);

  StatusOr<Config> c = ParseConfig(
      "[server]\nheader_timeout_ms = 500\nmax_sessions_per_client = 3\n"
      "max_body_bytes_in_flight = 33554432\nmin_body_bytes_per_window = 100\n"
      "body_rate_window_ms = 2000\n",
      "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.header_timeout_ms, 500);
  EXPECT_EQ(c->server.max_sessions_per_client, 3);
  EXPECT_EQ(c->server.max_body_bytes_in_flight, 33554432);
  EXPECT_EQ(c->server.min_body_bytes_per_window, 100);
  EXPECT_EQ(c->server.body_rate_window_ms, 2000);
  EXPECT_EQ(
      ChangedKeys(defaults, *c),
      (std::vector<std::string>{"server.header_timeout_ms", "server.max_sessions_per_client",
                                "server.max_body_bytes_in_flight",
                                "server.min_body_bytes_per_window", "server.body_rate_window_ms"}));

  ExpectError("[server]\nheader_timeout_ms = 0\n",
              {"test.toml:2:", "server.header_timeout_ms", "out of range"});
  ExpectError("[server]\nmax_sessions_per_client = 0\n",
              {"test.toml:2:", "server.max_sessions_per_client", "out of range"});
  ExpectError("[server]\nmax_body_bytes_in_flight = 1000\n",
              {"test.toml:2:", "server.max_body_bytes_in_flight", "out of range"});
  ExpectError("[server]\nmin_body_bytes_per_window = 0\n",
              {"test.toml:2:", "server.min_body_bytes_per_window", "out of range"});
  ExpectError("[server]\nbody_rate_window_ms = 10\n",
              {"test.toml:2:", "server.body_rate_window_ms", "out of range"});
  // A body at limits.max_body_bytes must fit in flight: left out, the bound is raised to it.
  StatusOr<Config> big = ParseConfig("[limits]\nmax_body_bytes = 536870912\n", "test.toml");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->server.max_body_bytes_in_flight, 536870912);
  ExpectError("[server]\nmax_body_bytes_in_flight = 8388608\n[limits]\nmax_body_bytes = 16777216\n",
              {"test.toml:2:", "server.max_body_bytes_in_flight", "below limits.max_body_bytes"});
}

// A map limit below the default start: the map starts at the limit; a start given above the limit
// is refused, naming it.
TEST(ConfigTest, MapStartsAtMostAtItsLimit) {
  StatusOr<Config> c = ParseConfig("[store]\nmax_map_size = 1073741824\n", "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->store.initial_map_size, 1073741824);
  ExpectError("[store]\ninitial_map_size = 2147483648\nmax_map_size = 1073741824\n",
              {"test.toml:2:", "store.initial_map_size", "larger than store.max_map_size"});
}

TEST(ConfigTest, ReadPoolKeysAreReadAndValidated) {
  const Config defaults;
  EXPECT_EQ(defaults.server.read_threads, 0);  // half the cores
  EXPECT_EQ(defaults.server.read_queue, 64);
  EXPECT_EQ(defaults.server.read_budget_ms, 60000);
  StatusOr<Config> def = LoadConfigFile(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->server.read_threads, defaults.server.read_threads);
  EXPECT_EQ(def->server.read_queue, defaults.server.read_queue);
  EXPECT_EQ(def->server.read_budget_ms, defaults.server.read_budget_ms);
  StatusOr<Config> c =
      ParseConfig("[server]\nread_threads = 3\nread_queue = 5\nread_budget_ms = 0\n", "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.read_threads, 3);
  EXPECT_EQ(c->server.read_queue, 5);
  EXPECT_EQ(c->server.read_budget_ms, 0);
  EXPECT_EQ(ChangedKeys(defaults, *c),
            (std::vector<std::string>{"server.read_threads", "server.read_queue",
                                      "server.read_budget_ms"}));
  ExpectError("[server]\nread_threads = -1\n",
              {"test.toml:2:", "server.read_threads", "out of range"});
  ExpectError("[server]\nread_queue = 0\n", {"test.toml:2:", "server.read_queue", "out of range"});
  ExpectError("[server]\nread_budget_ms = -5\n",
              {"test.toml:2:", "server.read_budget_ms", "out of range"});
}

TEST(ConfigTest, WarcOutputKeys) {
  StatusOr<Config> c =
      ParseConfig("[crawler]\nwarc_dir = \"/var/lib/warc\"\nwarc_max_bytes = 1048576\n", "t");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->crawler.warc_dir, "/var/lib/warc");
  EXPECT_EQ(c->crawler.warc_max_bytes, 1048576);
  ExpectError("[crawler]\nwarc_max_bytes = 1000\n",
              {"test.toml:2:", "crawler.warc_max_bytes", "out of range"});
  ExpectError("[crawler]\nwarc_dir = 5\n", {"test.toml:2:", "crawler.warc_dir", "string"});
  ExpectError("[crawler]\n\nwarc_dir = \"a\\nb\"\n",
              {"test.toml:3:", "crawler.warc_dir", "control characters"});
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

// A directory, an endless device and a file far larger than any config are refused with what is
// wrong, not read as an empty config (a directory gave the defaults) or read without end.
TEST(ConfigTest, DirectoriesDevicesAndHugeFilesAreRefused) {
  StatusOr<Config> c = LoadConfigFile(::testing::TempDir());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("is a directory"), std::string::npos) << c.status().message();
  c = LoadConfigFile("/dev/zero");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("over 1024 KiB"), std::string::npos) << c.status().message();
  const std::string big =
      ::testing::TempDir() + "/big-config-" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream out(big);
    out << "[server]\n";
    for (size_t i = 0; i * 16 <= kMaxConfigBytes; ++i) out << "# padding line.\n";
  }
  c = LoadConfigFile(big);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("over 1024 KiB"), std::string::npos) << c.status().message();
  std::filesystem::remove(big);
}

TEST(ConfigTest, ReadsTheCrawlerTable) {
  StatusOr<Config> c = ParseConfig(R"toml([crawler]
enabled = true
seeds = ["https://example.org/", "http://example.net:8080/start"]
allowed_hosts = ["example.org"]
allowed_prefixes = ["http://example.net:8080/docs/"]
max_depth = 2
max_pages = 50
every = "12h"
sweep_prefix = "nightly-"
user_agent = "shingled-test/1.0 (+mailto:ops@example.org)"
obey_robots = false
allow_private_addresses = true
content_types = ["text/html"]
max_redirects = 0
per_host_delay_ms = 0
max_crawl_delay_ms = 5000
max_fetches_per_host = 2
max_active_fetches = 8
connect_timeout_ms = 1000
total_timeout_ms = 2000
max_body_bytes = 65536
)toml",
                                   "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const CrawlerOptions& o = c->crawler;
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.seeds,
            (std::vector<std::string>{"https://example.org/", "http://example.net:8080/start"}));
  EXPECT_EQ(o.allowed_hosts, std::vector<std::string>{"example.org"});
  EXPECT_EQ(o.allowed_prefixes, std::vector<std::string>{"http://example.net:8080/docs/"});
  EXPECT_EQ(o.max_depth, 2);
  EXPECT_EQ(o.max_pages, 50);
  EXPECT_EQ(o.every_s, 12 * 3600);
  EXPECT_EQ(o.sweep_prefix, "nightly-");
  EXPECT_EQ(o.user_agent, "shingled-test/1.0 (+mailto:ops@example.org)");
  EXPECT_FALSE(o.obey_robots);
  EXPECT_TRUE(o.allow_private_addresses);
  EXPECT_EQ(o.content_types, std::vector<std::string>{"text/html"});
  EXPECT_EQ(o.max_redirects, 0);
  EXPECT_EQ(o.per_host_delay_ms, 0);
  EXPECT_EQ(o.max_crawl_delay_ms, 5000);
  EXPECT_EQ(o.max_fetches_per_host, 2);
  EXPECT_EQ(o.max_active_fetches, 8);
  EXPECT_EQ(o.connect_timeout_ms, 1000);
  EXPECT_EQ(o.total_timeout_ms, 2000);
  EXPECT_EQ(o.max_body_bytes, 65536);
  // A schedule as a bare number of seconds, or off.
  EXPECT_EQ(ParseConfig("[crawler]\nevery = 90\n", "t.toml")->crawler.every_s, 90);
  EXPECT_EQ(ParseConfig("[crawler]\nevery = \"off\"\n", "t.toml")->crawler.every_s, 0);
  EXPECT_EQ(ParseConfig("[crawler]\nevery = 0\n", "t.toml")->crawler.every_s, 0);
}

TEST(ConfigTest, BadCrawlerValuesNameKeyAndLine) {
  ExpectError("[crawler]\nenabled = true\n",
              {"test.toml:2:", "crawler.seeds", "at least one seed"});
  // A seed the crawler cannot use loads: the crawler refuses it when it starts, not the daemon
  // (tests/daemon/crawl_serve_test.cc BadSeedStopsTheCrawlerNotTheDaemon).
  EXPECT_TRUE(ParseConfig("[crawler]\nseeds = [\"ftp://example.org/\"]\n", "t.toml").ok());
  ExpectError("[crawler]\nseeds = \"https://example.org/\"\n",
              {"test.toml:2:", "crawler.seeds", "array of strings"});
  ExpectError("[crawler]\n\nallowed_prefixes = [\"example.org/docs\"]\n",
              {"test.toml:3:", "crawler.allowed_prefixes"});
  ExpectError("[crawler]\nevery = \"soon\"\n", {"test.toml:2:", "crawler.every", "\"soon\""});
  ExpectError("[crawler]\nevery = \"400d\"\n",
              {"test.toml:2:", "crawler.every", "34560000 s is out of range"});
  ExpectError("[crawler]\nevery = -5\n", {"test.toml:2:", "crawler.every", "out of range"});
  ExpectError("[crawler]\nevery = true\n", {"test.toml:2:", "crawler.every", "duration"});
  ExpectError("[crawler]\nmax_fetches_per_host = 0\n",
              {"test.toml:2:", "crawler.max_fetches_per_host", "0 is out of range 1..64"});
  ExpectError("[crawler]\nmax_redirects = 51\n", {"test.toml:2:", "crawler.max_redirects"});
  ExpectError("[crawler]\nobey_robots = \"yes\"\n",
              {"test.toml:2:", "crawler.obey_robots", "true or false"});
  ExpectError("[crawler]\nuser_agent = \"\"\n", {"test.toml:2:", "crawler.user_agent"});
  // A line break in the user agent would end the header it is sent in.
  ExpectError("[crawler]\nuser_agent = \"bot\\r\\nX-Injected: 1\"\n",
              {"test.toml:2:", "crawler.user_agent", "control characters"});
  ExpectError("[crawler]\nsweep_prefix = \"crawl\\t\"\n",
              {"test.toml:2:", "crawler.sweep_prefix", "control characters"});
  ExpectError("[ingest]\ndefault_sweep = \"a\\tb\"\n",
              {"test.toml:2:", "ingest.default_sweep", "control characters"});
  ExpectError("[crawler]\ndelay = 1\n", {"test.toml:2:", "crawler.delay", "unknown key"});
  ExpectError("[crawler]\ncontent_types = [\"\"]\n",
              {"test.toml:2:", "crawler.content_types", "empty"});
}

// The redis-cluster backend's keys, and each way to get them wrong.
TEST(ConfigTest, ReadsTheRedisClusterBackendKeys) {
  StatusOr<Config> c = ParseConfig(
      "[store]\nbackend = \"redis-cluster\"\n[store.redis]\n"
      "nodes = [\"127.0.0.1:7000\", \"[::1]:7001\"]\npassword_file = \"/etc/shingled/redis\"\n"
      "min_replicas = 1\nconnect_timeout_ms = 500\ncommand_timeout_ms = 800\n"
      "wait_timeout_ms = 900\nallow_unsafe_fsync = true\nexpected_documents = 1000000000\n",
      "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->store.backend, "redis-cluster");
  EXPECT_EQ(c->store.redis.nodes, (std::vector<std::string>{"127.0.0.1:7000", "[::1]:7001"}));
  EXPECT_EQ(c->store.redis.password_file, "/etc/shingled/redis");
  EXPECT_EQ(c->store.redis.min_replicas, 1);
  EXPECT_EQ(c->store.redis.connect_timeout_ms, 500);
  EXPECT_EQ(c->store.redis.command_timeout_ms, 800);
  EXPECT_EQ(c->store.redis.wait_timeout_ms, 900);
  EXPECT_TRUE(c->store.redis.allow_unsafe_fsync);
  EXPECT_EQ(c->store.redis.expected_documents, 1000000000);
  EXPECT_EQ(ChangedKeys(Config{}, *c),
            (std::vector<std::string>{
                "store.backend", "store.redis.nodes", "store.redis.password_file",
                "store.redis.min_replicas", "store.redis.connect_timeout_ms",
                "store.redis.command_timeout_ms", "store.redis.wait_timeout_ms",
                "store.redis.allow_unsafe_fsync", "store.redis.expected_documents"}));

  ExpectError("[store]\nbackend = \"redis\"\n",
              {"test.toml:2:", "store.backend", "lmdb, redis-cluster"});
  ExpectError("[store]\nbackend = \"redis-cluster\"\n",
              {"test.toml:2:", "store.redis.nodes", "at least one seed node"});
  ExpectError("[store.redis]\nnodes = [\"localhost\"]\n",
              {"test.toml:2:", "store.redis.nodes", "not HOST:PORT"});
  ExpectError("[store.redis]\nnodes = [\"localhost:0\"]\n", {"store.redis.nodes", "port 0"});
  ExpectError("[store.redis]\nmin_replicas = 17\n", {"test.toml:2:", "store.redis.min_replicas"});
  ExpectError("[store.redis]\nexpected_documents = 10\n",
              {"test.toml:2:", "store.redis.expected_documents"});
  ExpectError("[store.redis]\ntls = true\n", {"test.toml:2:", "store.redis.tls", "hiredis 0.14"});
  ExpectError("[store.redis]\nnode = [\"a:1\"]\n",
              {"test.toml:2:", "store.redis.node", "unknown key"});
  ExpectError("[store]\nredis = 3\n", {"test.toml:2:", "store.redis", "expected a table"});
}

TEST(ConfigTest, ParseDurationSeconds) {
  EXPECT_EQ(*ParseDurationSeconds("45"), 45);
  EXPECT_EQ(*ParseDurationSeconds("45s"), 45);
  EXPECT_EQ(*ParseDurationSeconds("30m"), 1800);
  EXPECT_EQ(*ParseDurationSeconds("24h"), 86400);
  EXPECT_EQ(*ParseDurationSeconds("7d"), 7 * 86400);
  EXPECT_EQ(*ParseDurationSeconds("off"), 0);
  for (const char* bad : {"", "h", "1w", "1.5h", "-1h", "1h30m", " 1h", "99999999999999999999d"}) {
    EXPECT_FALSE(ParseDurationSeconds(bad).ok()) << bad;
  }
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

TEST(ConfigTest, AccessLogIsOnByDefaultAndABool) {
  EXPECT_TRUE(Config().logging.access_log);
  StatusOr<Config> c = LoadConfigFile(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->logging.access_log);
  c = ParseConfig("[logging]\naccess_log = false\n", "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->logging.access_log);
  ExpectError("[logging]\naccess_log = \"no\"\n", {"test.toml:2:", "logging.access_log"});
}

TEST(ConfigTest, AccessLogFormatIsTextByDefaultAndOneOfThree) {
  EXPECT_EQ(Config().logging.access_log_format, "text");
  StatusOr<Config> c = LoadConfigFile(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->logging.access_log_format, "text");
  for (const std::string format : {"text", "combined", "json"}) {
    c = ParseConfig("[logging]\naccess_log_format = \"" + format + "\"\n", "test.toml");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->logging.access_log_format, format);
  }
  ExpectError("[logging]\naccess_log_format = \"apache\"\n",
              {"test.toml:2:", "logging.access_log_format"});
  ExpectError("[logging]\naccess_log_format = true\n",
              {"test.toml:2:", "logging.access_log_format"});
  const Config a;
  Config b;
  b.logging.access_log_format = "json";
  EXPECT_EQ(ChangedKeys(a, b), std::vector<std::string>{"logging.access_log_format"});
}

TEST(ConfigTest, ChangedKeysNamesEachDifferenceAsInTheFile) {
  const Config a;
  EXPECT_TRUE(ChangedKeys(a, a).empty());
  StatusOr<Config> b = ParseConfig(R"(
[server]
listen = "127.0.0.1:9000"
[limits]
max_body_bytes = 1024
[sketch]
seed = 7
[logging]
access_log = false
[crawler]
seeds = ["https://example.org/"]
every = "1h"
)",
                                   "test.toml");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(ChangedKeys(a, *b),
            (std::vector<std::string>{"server.listen", "limits.max_body_bytes", "sketch.seed",
                                      "logging.access_log", "crawler.seeds", "crawler.every"}));
}

// store.template_max_docs not above store.template_host_share * store.template_min_host_pages:
// the template judge's host-share rule can never fire; the warning names the three keys and
// their values. The defaults (100, 0.1, 30) and the edge above it warn nothing.
TEST(ConfigWarningsTest, HostShareRuleThatCanNeverFireIsNamed) {
  EXPECT_TRUE(ConfigWarnings(Config{}).empty());
  StatusOr<Config> file = LoadConfigFile(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_TRUE(ConfigWarnings(*file).empty());

  struct Case {
    std::string toml;
    bool warns;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"[store]\ntemplate_max_docs = 3\ntemplate_host_share = 0.1\n"
       "template_min_host_pages = 30\n",
       true,
       {"store.template_max_docs = 3", "store.template_host_share = 0.1",
        "store.template_min_host_pages = 30", "can never fire"}},
      // The issue's form: max_docs / share + 1 < min_pages (100 / 0.1 + 1 < 2000).
      {"[store]\ntemplate_min_host_pages = 2000\n",
       true,
       {"store.template_max_docs = 100", "store.template_host_share = 0.1",
        "store.template_min_host_pages = 2000"}},
      {"[store]\ntemplate_max_docs = 10\ntemplate_host_share = 0.5\n"
       "template_min_host_pages = 20\n",
       true,
       {"store.template_host_share = 0.5"}},
      // One document more than share * min_pages: the rule can fire.
      {"[store]\ntemplate_max_docs = 4\ntemplate_host_share = 0.1\n"
       "template_min_host_pages = 30\n",
       false,
       {}},
      {"[store]\ntemplate_max_docs = 31\ntemplate_host_share = 1.0\n", false, {}},
      {"[store]\ntemplate_max_docs = 30\ntemplate_host_share = 1.0\n",
       true,
       {"store.template_max_docs = 30", "store.template_host_share = 1,"}},
  };
  for (const Case& c : cases) {
    StatusOr<Config> config = ParseConfig(c.toml, "test.toml");
    ASSERT_TRUE(config.ok()) << c.toml << config.status().ToString();
    const std::vector<std::string> warnings = ConfigWarnings(*config);
    ASSERT_EQ(warnings.size(), c.warns ? 1u : 0u) << c.toml;
    for (const std::string& part : c.parts) {
      EXPECT_NE(warnings[0].find(part), std::string::npos) << part << " not in: " << warnings[0];
    }
  }
}

// The keys config/shingled.toml shows ("key = value", or commented "# key = value"), by
// "section.key", with the value as written (a trailing comment left out); their names in the
// file's order in `*order`, when not null.
std::map<std::string, std::string> KeysOfTheDefaultFile(std::vector<std::string>* order = nullptr) {
  std::ifstream in(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  const std::regex section(R"(^(?:# )?\[([a-z_.]+)\]\s*$)");
  const std::regex key(R"(^(?:# )?([a-z_0-9]+) = (.*?)(?:\s+#.*)?$)");
  std::map<std::string, std::string> keys;
  std::string line, current;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, section)) {
      current = m[1];
    } else if (std::regex_match(line, m, key)) {
      keys[current + "." + m[1].str()] = m[2];
      if (order != nullptr) order->push_back(current + "." + m[1].str());
    }
  }
  return keys;
}

// The parser is the one definition of the keys: the documented file shows each of them, no other,
// with its default value, in the order the parser reads them (that of docs/CONFIG.md).
TEST(ConfigKeysTest, TheDefaultFileShowsEveryKeyWithItsDefault) {
  std::vector<std::string> order_in_file, order_read;
  const std::map<std::string, std::string> file = KeysOfTheDefaultFile(&order_in_file);
  std::set<std::string> known;
  for (const ConfigKey& k : ConfigKeys()) {
    known.insert(k.name);
    order_read.push_back(k.name);
    auto it = file.find(k.name);
    if (it == file.end()) {
      ADD_FAILURE() << k.name << " (default " << k.value << ") is not in config/shingled.toml";
      continue;
    }
    std::string written = it->second;
    if (written.find_first_not_of("0123456789_") == std::string::npos) {
      written.erase(std::remove(written.begin(), written.end(), '_'), written.end());
    }
    if (k.type == "duration" && written.size() > 2 && written.front() == '"') {
      StatusOr<int64_t> seconds = ParseDurationSeconds(written.substr(1, written.size() - 2));
      ASSERT_TRUE(seconds.ok()) << k.name << ": " << seconds.status().ToString();
      written = std::to_string(*seconds);
    }
    // An optional key left out, or a list empty by default, has no value to show: the file may
    // show an example instead.
    if (!k.value.empty() && k.value != "[]") {
      EXPECT_EQ(written, k.value) << k.name;
    }
  }
  for (const auto& [name, value] : file) {
    EXPECT_TRUE(known.count(name)) << "config/shingled.toml shows " << name
                                   << ", which the parser does not read";
  }
  const auto [in_file, in_parser] = std::mismatch(order_in_file.begin(), order_in_file.end(),
                                                  order_read.begin(), order_read.end());
  if (in_file != order_in_file.end() && in_parser != order_read.end()) {
    ADD_FAILURE() << "config/shingled.toml shows " << *in_file << " where config/config.cc reads "
                  << *in_parser << ": the file shows the keys in the order they are read";
  }
}

// What config/shingled.toml says of each key, by "section.key": the comment lines just above
// its line (for keys on consecutive lines, the comment above the first of them) and a comment
// after its value, joined with single spaces.
std::map<std::string, std::string> CommentsOfTheDefaultFile() {
  std::ifstream in(SHINGLED_SOURCE_DIR "/config/shingled.toml");
  const std::regex section(R"(^(?:# )?\[([a-z_.]+)\]\s*$)");
  const std::regex key(R"(^(?:# )?([a-z_0-9]+) = .*?(?:\s+#(.*))?$)");
  auto squeeze = [](const std::string& text) {
    std::string out;
    for (char ch : text) {
      if (!std::isspace(static_cast<unsigned char>(ch))) {
        out += ch;
      } else if (!out.empty() && out.back() != ' ') {
        out += ' ';
      }
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  };
  std::map<std::string, std::string> comments;
  std::string line, current, block, group;
  bool after_key = false;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, section)) {
      current = m[1];
      block.clear();
      after_key = false;
    } else if (std::regex_match(line, m, key)) {
      if (!after_key) group = block;
      comments[current + "." + m[1].str()] = squeeze(group + " " + m[2].str());
      block.clear();
      after_key = true;
    } else if (!line.empty() && line[0] == '#') {
      block += " " + line.substr(1);
      after_key = false;
    } else {
      block.clear();
      after_key = false;
    }
  }
  return comments;
}

// Each key's help is one sentence, given where the parser reads the key (config/config.cc), and
// config/shingled.toml's comment on the key holds that sentence: the file may say more, never
// something else. docs/CONFIG.md prints the same sentences (config_warnings_test).
TEST(ConfigKeysTest, TheDefaultFileExplainsEveryKeyWithItsHelp) {
  const std::map<std::string, std::string> comments = CommentsOfTheDefaultFile();
  const std::regex second_sentence(R"(\. [A-Z])");
  for (const ConfigKey& k : ConfigKeys()) {
    ASSERT_FALSE(k.help.empty()) << k.name << " has no help in config/config.cc";
    EXPECT_EQ(k.help.back(), '.') << k.name << ": a help is a sentence: " << k.help;
    EXPECT_FALSE(std::regex_search(k.help, second_sentence))
        << k.name << ": a help is one sentence (say more in config/shingled.toml): " << k.help;
    EXPECT_EQ(k.help.find('\n'), std::string::npos) << k.name;
    auto it = comments.find(k.name);
    if (it == comments.end()) continue;  // TheDefaultFileShowsEveryKeyWithItsDefault says so
    EXPECT_NE(it->second.find(k.help), std::string::npos)
        << "config/shingled.toml's comment on " << k.name
        << " does not hold its help from config/config.cc.\n  help:    " << k.help
        << "\n  comment: " << it->second;
  }
}

TEST(ConfigKeysTest, KeysSayTheirTypeRangeAndValue) {
  Config c;
  c.limits.max_warc_uploads = 7;
  const std::vector<ConfigKey> keys = ConfigKeys(c);
  auto find = [&](const std::string& name) {
    for (const ConfigKey& k : keys) {
      if (k.name == name) return k;
    }
    ADD_FAILURE() << name << " not listed";
    return ConfigKey{};
  };
  const ConfigKey uploads = find("limits.max_warc_uploads");
  EXPECT_EQ(uploads.type, "integer");
  EXPECT_EQ(uploads.range, "1..64");
  EXPECT_EQ(uploads.value, "7");
  EXPECT_EQ(uploads.help,
            "WARC uploads read at the same time (each on a thread of its own); more get 503.");
  EXPECT_EQ(find("logging.level").range, "one of critical, debug, error, info, off, trace, warn");
  EXPECT_EQ(find("logging.level").value, "\"info\"");
  EXPECT_EQ(find("store.redis.min_replicas").value, "0");
  EXPECT_EQ(find("server.listen").value, "\"127.0.0.1:8480\"");
  EXPECT_EQ(ChangedKeys(Config{}, c), std::vector<std::string>{"limits.max_warc_uploads"});
}

}  // namespace
}  // namespace shingled::config
