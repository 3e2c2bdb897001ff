// TOML loading and validation of the configuration (config/config.h).
#include "config/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace shingled::config {
namespace {

bool HasControlCharacter(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
}

// Reads the keys of one table into fields, remembering the first error. Every key read is
// marked; Finish() then rejects the keys nobody asked for, so a typo never passes silently.
class TableReader {
 public:
  // `catalog`, when not null, gets each key asked for: its type, range, help and the value it has
  // before the table is read (ConfigKeys). Each call below takes the key's help, one sentence
  // (config/shingled.toml's comment on the key holds it; config_test checks).
  TableReader(const toml::table& table, std::string section, std::string_view source,
              Status* status, std::vector<ConfigKey>* catalog = nullptr)
      : table_(table),
        section_(std::move(section)),
        source_(source),
        status_(status),
        catalog_(catalog) {}

  void Int(const char* key, const char* help, int64_t min, int64_t max, int64_t* out) {
    Note(key, help, "integer", std::to_string(min) + ".." + std::to_string(max),
         std::to_string(*out));
    ReadInt(key, min, max, out);
  }
  void ReadInt(const char* key, int64_t min, int64_t max, int64_t* out) {
    const toml::node* node = Find(key);
    if (node == nullptr) return;
    const auto* v = node->as_integer();
    if (v == nullptr) return Fail(*node, key, "expected an integer");
    if (v->get() < min || v->get() > max) {
      return Fail(*node, key,
                  std::to_string(v->get()) + " is out of range " + std::to_string(min) + ".." +
                      std::to_string(max));
    }
    *out = v->get();
  }
  void OptionalInt(const char* key, const char* help, int64_t min, int64_t max,
                   std::optional<int64_t>* out) {
    Note(key, help, "integer", std::to_string(min) + ".." + std::to_string(max) + ", or left out",
         out->has_value() ? std::to_string(**out) : "");
    const bool present = table_.contains(key);
    int64_t value = 0;
    ReadInt(key, min, max, &value);
    if (present && status_->ok()) *out = value;
  }
  // For unsigned 64-bit values (seeds): a TOML integer is signed, so the full range is written
  // as a hex string "0x...", or as a non-negative integer.
  void OptionalU64(const char* key, const char* help, std::optional<uint64_t>* out) {
    Note(key, help, "integer or \"0x...\"", "0..2^64-1, or left out",
         out->has_value() ? std::to_string(**out) : "");
    const toml::node* node = Find(key);
    if (node == nullptr) return;
    if (const auto* i = node->as_integer()) {
      if (i->get() < 0) return Fail(*node, key, "must not be negative");
      *out = static_cast<uint64_t>(i->get());
      return;
    }
    const auto* s = node->as_string();
    if (s == nullptr) return Fail(*node, key, "expected an integer or a \"0x...\" string");
    std::string_view text = s->get();
    uint64_t value = 0;
    if (text.size() < 3 || text.substr(0, 2) != "0x" ||
        std::from_chars(text.data() + 2, text.data() + text.size(), value, 16).ptr !=
            text.data() + text.size()) {
      return Fail(*node, key, "\"" + std::string(text) + "\" is not a hex number like \"0x1f\"");
    }
    *out = value;
  }
  void Double(const char* key, const char* help, double min_exclusive, double max, double* out) {
    Note(key, help, "number", "(" + Number(min_exclusive) + ", " + Number(max) + "]", Number(*out));
    const toml::node* node = Find(key);
    if (node == nullptr) return;
    double value;
    if (const auto* f = node->as_floating_point()) {
      value = f->get();
    } else if (const auto* i = node->as_integer()) {
      value = static_cast<double>(i->get());
    } else {
      return Fail(*node, key, "expected a number");
    }
    if (!(value > min_exclusive && value <= max)) {
      std::ostringstream msg;
      msg << value << " is out of range (" << min_exclusive << ", " << max << "]";
      return Fail(*node, key, msg.str());
    }
    *out = value;
  }
  void Bool(const char* key, const char* help, bool* out) {
    Note(key, help, "boolean", "", *out ? "true" : "false");
    const toml::node* node = Find(key);
    if (node == nullptr) return;
    const auto* v = node->as_boolean();
    if (v == nullptr) return Fail(*node, key, "expected true or false");
    *out = v->get();
  }
  // A string, optionally one of `allowed`.
  void String(const char* key, const char* help, std::string* out,
              const std::set<std::string>& allowed = {}) {
    Note(key, help, "string", allowed.empty() ? "" : "one of " + Join(allowed), Quote(*out));
    ReadString(key, out, allowed);
  }
  void OptionalString(const char* key, const char* help, std::optional<std::string>* out,
                      const std::set<std::string>& allowed) {
    Note(key, help, "string", "one of " + Join(allowed) + ", or left out",
         out->has_value() ? Quote(**out) : "");
    const bool present = table_.contains(key);
    std::string value;
    ReadString(key, &value, allowed);
    if (present && status_->ok()) *out = std::move(value);
  }
  void ReadString(const char* key, std::string* out, const std::set<std::string>& allowed = {}) {
    const toml::node* node = Find(key);
    if (node == nullptr) return;
    const auto* v = node->as_string();
    if (v == nullptr) return Fail(*node, key, "expected a string");
    if (!allowed.empty() && !allowed.count(v->get())) {
      return Fail(*node, key, "\"" + v->get() + "\" is not one of " + Join(allowed));
    }
    *out = v->get();
  }
  // An array of strings, each one of `allowed` (empty: any), each passing `check` (which returns
  // "" or what is wrong).
  void StringList(const char* key, const char* help, const std::set<std::string>& allowed,
                  std::vector<std::string>* out,
                  const std::function<std::string(const std::string&)>& check = nullptr) {
    std::string list;
    for (const std::string& v : *out) list += (list.empty() ? "" : ", ") + Quote(v);
    Note(key, help, "array of strings", allowed.empty() ? "" : "each one of " + Join(allowed),
         "[" + list + "]");
    const toml::node* node = Find(key);
    if (node == nullptr) return;
    const auto* array = node->as_array();
    if (array == nullptr) return Fail(*node, key, "expected an array of strings");
    std::vector<std::string> values;
    for (const toml::node& element : *array) {
      const auto* s = element.as_string();
      if (s == nullptr) return Fail(element, key, "expected an array of strings");
      if (!allowed.empty() && !allowed.count(s->get())) {
        return Fail(element, key, "\"" + s->get() + "\" is not one of " + Join(allowed));
      }
      if (check) {
        if (const std::string problem = check(s->get()); !problem.empty()) {
          return Fail(element, key, problem);
        }
      }
      values.push_back(s->get());
    }
    *out = std::move(values);
  }
  // A duration in seconds: an integer, or a string for ParseDurationSeconds. 0 or min..max.
  void Seconds(const char* key, const char* help, int64_t min, int64_t max, int64_t* out) {
    Note(key, help, "duration",
         "0 (off) or " + std::to_string(min) + ".." + std::to_string(max) + " s",
         std::to_string(*out));
    const toml::node* node = Find(key);
    if (node == nullptr) return;
    int64_t value = 0;
    if (const auto* i = node->as_integer()) {
      value = i->get();
    } else if (const auto* s = node->as_string()) {
      StatusOr<int64_t> parsed = ParseDurationSeconds(s->get());
      if (!parsed.ok()) return Fail(*node, key, parsed.status().message());
      value = *parsed;
    } else {
      return Fail(*node, key, "expected a duration like \"24h\" or a number of seconds");
    }
    if (value != 0 && (value < min || value > max)) {
      return Fail(*node, key,
                  std::to_string(value) + " s is out of range: 0 (off) or " + std::to_string(min) +
                      ".." + std::to_string(max) + " s");
    }
    *out = value;
  }
  // A table within this one ([section.key]), read by `read` with a reader of its own.
  template <typename F>
  void Table(const char* key, F read) {
    const toml::node* node = Find(key);
    static const toml::table kEmpty;
    // Listing the keys, a table the file leaves out is listed all the same.
    if (node == nullptr && catalog_ == nullptr) return;
    const toml::table* table = node != nullptr ? node->as_table() : &kEmpty;
    if (table == nullptr) return Fail(*node, key, "expected a table");
    TableReader reader(*table, section_ + "." + key, source_, status_, catalog_);
    read(reader);
    reader.Finish();
  }
  void Listen(const char* key, const char* help, ListenAddress* out) {
    Note(key, help, "string", "\"HOST:PORT\" or \"[IPV6]:PORT\"", Quote(out->ToString()));
    std::string text;
    ReadString(key, &text);
    if (text.empty()) return;
    StatusOr<ListenAddress> address = ParseListenAddress(text);
    if (!address.ok()) return Fail(*table_.get(key), key, address.status().message());
    *out = *address;
  }

  // Rejects the keys of the table that no call above asked for.
  void Finish() {
    for (auto&& [key, node] : table_) {
      if (!seen_.count(std::string(key.str()))) {
        Fail(node, std::string(key.str()).c_str(),
             node.is_table() ? "unknown table" : "unknown key");
        return;
      }
    }
  }

 private:
  void Note(const char* key, const char* help, std::string type, std::string range,
            std::string value) {
    if (catalog_ == nullptr) return;
    catalog_->push_back(
        {section_ + "." + key, std::move(type), std::move(range), std::move(value), help});
  }
  // The shortest text that reads back as `v`.
  static std::string Number(double v) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, end);
  }
  static std::string Quote(const std::string& v) {
    std::string out = "\"";
    for (char ch : v) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    return out + "\"";
  }
  const toml::node* Find(const char* key) {
    seen_.insert(key);
    if (!status_->ok()) return nullptr;
    return table_.get(key);
  }
  void Fail(const toml::node& node, std::string_view key, const std::string& what) {
    if (!status_->ok()) return;
    const std::string name =
        section_.empty() ? std::string(key) : section_ + "." + std::string(key);
    *status_ =
        InvalidArgumentError(std::string(source_) + ":" + std::to_string(node.source().begin.line) +
                             ": " + name + ": " + what);
  }
  static std::string Join(const std::set<std::string>& values) {
    std::string out;
    for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
    return out;
  }

  const toml::table& table_;
  const std::string section_;
  const std::string_view source_;
  Status* status_;
  std::vector<ConfigKey>* catalog_;
  std::set<std::string> seen_;
};

constexpr int64_t kMaxMs = 3600000;

// Calls `read` with a reader of the table [name], if the file has it (always, listing the keys
// into `catalog`).
template <typename F>
void Section(const toml::table& root, const char* name, std::string_view source, Status* status,
             std::vector<ConfigKey>* catalog, F read) {
  const toml::node* node = root.get(name);
  static const toml::table kEmpty;
  if ((node == nullptr && catalog == nullptr) || !status->ok()) return;
  const toml::table* table = node != nullptr ? node->as_table() : &kEmpty;
  if (table == nullptr) {
    *status =
        InvalidArgumentError(std::string(source) + ":" + std::to_string(node->source().begin.line) +
                             ": " + name + ": expected a table");
    return;
  }
  TableReader reader(*table, name, source, status, catalog);
  read(reader);
  reader.Finish();
}

}  // namespace

std::string ListenAddress::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress out;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return InvalidArgumentError("\"" + std::string(text) + "\" is not [IPV6]:PORT");
    }
    out.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return InvalidArgumentError("\"" + std::string(text) +
                                  "\" is not HOST:PORT (write IPv6 addresses as [::1]:8480)");
    }
    out.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (out.host.empty() || port_text.empty() || ec != std::errc() ||
      end != port_text.data() + port_text.size() || port > 65535) {
    return InvalidArgumentError("\"" + std::string(text) +
                                "\" is not HOST:PORT with a port in 0..65535");
  }
  out.port = static_cast<uint16_t>(port);
  return out;
}

namespace {

// Reads every section of `root` into `*c` (the keys left out keep their values), listing each key
// into `catalog` when it is not null.
Status ReadSections(const toml::table& root, std::string_view source, Config* config,
                    std::vector<ConfigKey>* catalog) {
  Config& c = *config;
  Status status;
  // Each key: its name, its help (one sentence, which config/shingled.toml's comment on the key
  // repeats), its range and its field. A new key needs the call, the field in config.h, the key in
  // config/shingled.toml, and docs/CONFIG.md printed again (`shingled config keys --markdown`).
  Section(root, "server", source, &status, catalog, [&](TableReader& r) {
    r.Listen("listen",
             "Where the HTTP API listens, \"HOST:PORT\" or \"[::1]:8480\" for IPv6; port 0 takes "
             "any free port (the daemon logs the one it got).",
             &c.server.listen);
    r.Int("read_timeout_ms",
          "A request (headers and body) must arrive within this many milliseconds, and an idle "
          "keep-alive connection is closed after it: slow clients are cut off.",
          1, kMaxMs, &c.server.read_timeout_ms);
    r.Int("write_timeout_ms", "A response must be written within this many milliseconds.", 1,
          kMaxMs, &c.server.write_timeout_ms);
    r.Int("shutdown_deadline_ms",
          "On SIGTERM or SIGINT, requests in flight get this many milliseconds to finish, then "
          "they are cancelled.",
          0, kMaxMs, &c.server.shutdown_deadline_ms);
    r.Int("max_sessions",
          "Live connections at most; a connection above the cap gets 503 and is closed.", 1, 100000,
          &c.server.max_sessions);
    r.Int("max_pipelined_requests",
          "Requests read ahead of their responses on one keep-alive connection.", 1, 128,
          &c.server.max_pipelined_requests);
    r.Int("io_threads", "Threads doing network I/O (parsing and sketching run elsewhere).", 1, 64,
          &c.server.io_threads);
    r.Int("read_threads",
          "Threads answering reads (reports, listings, queries), apart from the sketch workers, "
          "so that reads never hold the workers that pages need; 0 means half the cores, at least "
          "one.",
          0, 256, &c.server.read_threads);
    r.Int("read_queue", "Reads waiting for a read thread, at most; more get 503 with Retry-After.",
          1, 100000, &c.server.read_queue);
    r.Int("read_budget_ms",
          "A read still running after this many milliseconds stops and gets 503 with "
          "Retry-After, naming this key; 0: no budget.",
          0, kMaxMs, &c.server.read_budget_ms);
    r.Int("header_timeout_ms",
          "A request's header must arrive within this many milliseconds, and an idle keep-alive "
          "connection is closed after it (shorter than read_timeout_ms, so idle connections do "
          "not hold sessions).",
          1, kMaxMs, &c.server.header_timeout_ms);
    r.Int("max_sessions_per_client",
          "Live connections from one client address at most (loopback counts too); more get 503 "
          "and are closed, without taking any of max_sessions meanwhile: a client reconnecting "
          "in a loop does not lock others out.",
          1, 100000, &c.server.max_sessions_per_client);
    r.Int("max_body_bytes_in_flight",
          "Bytes of request bodies being read or waiting for their answer, across all "
          "connections: each request counts its Content-Length (a chunked body: "
          "limits.max_body_bytes); one that would go over gets 503 with Retry-After before its "
          "body is read.",
          int64_t{1} << 20, int64_t{64} << 30, &c.server.max_body_bytes_in_flight);
    r.Int("min_body_bytes_per_window",
          "A streamed body (a WARC upload) must bring at least this many bytes in every "
          "body_rate_window_ms (time waiting for ingest does not count); a slower client gets "
          "408 and its upload slot is freed.",
          1, int64_t{1} << 30, &c.server.min_body_bytes_per_window);
    r.Int("body_rate_window_ms",
          "The window, in milliseconds, over which min_body_bytes_per_window is counted.", 100,
          kMaxMs, &c.server.body_rate_window_ms);
  });
  Section(root, "limits", source, &status, catalog, [&](TableReader& r) {
    r.Int("max_body_bytes",
          "Largest request body in bytes (a page, or a batch of pages); larger gets 413.", 1,
          int64_t{1} << 30, &c.limits.max_body_bytes);
    r.Int("max_header_bytes", "Largest request line plus headers in bytes; larger gets 431.", 1024,
          int64_t{1} << 20, &c.limits.max_header_bytes);
    r.Int("max_url_bytes", "Longest page URL in bytes; longer gets 400.", 16, 65536,
          &c.limits.max_url_bytes);
    r.Int("max_batch_pages",
          "Most pages in one batch request (application/x-ndjson); more gets 413.", 1, 100000,
          &c.limits.max_batch_pages);
    r.Int("max_warc_body_bytes",
          "Largest WARC body in bytes (POST /v1/pages with Content-Type application/warc), "
          "streamed record by record rather than held in memory; larger gets 413, and the "
          "records read before the limit stay stored.",
          1, int64_t{1} << 40, &c.limits.max_warc_body_bytes);
    r.Int("max_warc_uploads",
          "WARC uploads read at the same time (each on a thread of its own); more get 503.", 1, 64,
          &c.limits.max_warc_uploads);
    r.Int("max_warc_uploads_per_client",
          "WARC uploads one client address may have read at the same time.", 1, 64,
          &c.limits.max_warc_uploads_per_client);
    r.Int("warc_slot_min_bytes_per_second",
          "An upload that finds no slot takes the slot of the slowest upload it contends with if "
          "that one brings fewer bytes a second than this (0: never).",
          0, int64_t{1} << 40, &c.limits.warc_slot_min_bytes_per_second);
  });
  Section(root, "ingest", source, &status, catalog, [&](TableReader& r) {
    r.String("default_sweep",
             "The sweep that pages go to when a request names none, opened at start-up if it is "
             "not open; \"\" means every request must name its sweep (?sweep=NAME).",
             &c.ingest.default_sweep);
    r.Int("retry_after_s", "Retry-After, in seconds, sent with 503 when the ingest queue is full.",
          1, 3600, &c.ingest.retry_after_s);
    r.String("canonicalizer",
             "How HTML becomes tokens: \"streaming\" (one pass in bounded memory, many times "
             "faster) or \"gumbo\" (Gumbo's parse tree, the reference).",
             &c.ingest.canonicalizer, {"gumbo", "streaming"});
    r.Int("workers", "Sketching threads; 0 means one per core.", 0, 256, &c.ingest.workers);
    r.Int("queue_pages",
          "Pages accepted but not yet committed, at most; beyond that requests get 503 + "
          "Retry-After.",
          1, 1000000, &c.ingest.queue_pages);
    r.Int("queue_bytes", "Bytes of accepted, not yet committed page bodies, at most.",
          int64_t{1} << 20, int64_t{64} << 30, &c.ingest.queue_bytes);
    r.Int("batch_pages",
          "Most pages per group commit (one LMDB transaction and one fsync; at most "
          "queue_pages): the store writer takes whatever is queued up to this (the gauge "
          "shingled_store_commit_batch_limit shows its limit).",
          1, 100000, &c.ingest.batch_pages);
    r.Int("min_batch_pages",
          "The smallest commit limit: after a failed commit (a full disk, a full map) the writer "
          "commits at most this many pages for a while (384 full commits), since a smaller "
          "commit dirties fewer pages; with measure_batch_size, the smallest size it tries.",
          1, 100000, &c.ingest.min_batch_pages);
    r.Bool("measure_batch_size",
           "true: the writer commits at one size of a ladder (min_batch_pages, doubled until "
           "batch_pages) and now and then tries the others for a few commits each, keeping "
           "whichever costs least per page (daemon/ingest/batch_sizer.h).",
           &c.ingest.measure_batch_size);
  });
  Section(root, "store", source, &status, catalog, [&](TableReader& r) {
    r.String("backend",
             "Where the store lives: \"lmdb\", the embedded default (an LMDB environment in "
             "`path`), or \"redis-cluster\", one state shared by many daemons on a Redis Cluster "
             "([store.redis], docs/REDIS.md).",
             &c.store.backend, {"lmdb", "redis-cluster"});
    r.String("path", "The store directory; created if missing (the LMDB backend's).",
             &c.store.path);
    r.Double("similar_threshold",
             "Resemblance (from the minhashes) from which a super-shingle or sample candidate is "
             "recorded as \"similar\" (Broder et al. 1997 clustered at 0.5).",
             0.0, 1.0, &c.store.similar_threshold);
    r.Int("common_value_limit",
          "A sample value found in more than this many documents is boilerplate and is not used "
          "to find candidates (it is still stored).",
          1, INT64_MAX, &c.store.common_value_limit);
    r.StringList("cluster_relations",
                 "Relations that merge clusters: any of \"exact\", \"verified\", \"fungible\", "
                 "\"similar\".",
                 {"exact", "verified", "fungible", "similar"}, &c.store.cluster_relations);
    r.Double("verified_threshold",
             "The resemblance from which a candidate is \"verified\": accepted when the "
             "verification estimate reaches it less 2 standard errors, so pairs at the threshold "
             "are accepted ~98% of the time and pairs 0.1 below it ~0.6% at most (k = 256).",
             0.0, 1.0, &c.store.verified_threshold);
    r.Int("max_candidates",
          "Candidates scored per page at most; answers say when some were left out.", 1, UINT32_MAX,
          &c.store.max_candidates);
    r.Int("max_matches",
          "Matches listed per page at most, the strongest (and as many containment ones); the "
          "answer counts the rest in matches_left_out.",
          1, UINT32_MAX, &c.store.max_matches);
    r.Int("template_max_docs",
          "A chunk of text in more than this many documents is template: left out of bytes in "
          "common.",
          1, 1000000, &c.store.template_max_docs);
    r.Double("template_host_share",
             "A chunk of text in more than this share of the pages of one host is template, once "
             "the host has template_min_host_pages URLs.",
             0.0, 1.0, &c.store.template_host_share);
    r.Int("template_min_host_pages",
          "The URLs a host needs before template_host_share applies to it.", 1, 1000000,
          &c.store.template_min_host_pages);
    r.Int("initial_map_size", "Size of the memory map of a store, in bytes; it doubles when full.",
          int64_t{1} << 20, int64_t{1} << 50, &c.store.initial_map_size);
    r.Int("max_map_size", "The map never grows beyond this many bytes.", int64_t{1} << 20,
          int64_t{1} << 50, &c.store.max_map_size);
    r.Bool("durable",
           "false: commits are not fsynced, so a crash may lose acknowledged pages; only for "
           "throw-away stores.",
           &c.store.durable);
    r.Int("max_readers", "Concurrent read transactions at most (LMDB reader slots).", 1, 4096,
          &c.store.max_readers);
    r.Bool("warm_map",
           "true: `shingled serve` maps the store's file in advance on a background thread at "
           "start-up, so that the first lookups take no page faults (at 1M documents: cold "
           "lookups ~2x faster; ~0.2 s for a 4.5 GB file already in the page cache).",
           &c.store.warm_map);
    r.Bool("key_filter",
           "true: the writer keeps in memory a filter of the keys in the posting and fingerprint "
           "indexes (~84 MB at 1M documents, growing with the store), so that the values of new "
           "content cost it no read of the disk's B-trees.",
           &c.store.key_filter);
    r.Int("retention_version_days",
          "Retention: a URL's versions older than this many days are forgotten, but its last "
          "(its present state); 0 keeps every version.",
          0, 365000, &c.store.retention_version_days);
    r.Int("retention_gone_days",
          "Retention: a URL whose last version is gone, dead or a redirect, dated more than this "
          "many days ago, is forgotten with every version; 0 keeps them.",
          0, 365000, &c.store.retention_gone_days);
    r.Int("retention_every_s",
          "Seconds between the starts of two retention passes (one at start-up).", 60,
          int64_t{1} << 31, &c.store.retention_every_s);
    r.Int("retention_step_urls",
          "URLs one retention step (one write transaction between the writer's commits) looks "
          "at; a pass is as many steps as it takes.",
          1, 1000000, &c.store.retention_step_urls);
    r.Table("redis", [&](TableReader& t) {
      t.StringList(
          "nodes",
          "Seed nodes, \"host:port\": any nodes of the cluster; the slot map is read from the "
          "first that answers.",
          {}, &c.store.redis.nodes, [](const std::string& node) {
            StatusOr<ListenAddress> address = ParseListenAddress(node);
            if (!address.ok()) return address.status().message();
            if (address->port == 0) return "\"" + node + "\" has port 0";
            return std::string();
          });
      t.String("password_file",
               "A file whose first line is the cluster's password (AUTH); \"\" for none.",
               &c.store.redis.password_file);
      t.Bool("tls",
             "TLS is not available in this build (Debian 12's hiredis 0.14 has none): true is "
             "refused.",
             &c.store.redis.tls);
      t.Int("min_replicas",
            "A page is acknowledged only once every master it wrote to has it on this many "
            "replicas (WAIT); 0 acknowledges on the master's fsynced append-only file.",
            0, 16, &c.store.redis.min_replicas);
      t.Int("connect_timeout_ms", "How long connecting to a node may take, in milliseconds.", 1,
            kMaxMs, &c.store.redis.connect_timeout_ms);
      t.Int("command_timeout_ms", "How long a node may take to answer a command, in milliseconds.",
            1, kMaxMs, &c.store.redis.command_timeout_ms);
      t.Int("wait_timeout_ms", "How long WAIT waits for the replicas, in milliseconds.", 1, kMaxMs,
            &c.store.redis.wait_timeout_ms);
      t.Bool("allow_unsafe_fsync",
             "The masters must run with appendonly yes and appendfsync always, or the daemon "
             "refuses to start; true accepts less, and a crash of a node may then lose "
             "acknowledged pages.",
             &c.store.redis.allow_unsafe_fsync);
      t.Int("expected_documents",
            "The documents the state is sized for: the posting buckets' bits are chosen from it "
            "when the state is created and are fixed afterwards (redis/FORMAT.md, \"Choosing the "
            "bucket bits\"); a later start with another value is refused.",
            1000, int64_t{1000000000000}, &c.store.redis.expected_documents);
    });
  });
  // The sketch parameters are the store's; left out, a key keeps the store's value (the default
  // of a new store, dedup::SketchParams).
  Section(root, "sketch", source, &status, catalog, [&](TableReader& r) {
    r.OptionalInt("shingle_size", "w: the tokens in a shingle.", 1, 32, &c.sketch.shingle_size);
    r.OptionalInt("feature_groups",
                  "k: the features of a page, each a fingerprint of group_size minhashes.", 1, 32,
                  &c.sketch.feature_groups);
    r.OptionalInt("group_size", "s: the minhashes in a feature (k * s minhashes in all).", 1, 64,
                  &c.sketch.group_size);
    r.OptionalInt("fungible_threshold",
                  "r: the features two pages must share to be fungible, at most k.", 1, 32,
                  &c.sketch.fungible_threshold);
    r.OptionalInt("min_sample_size",
                  "The size of the MIN_s sample, the smallest values of one permutation of the "
                  "shingles.",
                  1, 1024, &c.sketch.min_sample_size);
    r.OptionalInt("supershingle_span",
                  "Super shingles are made over this many smallest values of the MIN_s sample.", 1,
                  1024, &c.sketch.supershingle_span);
    r.OptionalInt("supershingle_window",
                  "A super shingle fingerprints a window of this many consecutive values of the "
                  "span.",
                  1, 1024, &c.sketch.supershingle_window);
    r.OptionalInt("mod_sample_max", "The MOD_2^i sample keeps at most this many values.", 8, 4096,
                  &c.sketch.mod_sample_max);
    r.OptionalInt("verify_sample_size",
                  "k of the verification sample (bottom-k, 4 bytes a value): 0 (none) or 16..480.",
                  0, 480, &c.sketch.verify_sample_size);
    r.OptionalU64("seed", "The seed of the Rabin polynomial and the permutations.", &c.sketch.seed);
    // Ranges of one key; the relations between them (min < max, backup < main <= max) are
    // checked with the sketch parameters when the store is opened.
    r.OptionalString("chunk_input",
                     "What content-defined chunks are cut from: \"canonical_text\" (the tokens, "
                     "each and a space), \"raw_bytes\", or \"none\" for no chunks.",
                     &c.sketch.chunk_input, {"none", "canonical_text", "raw_bytes"});
    r.OptionalInt("chunk_min_size", "T_min: no chunk boundary before this many bytes.", 16,
                  (1 << 20) - 1, &c.sketch.chunk_min_size);
    r.OptionalInt("chunk_max_size",
                  "T_max: a chunk is cut here at the latest, above chunk_min_size.", 17, 1 << 20,
                  &c.sketch.chunk_max_size);
    r.OptionalInt("chunk_main_divisor",
                  "D: a boundary after a byte with probability 1/D, up to chunk_max_size.", 3,
                  1 << 20, &c.sketch.chunk_main_divisor);
    r.OptionalInt("chunk_backup_divisor",
                  "D': the boundary used when none of D's comes by T_max, below D.", 2,
                  (1 << 20) - 1, &c.sketch.chunk_backup_divisor);
  });
  Section(root, "auth", source, &status, catalog, [&](TableReader& r) {
    r.String("token_file",
             "A file whose first line is the bearer token clients send as \"Authorization: "
             "Bearer TOKEN\"; \"\" (the default): no authentication.",
             &c.auth.token_file);
    r.Bool("protect_writes", "With a token file: whether writes (POST) need the token.",
           &c.auth.protect_writes);
    r.Bool("protect_reads",
           "With a token file: whether reads (GET /v1/..., the report pages) need the token.",
           &c.auth.protect_reads);
  });
  Section(root, "logging", source, &status, catalog, [&](TableReader& r) {
    r.String("level", "The least severe level that is logged; off logs nothing.", &c.logging.level,
             {"trace", "debug", "info", "warn", "error", "critical", "off"});
    r.Bool("access_log",
           "The access log: one line per HTTP request, at info level, in access_log_format.",
           &c.logging.access_log);
    r.String("access_log_format",
             "The access log's format: \"text\" (key=value pairs), \"combined\" (the "
             "Apache/NCSA combined log format, for web log tools) or \"json\" (one object per "
             "line, every field).",
             &c.logging.access_log_format, {"text", "combined", "json"});
  });
  Section(root, "crawler", source, &status, catalog, [&](TableReader& r) {
    // Only the shape is checked here (this module depends on nothing); the daemon parses each
    // URL with the crawler's parser at start-up.
    auto http_url = [](const std::string& url) -> std::string {
      const size_t scheme = url.find("://");
      const std::string lower = url.substr(0, scheme == std::string::npos ? 0 : scheme);
      if ((lower != "http" && lower != "https") || url.size() <= scheme + 3) {
        return "\"" + url + "\" is not an absolute http(s) URL";
      }
      return "";
    };
    auto not_empty = [](const std::string& v) -> std::string {
      return v.empty() ? "an empty string" : "";
    };
    r.Bool("enabled",
           "true: `shingled serve` runs scheduled sweeps and accepts POST /v1/crawl (and POST "
           "/v1/crawl/stop).",
           &c.crawler.enabled);
    // Seeds are checked when the crawler starts (daemon::MakeCrawlSetup): a bad one stops the
    // crawler, not the daemon.
    r.StringList("seeds", "Absolute http(s) URLs where each sweep starts.", {}, &c.crawler.seeds);
    r.StringList("allowed_hosts",
                 "Scope: hosts (\"example.org\", \"example.org:8080\") whose links are followed; "
                 "with allowed_prefixes empty too, the seeds' hosts.",
                 {}, &c.crawler.allowed_hosts, not_empty);
    r.StringList("allowed_prefixes",
                 "Scope: URL prefixes whose links are followed, besides those of allowed_hosts.",
                 {}, &c.crawler.allowed_prefixes, http_url);
    r.Int("max_depth", "Links are followed from the seeds and known URLs (depth 0) to this depth.",
          0, 1000, &c.crawler.max_depth);
    r.Int("max_pages", "Page fetches started per sweep at most (robots.txt not counted).", 0,
          1000000000, &c.crawler.max_pages);
    r.Seconds("every",
              "From the start of one scheduled sweep to the start of the next: \"90s\", \"30m\", "
              "\"24h\", \"7d\", a number of seconds, or \"off\" (0: sweeps run only on POST "
              "/v1/crawl).",
              1, 31536000, &c.crawler.every_s);
    r.String("sweep_prefix",
             "Sweeps are named this prefix plus their UTC start time, e.g. "
             "\"crawl-2024-05-01T12:00:00Z\".",
             &c.crawler.sweep_prefix);
    r.String("user_agent",
             "Sent on every request; its product token (the part before '/') is what robots.txt "
             "rules name.",
             &c.crawler.user_agent);
    r.Bool("obey_robots", "Obey robots.txt (RFC 9309).", &c.crawler.obey_robots);
    r.Bool("allow_private_addresses",
           "Allow fetching from private, loopback and link-local addresses.",
           &c.crawler.allow_private_addresses);
    r.StringList("content_types",
                 "Media types accepted for a 2xx answer (parameters ignored); [] accepts every "
                 "type.",
                 {}, &c.crawler.content_types, not_empty);
    r.Int("max_redirects", "Redirect hops followed per fetch.", 0, 50, &c.crawler.max_redirects);
    r.Int("per_host_delay_ms",
          "Milliseconds between two fetches of one host; a robots.txt Crawl-delay can raise it.", 0,
          kMaxMs, &c.crawler.per_host_delay_ms);
    r.Int("max_crawl_delay_ms", "A Crawl-delay above this many milliseconds is capped to it.", 0,
          kMaxMs, &c.crawler.max_crawl_delay_ms);
    r.Int("max_fetches_per_host", "Fetches in flight to one host at once.", 1, 64,
          &c.crawler.max_fetches_per_host);
    r.Int("max_active_fetches", "Fetches in flight in all.", 1, 4096,
          &c.crawler.max_active_fetches);
    r.Int("connect_timeout_ms", "How long connecting to a host may take, in milliseconds.", 1,
          kMaxMs, &c.crawler.connect_timeout_ms);
    r.Int("total_timeout_ms",
          "How long a whole fetch may take, redirects included, in milliseconds.", 1, kMaxMs,
          &c.crawler.total_timeout_ms);
    r.Int("max_body_bytes",
          "Decoded body bytes per fetch at most; a larger page is an error (too_large).", 1,
          int64_t{1} << 30, &c.crawler.max_body_bytes);
    r.String("warc_dir",
             "WARC output: what each sweep fetches goes to WARC 1.1 files in this directory "
             "(created if missing); \"\" (the default): no WARC files.",
             &c.crawler.warc_dir);
    r.Int("warc_max_bytes",
          "A WARC file is closed and the next begun once it holds this many bytes (compressed; "
          "the exchange that crosses the limit stays whole).",
          int64_t{1} << 20, int64_t{1} << 40, &c.crawler.warc_max_bytes);
  });
  if (!status.ok()) return status;
  for (auto&& [key, node] : root) {
    static const std::set<std::string> kSections = {"server", "limits", "ingest",  "store",
                                                    "sketch", "auth",   "logging", "crawler"};
    if (!kSections.count(std::string(key.str()))) {
      return InvalidArgumentError(
          std::string(source) + ":" + std::to_string(node.source().begin.line) + ": " +
          std::string(key.str()) + ": unknown " + (node.is_table() ? "table" : "key"));
    }
  }
  return OkStatus();
}

// The rules between keys, on the values read.
StatusOr<Config> CheckAcrossKeys(const toml::table& root, std::string_view source, Config c) {
  auto line_of = [&](const char* path) {
    const toml::node* node = root.at_path(path).node();
    return node != nullptr ? std::to_string(node->source().begin.line) : std::string("0");
  };
  if (c.crawler.enabled && c.crawler.seeds.empty()) {
    return InvalidArgumentError(std::string(source) + ":" + line_of("crawler.enabled") +
                                ": crawler.seeds: an enabled crawler needs at least one seed");
  }
  for (const char* key : {"sweep_prefix", "user_agent"}) {
    const std::string& value =
        std::string_view(key) == "sweep_prefix" ? c.crawler.sweep_prefix : c.crawler.user_agent;
    // The user agent goes into every request's headers, the prefix into sweep names: a control
    // character (a line break above all) has no place in either.
    if (value.empty() || value.size() > 200 || HasControlCharacter(value)) {
      return InvalidArgumentError(
          std::string(source) + ":" + line_of((std::string("crawler.") + key).c_str()) +
          ": crawler." + key + ": must be 1..200 characters, none of them control characters");
    }
  }
  // A path, or "" for no WARC output.
  if (c.crawler.warc_dir.size() > 4096 || HasControlCharacter(c.crawler.warc_dir)) {
    return InvalidArgumentError(std::string(source) + ":" + line_of("crawler.warc_dir") +
                                ": crawler.warc_dir: a directory path of at most 4096 bytes, no "
                                "control characters");
  }
  // A sweep name (Store::OpenSweep's rule), or "" for none.
  if (c.ingest.default_sweep.size() > 400 || HasControlCharacter(c.ingest.default_sweep)) {
    return InvalidArgumentError(std::string(source) + ":" + line_of("ingest.default_sweep") +
                                ": ingest.default_sweep: a sweep name is at most 400 bytes, none "
                                "of them control characters");
  }
  if (c.ingest.min_batch_pages > c.ingest.batch_pages) {
    return InvalidArgumentError(
        std::string(source) + ":" + line_of("ingest.min_batch_pages") +
        ": ingest.min_batch_pages: " + std::to_string(c.ingest.min_batch_pages) +
        " is above ingest.batch_pages (" + std::to_string(c.ingest.batch_pages) +
        "); make them equal for a fixed commit size");
  }
  if (root.at_path("server.max_body_bytes_in_flight").node() == nullptr) {
    // Left out: at least one body at the limit.
    c.server.max_body_bytes_in_flight =
        std::max(c.server.max_body_bytes_in_flight, c.limits.max_body_bytes);
  } else if (c.server.max_body_bytes_in_flight < c.limits.max_body_bytes) {
    return InvalidArgumentError(
        std::string(source) + ":" + line_of("server.max_body_bytes_in_flight") +
        ": server.max_body_bytes_in_flight: " + std::to_string(c.server.max_body_bytes_in_flight) +
        " is below limits.max_body_bytes (" + std::to_string(c.limits.max_body_bytes) +
        "): a body at the limit could never be read");
  }
  if (c.store.redis.tls) {
    return InvalidArgumentError(std::string(source) + ":" + line_of("store.redis.tls") +
                                ": store.redis.tls: not available in this build (hiredis 0.14 "
                                "has no TLS); reach the nodes over a private network or a tunnel");
  }
  if (c.store.backend == "redis-cluster" && c.store.redis.nodes.empty()) {
    return InvalidArgumentError(std::string(source) + ":" + line_of("store.backend") +
                                ": store.redis.nodes: the redis-cluster backend needs at least "
                                "one seed node (\"host:port\")");
  }
  if (c.store.initial_map_size > c.store.max_map_size) {
    const toml::node* node = root.at_path("store.initial_map_size").node();
    // Left at its default, the map starts at the most it may grow to.
    if (node == nullptr) c.store.initial_map_size = c.store.max_map_size;
  }
  if (c.store.initial_map_size > c.store.max_map_size) {
    const toml::node* node = root.at_path("store.initial_map_size").node();
    const int line = node != nullptr ? static_cast<int>(node->source().begin.line) : 0;
    return InvalidArgumentError(std::string(source) + ":" + std::to_string(line) +
                                ": store.initial_map_size: larger than store.max_map_size");
  }
  return c;
}

}  // namespace

StatusOr<Config> ParseConfig(std::string_view toml_text, std::string_view source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    // toml++ reports syntax errors with exceptions; they stop here, at the module border.
    return InvalidArgumentError(std::string(source) + ":" + std::to_string(e.source().begin.line) +
                                ": " + std::string(e.description()));
  }
  Config c;
  if (Status read = ReadSections(root, source, &c, nullptr); !read.ok()) return read;
  return CheckAcrossKeys(root, source, std::move(c));
}

std::vector<ConfigKey> ConfigKeys(const Config& values) {
  static const toml::table kEmpty;
  Config c = values;
  std::vector<ConfigKey> keys;
  ReadSections(kEmpty, "", &c, &keys).IgnoreError();  // nothing to read: nothing can fail
  return keys;
}

std::vector<std::string> ChangedKeys(const Config& a, const Config& b) {
  const std::vector<ConfigKey> before = ConfigKeys(a), after = ConfigKeys(b);
  std::vector<std::string> out;
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[i].value != after[i].value) out.push_back(before[i].name);
  }
  return out;
}

StatusOr<int64_t> ParseDurationSeconds(std::string_view text) {
  if (text == "off" || text == "0") return int64_t{0};
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  int64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  }
  if (ec != std::errc() || end == text.data() || value < 0 || scale == 0 ||
      value > INT64_MAX / scale) {
    return InvalidArgumentError(
        "\"" + std::string(text) +
        "\" is not a duration like \"90s\", \"30m\", \"24h\", \"7d\" or \"off\"");
  }
  return value * scale;
}

StatusOr<Config> LoadConfigFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgumentError(path + ": is a directory, not a TOML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": " + std::strerror(errno));
  // Read at most one byte past the limit: enough to tell a file over it (or an endless device
  // such as /dev/zero) from one that fits, without reading it all.
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return InvalidArgumentError(path + ": cannot be read: " + std::strerror(errno));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes) {
    return InvalidArgumentError(path + ": over " + std::to_string(kMaxConfigBytes >> 10) +
                                " KiB; a config file is a few KiB of TOML");
  }
  return ParseConfig(text, path);
}

std::vector<std::string> ConfigWarnings(const Config& config) {
  std::vector<std::string> warnings;
  const StoreOptions& s = config.store;
  // The template judge (store/templates.cc) calls a chunk in more than template_max_docs
  // documents template outright; under that, the host-share rule needs more than
  // template_host_share of a host's pages, and a host counts from template_min_host_pages on, so
  // more than share * min_pages documents: never, when max_docs is not above it.
  if (static_cast<double>(s.template_max_docs) <=
      s.template_host_share * static_cast<double>(s.template_min_host_pages)) {
    std::ostringstream w;
    w << "store.template_max_docs = " << s.template_max_docs
      << ", store.template_host_share = " << s.template_host_share
      << ", store.template_min_host_pages = " << s.template_min_host_pages
      << ": the host-share rule of the template judge can never fire (a chunk in more than "
         "template_max_docs documents is template already, and on a host of at least "
         "template_min_host_pages pages fewer documents are never more than "
         "template_host_share of them); only the document limit marks chunks template. Raise "
         "template_max_docs above template_host_share * template_min_host_pages, or lower one "
         "of those two";
    warnings.push_back(w.str());
  }
  return warnings;
}

}  // namespace shingled::config
