// Opening the store as the configuration says: the sketch parameters (defaults, or the ones the
// config repeats) and the store options, and the ingest pipeline's options. Shared by `serve`,
// `crawl` and the store subcommands.
#ifndef SHINGLED_DAEMON_STORE_SETUP_H_
#define SHINGLED_DAEMON_STORE_SETUP_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "config/config.h"
#include "daemon/ingest/ingest.h"
#include "dedup/sketch.h"
#include "store/store.h"

namespace shingled::daemon {

struct OpenedStore {
  std::shared_ptr<const dedup::SketchContext> context;
  std::unique_ptr<store::Store> store;
  std::string name;  // StoreName
};

// What the logs and commands call the store: its directory (LMDB), or "the redis-cluster at
// NODE, ..." (the seeds).
std::string StoreName(const config::Config& config);
// Whether the store lives in config.store.path (the LMDB backend's directory).
inline bool StoreIsLocal(const config::Config& config) { return config.store.backend == "lmdb"; }

// Opens the store at config.store.path (or on the Redis Cluster of [store.redis]), or creates it if
// `create` (else NotFound when there is none). When the store was made with other sketch
// parameters, FailedPrecondition names the field and says that the [sketch] section may only repeat
// the store's values. InvalidArgument for parameters that do not validate.
StatusOr<OpenedStore> OpenStore(const config::Config& config, bool create);

// The ingest pipeline's options from [ingest]: its queue and commit bounds (queue_pages,
// queue_bytes, batch_pages, min_batch_pages, measure_batch_size) and the canonicalizer, so that
// every command that stores pages (serve, crawl, ingest) sketches them as the configuration says.
// InvalidArgument for an unknown canonicalizer (the config loader refuses one already).
StatusOr<PipelineOptions> IngestPipelineOptions(const config::IngestOptions& ingest);

// Reads the bearer token: the first line of `path`, surrounding white space removed.
// NotFound if unreadable; InvalidArgument if empty.
StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_STORE_SETUP_H_
