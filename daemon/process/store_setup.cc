#include "daemon/process/store_setup.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "dedup/streaming_canonicalizer.h"
#include "redis/backend.h"

namespace shingled::daemon {
namespace {

redis::RedisStoreOptions RedisStoreOptionsFor(const config::RedisOptions& c,
                                              const dedup::SketchParams& params) {
  redis::RedisStoreOptions o;
  redis::SizeBuckets(static_cast<uint64_t>(c.expected_documents), params, &o);
  o.nodes = c.nodes;
  o.password_file = c.password_file;
  o.min_replicas = static_cast<int>(c.min_replicas);
  o.connect_timeout_ms = static_cast<int>(c.connect_timeout_ms);
  o.command_timeout_ms = static_cast<int>(c.command_timeout_ms);
  o.wait_timeout_ms = static_cast<int>(c.wait_timeout_ms);
  o.allow_unsafe_fsync = c.allow_unsafe_fsync;
  return o;
}

}  // namespace

std::string StoreName(const config::Config& config) {
  if (StoreIsLocal(config)) return config.store.path;
  std::string name = "the redis-cluster at ";
  for (size_t i = 0; i < config.store.redis.nodes.size(); ++i) {
    name.append(i == 0 ? "" : ", ").append(config.store.redis.nodes[i]);
  }
  return name;
}

StatusOr<OpenedStore> OpenStore(const config::Config& config, bool create) {
  dedup::SketchParams params;
  const config::SketchOptions& s = config.sketch;
  auto set = [](const std::optional<int64_t>& value, int* field) {
    if (value) *field = static_cast<int>(*value);
  };
  set(s.shingle_size, &params.shingle_size);
  set(s.feature_groups, &params.feature_groups);
  set(s.group_size, &params.group_size);
  set(s.fungible_threshold, &params.fungible_threshold);
  set(s.min_sample_size, &params.min_sample_size);
  set(s.supershingle_span, &params.supershingle_span);
  set(s.supershingle_window, &params.supershingle_window);
  set(s.mod_sample_max, &params.mod_sample_max);
  set(s.verify_sample_size, &params.verify_sample_size);
  if (s.seed) params.seed = *s.seed;
  // Content-defined chunks, on either backend (docs/REDIS.md, "Chunks and templates").
  const bool redis = !StoreIsLocal(config);
  if (s.chunk_input == "none") params.chunking.input = dedup::ChunkInput::kNone;
  if (s.chunk_input == "canonical_text") params.chunking.input = dedup::ChunkInput::kCanonicalText;
  if (s.chunk_input == "raw_bytes") params.chunking.input = dedup::ChunkInput::kRawBytes;
  auto set_size = [](const std::optional<int64_t>& value, uint32_t* field) {
    if (value) *field = static_cast<uint32_t>(*value);
  };
  set_size(s.chunk_min_size, &params.chunking.min_size);
  set_size(s.chunk_max_size, &params.chunking.max_size);
  set_size(s.chunk_main_divisor, &params.chunking.main_divisor);
  set_size(s.chunk_backup_divisor, &params.chunking.backup_divisor);
  auto context = dedup::SketchContext::Create(params);
  if (!context.ok()) {
    return InvalidArgumentError("[sketch]: " + context.status().message());
  }

  store::StoreOptions options;
  options.similar_threshold = config.store.similar_threshold;
  options.common_value_limit = static_cast<uint64_t>(config.store.common_value_limit);
  options.cluster_relations = 0;
  for (const std::string& r : config.store.cluster_relations) {
    if (r == "exact") options.cluster_relations |= store::kClusterExact;
    if (r == "fungible") options.cluster_relations |= store::kClusterFungible;
    if (r == "similar") options.cluster_relations |= store::kClusterSimilar;
    if (r == "verified") options.cluster_relations |= store::kClusterVerified;
  }
  options.verified_threshold = config.store.verified_threshold;
  options.max_candidates = static_cast<uint32_t>(config.store.max_candidates);
  options.max_matches = static_cast<uint32_t>(config.store.max_matches);
  options.template_max_docs = static_cast<uint64_t>(config.store.template_max_docs);
  options.template_host_share = config.store.template_host_share;
  options.template_min_host_pages = static_cast<uint64_t>(config.store.template_min_host_pages);
  options.initial_map_size = static_cast<uint64_t>(config.store.initial_map_size);
  options.max_map_size = static_cast<uint64_t>(config.store.max_map_size);
  options.durable = config.store.durable;
  options.max_readers = static_cast<unsigned>(config.store.max_readers);
  options.key_filter = config.store.key_filter;
  options.create = create;

  StatusOr<std::unique_ptr<store::Store>> store =
      redis ? redis::OpenRedisClusterStore(RedisStoreOptionsFor(config.store.redis, params),
                                           options, **context)
            : store::Store::Open(config.store.path, options, **context);
  if (!store.ok()) {
    // Only for other parameters: not for a directory that cannot be made, nor another format.
    if (store.status().code() == StatusCode::kFailedPrecondition &&
        store.status().message().find(" was made with ") != std::string::npos) {
      return FailedPreconditionError(
          store.status().message() +
          " (the sketch parameters are fixed when a store is created; the [sketch] section of "
          "the config may only repeat them)");
    }
    return store.status();
  }
  return OpenedStore{std::move(*context), std::move(*store), StoreName(config)};
}

StatusOr<PipelineOptions> IngestPipelineOptions(const config::IngestOptions& ingest) {
  StatusOr<dedup::CanonicalizerKind> canonicalizer =
      dedup::ParseCanonicalizerKind(ingest.canonicalizer);
  if (!canonicalizer.ok()) {
    return InvalidArgumentError("ingest.canonicalizer: " + canonicalizer.status().message());
  }
  PipelineOptions options;
  options.canonicalizer = *canonicalizer;
  options.queue_pages = static_cast<size_t>(ingest.queue_pages);
  options.queue_bytes = static_cast<uint64_t>(ingest.queue_bytes);
  options.batch_pages = static_cast<size_t>(ingest.batch_pages);
  options.min_batch_pages = static_cast<size_t>(ingest.min_batch_pages);
  options.measure_batch_size = ingest.measure_batch_size;
  return options;
}

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError("auth.token_file " + path + ": " + std::strerror(errno));
  std::string line;
  std::getline(in, line);
  const size_t begin = line.find_first_not_of(" \t\r\n");
  const size_t end = line.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos)
    return InvalidArgumentError("auth.token_file " + path + " is empty");
  // A secret others can read is no secret, and a short one can be guessed.
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return NotFoundError("auth.token_file " + path + ": " + std::strerror(errno));
  }
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if ((st.st_mode & (S_IRWXO | S_IWGRP)) != 0) {
    return InvalidArgumentError(
        "auth.token_file " + path + " has mode " + mode +
        ": others may read or change it; chmod 0600 it (or 0640 owned by the service's group)");
  }
  if ((st.st_mode & S_IRGRP) != 0) {
    spdlog::warn("auth.token_file {} has mode {}: its group can read the token", path, mode);
  }
  constexpr size_t kMinTokenBytes = 16;
  const size_t length = end - begin + 1;
  if (length < kMinTokenBytes) {
    return InvalidArgumentError("auth.token_file " + path + ": the token is " +
                                std::to_string(length) + " bytes; at least " +
                                std::to_string(kMinTokenBytes) +
                                " are needed (e.g. `openssl rand -hex 32`)");
  }
  return line.substr(begin, length);
}

}  // namespace shingled::daemon
