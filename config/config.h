// The daemon's configuration model: one Options struct per concern, loaded from a TOML file.
//
// config/shingled.toml is the documented default; every key there maps to one field here, with
// the same name. Loading validates everything: an unknown key, a value of the wrong type or out of
// range fails with InvalidArgument naming the file, the line and the key. Values are never clamped.
//
// This module depends on nothing else in the project: the daemon turns these plain values into
// store::StoreOptions and dedup::SketchParams. Plain value types; not synchronized.
#ifndef SHINGLED_CONFIG_CONFIG_H_
#define SHINGLED_CONFIG_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace shingled::config {

// A host and a port to listen on. Host is a name or an address; an IPv6 address is written in
// brackets in text ("[::1]:8480") and without them here.
struct ListenAddress {
  std::string host = "127.0.0.1";
  uint16_t port = 8480;  // 0: any free port (the daemon logs the one it got)
  std::string ToString() const;
  bool operator==(const ListenAddress&) const = default;
};
// Parses "HOST:PORT" or "[V6]:PORT". InvalidArgument saying what is wrong.
StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

struct ServerOptions {
  // --- behaviour ---
  // Where the HTTP API listens. Loopback by default: the API has no TLS and, unless [auth] is set,
  // no authentication.
  ListenAddress listen;
  // A request (headers and body) must arrive within this time, and an idle keep-alive connection
  // is closed after it. Cuts off slow clients that would hold a session forever. 1..3600000 ms.
  int64_t read_timeout_ms = 30000;
  // A response must be written within this time. 1..3600000 ms.
  int64_t write_timeout_ms = 30000;
  // On SIGTERM, in-flight requests get this long to finish before the daemon cancels them.
  // systemd's TimeoutStopSec must be larger. 0..3600000 ms.
  int64_t shutdown_deadline_ms = 20000;

  // --- performance ---
  // Live connections at most; above this a new connection gets 503 and is closed. 1..100000.
  int64_t max_sessions = 1024;
  // Requests read ahead of their responses on one connection (HTTP/1.1 pipelining). Larger values
  // let one connection keep the pipeline busy but hold more bodies in memory. 1..128.
  int64_t max_pipelined_requests = 8;
  // Threads running the network I/O. Parsing and sketching run elsewhere, so one is usually
  // enough. 1..64.
  int64_t io_threads = 1;
  // Threads answering reads (reports, listings, queries), apart from the sketch workers, so that
  // reads never hold the workers that pages need; 0 means half the cores, at least one. 0..256.
  int64_t read_threads = 0;
  // Reads waiting for a read thread, at most; more get 503 with Retry-After. 1..100000.
  int64_t read_queue = 64;
  // A read still running after this long stops and gets 503 with Retry-After, naming this key;
  // 0: no budget. 0..3600000 ms.
  int64_t read_budget_ms = 60000;

  // --- limits against one client, or many, holding the server ---
  // A request's header must arrive within this time, and an idle keep-alive connection is
  // closed after it; shorter than read_timeout_ms, so that idle connections do not hold
  // sessions. 1..3600000 ms.
  int64_t header_timeout_ms = 10000;
  // Live connections from one client address at most (loopback too); more get 503 and are
  // closed. 1..100000.
  int64_t max_sessions_per_client = 128;
  // Bytes of request bodies read or waiting for their answer, across all connections (each
  // counts its Content-Length, a chunked one limits.max_body_bytes); a request that would go
  // over gets 503 with Retry-After before its body is read. At least limits.max_body_bytes (when
  // left out, raised to it). 1 MiB..64 GiB.
  int64_t max_body_bytes_in_flight = int64_t{256} << 20;
  // A streamed body (a WARC upload) must bring at least this many bytes in every
  // body_rate_window_ms (time spent waiting for ingest does not count); a slower client gets 408.
  // 1..1 GiB bytes; 100..3600000 ms.
  int64_t min_body_bytes_per_window = 16384;
  int64_t body_rate_window_ms = 10000;
};

struct LimitsOptions {
  // Largest request body (a page, or a batch). Larger bodies get 413. 1..1 GiB.
  int64_t max_body_bytes = int64_t{16} << 20;
  // Largest request line plus headers. Larger get 431. 1024..1 MiB.
  int64_t max_header_bytes = 16384;
  // Longest page URL accepted; a longer one gets 400. 16..65536.
  int64_t max_url_bytes = 4096;
  // Most pages in one batch request (JSON lines); more get 413. 1..100000.
  int64_t max_batch_pages = 1000;
  // Largest WARC body (POST /v1/pages with Content-Type application/warc). The body is streamed
  // record by record, never held, so this bounds the time one upload takes rather than memory;
  // a larger body gets 413 (the records read before the limit stay stored). 1..1 TiB.
  int64_t max_warc_body_bytes = int64_t{4} << 30;
  // WARC uploads read at once, each on a thread of its own; more get 503 with Retry-After.
  // 1..64.
  int64_t max_warc_uploads = 4;
  // WARC uploads one client address may have read at once. 1..64. Behind a proxy every client
  // has its address: set it to max_warc_uploads there.
  int64_t max_warc_uploads_per_client = 2;
  // When a WARC upload finds no slot, the slowest upload it contends with that brings fewer
  // bytes a second than this (after its first 2 s, not counting the time the daemon took no
  // bytes) gives its slot up with 503 (daemon/api/warc_slots.h). 0: never. 0..1 TiB.
  int64_t warc_slot_min_bytes_per_second = 65536;
};

struct IngestOptions {
  // --- behaviour ---
  // The sweep pages go to when a request names none. Opened at start-up if needed. Empty: a
  // request must name its sweep.
  std::string default_sweep = "default";
  // Retry-After (seconds) sent with 503 when the ingest queue is full. 1..3600.
  int64_t retry_after_s = 1;
  // How HTML becomes tokens: "streaming" (one pass, bounded memory, many times faster) or "gumbo"
  // (Gumbo's parse tree, the reference). The two give the same tokens on almost every page
  // (dedup/CANONICALIZER_DIFFERENCES.md); switching changes sketches only where they differ.
  std::string canonicalizer = "streaming";

  // --- performance ---
  // Sketching threads; 0 means one per core. 0..256.
  int64_t workers = 0;
  // Pages accepted but not yet committed, at most; above this requests get 503. Bounds memory and
  // latency under overload; at least twice batch_pages, so that a batch gathers while one
  // commits. 1..1000000.
  int64_t queue_pages = 32768;
  // Bytes of accepted, uncommitted page bodies, at most. 1 MiB..64 GiB.
  int64_t queue_bytes = int64_t{256} << 20;
  // Most pages per group commit (one LMDB transaction, one fsync; at most queue_pages): the
  // writer takes whatever is queued up to this. Larger batches amortize the fsync and the index
  // pages a commit rewrites; smaller ones answer sooner and hold less memory. 1..100000.
  int64_t batch_pages = 16000;
  // The smallest limit: after a failed commit (a full disk, a full map) the writer commits at
  // most this many pages for a while; with measure_batch_size, the smallest size it tries.
  // 1..100000, at most batch_pages.
  int64_t min_batch_pages = 1000;
  // true: the writer now and then tries each size from min_batch_pages to batch_pages (doubling)
  // for a few commits and keeps the cheapest per page (daemon/ingest/batch_sizer.h). Off by
  // default: on the machines measured the largest was the cheapest at every store size, and the
  // tries cost.
  bool measure_batch_size = false;
};

// [store.redis]: the Redis Cluster backend's connection (docs/REDIS.md).
struct RedisOptions {
  // Seed nodes as "host:port" (any masters or replicas of the cluster; the client reads the slot
  // map from the first that answers). At least one when store.backend is "redis-cluster".
  std::vector<std::string> nodes;
  // A file whose first line is the cluster's password (AUTH); "" for none.
  std::string password_file;
  // TLS to the nodes: not available (hiredis 0.14, Debian 12's, has none); true is refused.
  bool tls = false;
  // A page is acknowledged once every master it wrote to has it on this many replicas (WAIT).
  int64_t min_replicas = 0;           // 0..16
  int64_t connect_timeout_ms = 2000;  // 1..3,600,000
  int64_t command_timeout_ms = 5000;  // 1..3,600,000
  int64_t wait_timeout_ms = 5000;     // 1..3,600,000: how long WAIT waits for the replicas
  // The masters must run with appendonly yes and appendfsync always; true accepts less (a crash
  // of a node may then lose pages already acknowledged).
  bool allow_unsafe_fsync = false;
  // How many documents the state is sized for: the bits of the posting buckets are chosen from
  // it when the state is created, recorded, and fixed afterwards (a later start with another
  // value is refused, naming the bits). 1,000..10^12.
  int64_t expected_documents = 10000000;
  friend bool operator==(const RedisOptions&, const RedisOptions&) = default;
};

struct StoreOptions {
  // --- behaviour ---
  // Where the store lives: "lmdb" (the embedded default, in `path`) or "redis-cluster" (a Redis
  // Cluster shared by many daemons, [store.redis]).
  std::string backend = "lmdb";
  RedisOptions redis;
  // The store directory (created if missing; the LMDB backend's).
  std::string path = "/var/lib/shingled";
  // See store::StoreOptions for each of these; the ranges are the store's.
  double similar_threshold = 0.5;     // (0, 1]
  int64_t common_value_limit = 1000;  // >= 1
  // of exact|verified|fungible|similar (verified replaced fungible in the default)
  std::vector<std::string> cluster_relations = {"exact", "verified"};
  double verified_threshold = 0.9;  // (0, 1]; the verified relation
  int64_t max_candidates = 500;     // >= 1
  int64_t max_matches = 20;         // >= 1
  // Templates (store::StoreOptions::template_*): chunks left out of bytes in common.
  int64_t template_max_docs = 100;       // 1..1000000
  double template_host_share = 0.1;      // (0, 1]
  int64_t template_min_host_pages = 30;  // 1..1000000
  // --- performance ---
  int64_t initial_map_size = int64_t{16} << 30;  // bytes, 1 MiB..max_map_size
  int64_t max_map_size = int64_t{1} << 40;       // bytes
  // false only for throw-away stores: commits are not fsynced and a crash may lose them.
  bool durable = true;
  int64_t max_readers = 126;  // 1..4096
  // serve: map the store's file in advance on a background thread at start-up
  // (store::MappedFile::WarmMap; LMDB only), so that the first lookups take no page faults.
  bool warm_map = true;
  // The writer keeps a filter of the keys in the posting and fingerprint B-trees in memory
  // (store::StoreOptions::key_filter).
  bool key_filter = true;
  // --- retention (store::RetentionOptions; serve runs it, daemon/ingest/retention.h) ---
  int64_t retention_version_days = 0;  // 0: keep every version
  int64_t retention_gone_days = 0;     // 0: keep URLs gone however long ago
  int64_t retention_every_s = 3600;    // >= 60
  int64_t retention_step_urls = 2000;  // 1..1000000
};

// The sketch parameters are recorded in the store; the config may only repeat them. A key given
// here that differs from the store's value stops start-up with an error naming both values.
struct SketchOptions {
  std::optional<int64_t> shingle_size, feature_groups, group_size, fungible_threshold;
  std::optional<int64_t> min_sample_size, supershingle_span, supershingle_window, mod_sample_max;
  std::optional<int64_t> verify_sample_size;  // 0 or 16..480
  std::optional<uint64_t> seed;
  // Content-defined chunks (dedup/chunker.h); recorded like the rest. chunk_input is "none",
  // "canonical_text" or "raw_bytes"; left out keeps the default.
  std::optional<std::string> chunk_input;
  std::optional<int64_t> chunk_min_size, chunk_max_size, chunk_main_divisor, chunk_backup_divisor;
};

struct AuthOptions {
  // A file holding the bearer token (its first line; surrounding white space is ignored). Empty:
  // no authentication. The file should be readable by the daemon only.
  std::string token_file;
  // Which requests need "Authorization: Bearer TOKEN" when token_file is set.
  bool protect_writes = true;
  bool protect_reads = false;
};

struct LoggingOptions {
  // trace, debug, info, warn, error, critical or off.
  std::string level = "info";
  // One line per HTTP request at info level (time, client address, method, path and query with
  // credential-like parameters redacted, status, response bytes, latency, request id, User-Agent,
  // Referer, and the verdicts of posted pages; never another header: no Authorization, no
  // cookie). On by default: what the daemon was asked is the first thing an operator looks for.
  // Off for very busy servers whose proxy logs requests already.
  bool access_log = true;
  // The access log's format: "text" (key=value pairs after the log's time and level: for grep
  // and for reading), "combined" (Apache/NCSA combined, the bare line: for goaccess, AWStats and
  // the other tools that read web server logs; it has no room for the latency, request id or
  // verdicts) or "json" (one object per line, every field: for log pipelines). text by default,
  // as it was before the key existed.
  std::string access_log_format = "text";
};

// The built-in crawler's sweeps (`shingled serve`; `shingled crawl` reads the same table, its
// flags overriding). The fields mirror crawler::CrawlerOptions and crawler::CurlFetcherOptions
// (see those for the trade-offs); daemon/crawl_setup.h turns them into those.
struct CrawlerOptions {
  // --- behaviour ---
  // Runs the crawler in `shingled serve`: scheduled sweeps and POST /v1/crawl. Needs seeds.
  bool enabled = false;
  // Absolute http(s) URLs where each sweep starts. Known URLs in scope are revisited besides.
  std::vector<std::string> seeds;
  // Scope: hosts ("example.org", "example.org:8080") and URL prefixes. Both empty: the seeds'
  // hosts.
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> allowed_prefixes;
  // Links followed from the seeds and known URLs (depth 0) up to this depth. 0..1000.
  int64_t max_depth = 5;
  // Page fetches started per sweep at most. 0..1000000000.
  int64_t max_pages = 100000;
  // Seconds from the start of one scheduled sweep to the start of the next; written in the file
  // as "24h", "30m", "90s", "7d" or a number of seconds. 0 ("off"): no schedule, sweeps run only
  // on POST /v1/crawl. 0 or 1..31536000 (a year).
  int64_t every_s = 86400;
  // Sweeps are named this prefix plus their UTC start ("crawl-2024-05-01T12:00:00Z"); the
  // scheduler finds the last crawler sweep in the store by it. Not empty.
  std::string sweep_prefix = "crawl-";
  // Sent on every request; its product token (before '/') is matched against robots.txt.
  std::string user_agent = "shingled/0.1 (near-duplicate page detection)";
  bool obey_robots = true;
  // Allows fetching from private, loopback and link-local addresses. Off so that a seed or a
  // link cannot make the crawler probe the operator's network.
  bool allow_private_addresses = false;
  // Media types accepted for a 2xx answer. Empty accepts every type.
  std::vector<std::string> content_types = {"text/html", "application/xhtml+xml", "text/plain"};
  // Redirect hops followed per fetch. 0..50.
  int64_t max_redirects = 5;

  // --- politeness ---
  // Wait between two fetches of one host; robots.txt's Crawl-delay can raise it. 0..3600000 ms.
  int64_t per_host_delay_ms = 1000;
  // A Crawl-delay above this is capped to it. 0..3600000 ms.
  int64_t max_crawl_delay_ms = 60000;
  // Fetches in flight to one host at once. 1..64.
  int64_t max_fetches_per_host = 1;

  // --- limits and performance ---
  // Fetches in flight in all. 1..4096.
  int64_t max_active_fetches = 32;
  // 1..3600000 ms each; the total covers the whole transfer, redirects included.
  int64_t connect_timeout_ms = 10000;
  int64_t total_timeout_ms = 30000;
  // Decoded body bytes per fetch at most; a larger body is an error (too_large). 1..1 GiB.
  int64_t max_body_bytes = int64_t{10} << 20;

  // --- WARC output ---
  // Directory for the WARC files of what the crawler fetches (daemon/crawl/crawl_warc.h); empty:
  // none written. At most 4096 bytes.
  std::string warc_dir;
  // A WARC file is closed and the next begun once it holds this many (compressed) bytes. 1 GiB is
  // the size archive tools and Heritrix default to. 1 MiB..1 TiB.
  int64_t warc_max_bytes = int64_t{1} << 30;
};

// Parses a duration: a whole number followed by s, m, h or d ("90s", "24h"), a bare number of
// seconds, or "off" (0). InvalidArgument saying what is wrong.
StatusOr<int64_t> ParseDurationSeconds(std::string_view text);

struct Config {
  ServerOptions server;
  LimitsOptions limits;
  IngestOptions ingest;
  StoreOptions store;
  SketchOptions sketch;
  AuthOptions auth;
  LoggingOptions logging;
  CrawlerOptions crawler;
};

// One key of the configuration as the parser reads it. The parser's call for a key is its one
// definition (name, help, type, range; its default is the field's initializer above), and this is
// what it says: `shingled config keys` prints it, `config keys --markdown` is docs/CONFIG.md, and
// tests hold config/shingled.toml to it (each key shown with its default, its comment holding the
// help).
struct ConfigKey {
  std::string name;   // "section.key", or "store.redis.key"
  std::string type;   // "integer", "number", "boolean", "string", "array of strings", ...
  std::string range;  // "1..64", "(0, 1]", "one of a, b", or "" for any value of the type
  std::string value;  // as TOML writes it; "" for an optional key left out
  std::string help;   // one sentence: what the key does (its unit when the type does not say)
};
// Every key, in file order, with its value in `values` (the defaults when left out).
std::vector<ConfigKey> ConfigKeys(const Config& values = Config{});

// The keys ("section.key", as in the file) whose values differ between `a` and `b`, in file
// order. For SIGHUP, which applies some keys and names the others as needing a restart.
std::vector<std::string> ChangedKeys(const Config& a, const Config& b);

// Parses TOML text; `source` names it in errors ("shingled.toml:12: server.listen: ...").
// Keys left out keep their defaults. InvalidArgument for a syntax error, an unknown key or table,
// a wrong type or a value out of range, naming the line and the key.
StatusOr<Config> ParseConfig(std::string_view toml_text, std::string_view source);
// The largest config file read (the documented default, comments and all, is ~11 KiB).
inline constexpr size_t kMaxConfigBytes = size_t{1} << 20;
// Reads and parses a file. NotFound if it cannot be opened; InvalidArgument for a directory, a
// read error or a file over kMaxConfigBytes; otherwise as ParseConfig.
StatusOr<Config> LoadConfigFile(const std::string& path);

// Settings that load but cannot do what they are for, one sentence each naming the keys and
// their values: logged by `shingled serve` at start and at SIGHUP, printed by `shingled config
// check`. Today: store.template_max_docs not above store.template_host_share *
// store.template_min_host_pages, where the template judge's host-share rule can never fire.
std::vector<std::string> ConfigWarnings(const Config& config);

}  // namespace shingled::config

#endif  // SHINGLED_CONFIG_CONFIG_H_
