// SIGHUP: the daemon reads its config file again and applies what can change while it serves
// (docs/OPERATIONS.md, "The daemon": "Lifecycle"; config/shingled.toml):
//   - [auth]: the token file is read again (a rotated token takes effect), protect_writes/reads;
//   - [limits]: every limit, for the requests that begin afterwards;
//   - [logging]: the level and the access log;
//   - [crawler] but `enabled` and `sweep_prefix`: the schedule (`every`, counted from the start
//     of the last sweep) and the settings of the sweeps that start afterwards (seeds, scope,
//     politeness, ...); a running sweep keeps its own;
//   - store.max_map_size: the size the map may grow to, from its next growth (a map full at the
//     old limit takes writes again: Store::WriteRoom).
// Everything else (server, ingest, the rest of store, sketch, crawler.enabled,
// crawler.sweep_prefix) needs a restart: a changed key there is named in the log as ignored until
// then, and the running value stays in force. A file that does not load or validate, or that
// `shingled config check` refuses (cli::MakeServeSetup: a token file that cannot be read or is
// not private, seeds the crawler cannot use), is refused whole: the log says why, and the running
// config stays in force.
//
// Thread-safety: Reload() is called from one thread at a time (the main thread, on SIGHUP); what
// it changes is safe to change while requests are served (Api::SetSettings,
// HttpServer::SetLimits, CrawlScheduler::SetEvery and SetSetup, spdlog's level).
#ifndef SHINGLED_DAEMON_RELOAD_H_
#define SHINGLED_DAEMON_RELOAD_H_

#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "config/config.h"
#include "daemon/api/api.h"
#include "daemon/crawl/crawl_scheduler.h"
#include "daemon/http/http_server.h"

namespace shingled::daemon {

// The Api's reloadable settings from `config`, with the token read from its token file.
ApiSettings ApiSettingsFor(const config::Config& config, std::string token);
// The HTTP server's reloadable limits from [limits].
HttpLimits HttpLimitsFor(const config::LimitsOptions& limits);
// Whether SIGHUP applies the key ("limits.max_body_bytes"; config::ChangedKeys' names).
bool ReloadableKey(std::string_view key);

class ConfigReloader {
 public:
  struct Targets {
    Api* api = nullptr;
    HttpServer* server = nullptr;
    CrawlScheduler* crawl = nullptr;  // null when the crawler is not enabled
    store::Store* store = nullptr;    // for store.max_map_size (its mapped_file())
  };
  // `load` reads the config file with the command line's flags on top, as at start-up; `source`
  // names the file in the log ("" when serve runs without --config: nothing to reload).
  // `running` is the config in force and `token` the token read from its token file. The
  // targets must outlive the reloader.
  ConfigReloader(std::function<StatusOr<config::Config>()> load, std::string source,
                 config::Config running, std::string token, Targets targets);

  // Reloads as the file comment says, logs what changed, what waits for a restart or why the
  // file was refused, and tells systemd (RELOADING=1, then READY=1). Returns the refusal, OK
  // otherwise (the caller need not act on it: it is logged).
  Status Reload();

 private:
  // Everything but the logging and the systemd notifications.
  Status LoadAndApply();

  const std::function<StatusOr<config::Config>()> load_;
  const std::string source_;
  const Targets targets_;
  config::Config running_;
  std::string token_;
};

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_RELOAD_H_
