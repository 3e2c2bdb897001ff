#include "daemon/reload.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <optional>
#include <utility>
#include <vector>

#include "daemon/cli/cli_common.h"
#include "daemon/crawl/crawl_sweep.h"
#include "daemon/process/process.h"
#include "store/mapped_file.h"

namespace shingled::daemon {
namespace {

std::string Join(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) out += (out.empty() ? "" : ", ") + key;
  return out;
}

// RELOADING=1 carries CLOCK_MONOTONIC in microseconds, as sd_notify(3) asks since systemd 253
// (older ones ignore it).
std::string ReloadingState() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const int64_t usec = int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
  return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec);
}

}  // namespace

ApiSettings ApiSettingsFor(const config::Config& config, std::string token) {
  ApiSettings s;
  s.max_url_bytes = static_cast<size_t>(config.limits.max_url_bytes);
  s.max_body_bytes = static_cast<size_t>(config.limits.max_body_bytes);
  s.max_batch_pages = static_cast<size_t>(config.limits.max_batch_pages);
  s.max_warc_uploads = static_cast<size_t>(config.limits.max_warc_uploads);
  s.max_warc_uploads_per_client = static_cast<size_t>(config.limits.max_warc_uploads_per_client);
  s.warc_slot_min_bytes_per_second =
      static_cast<double>(config.limits.warc_slot_min_bytes_per_second);
  s.token = std::move(token);
  s.protect_writes = config.auth.protect_writes;
  s.protect_reads = config.auth.protect_reads;
  return s;
}

HttpLimits HttpLimitsFor(const config::LimitsOptions& limits) {
  HttpLimits l;
  l.max_header_bytes = static_cast<uint64_t>(limits.max_header_bytes);
  l.max_body_bytes = static_cast<uint64_t>(limits.max_body_bytes);
  l.max_streamed_body_bytes = static_cast<uint64_t>(limits.max_warc_body_bytes);
  return l;
}

bool ReloadableKey(std::string_view key) {
  if (key.starts_with("auth.") || key.starts_with("limits.") || key.starts_with("logging.")) {
    return true;
  }
  // The map's limit applies at its next growth; the rest of [store] is fixed at open.
  if (key == "store.max_map_size") return true;
  // The crawler's thread and the names of its sweeps are set up at start-up.
  return key.starts_with("crawler.") && key != "crawler.enabled" && key != "crawler.sweep_prefix";
}

ConfigReloader::ConfigReloader(std::function<StatusOr<config::Config>()> load, std::string source,
                               config::Config running, std::string token, Targets targets)
    : load_(std::move(load)),
      source_(std::move(source)),
      targets_(std::move(targets)),
      running_(std::move(running)),
      token_(std::move(token)) {}

Status ConfigReloader::Reload() {
  NotifySystemd(ReloadingState()).IgnoreError();  // best effort, as READY=1 at start-up
  Status status = LoadAndApply();
  if (!status.ok()) {
    spdlog::error("SIGHUP: config not reloaded; the running config stays in force: {}",
                  status.message());
  }
  NotifySystemd("READY=1").IgnoreError();
  return status;
}

Status ConfigReloader::LoadAndApply() {
  if (source_.empty()) {
    spdlog::info("SIGHUP: serve runs without --config: nothing to reload");
    return OkStatus();
  }
  StatusOr<config::Config> loaded = load_();
  if (!loaded.ok()) return loaded.status();
  for (const std::string& warning : config::ConfigWarnings(*loaded)) {
    spdlog::warn("SIGHUP: {}: {}", source_, warning);
  }
  // What the reload would put in force: the reloadable keys from the file, the rest as running.
  config::Config next = running_;
  next.auth = loaded->auth;
  next.limits = loaded->limits;
  next.logging = loaded->logging;
  next.crawler = loaded->crawler;
  next.crawler.enabled = running_.crawler.enabled;
  next.crawler.sweep_prefix = running_.crawler.sweep_prefix;
  next.store.max_map_size = loaded->store.max_map_size;

  // Everything that can fail, before anything changes.
  if (next.store.max_map_size < running_.store.initial_map_size) {
    std::string message = source_;
    message.append(": store.max_map_size: ")
        .append(std::to_string(next.store.max_map_size))
        .append(" is below the running store.initial_map_size ")
        .append(std::to_string(running_.store.initial_map_size));
    return InvalidArgumentError(message);
  }
  // The check `shingled config check` makes, on what would be in force.
  StatusOr<cli::ServeSetup> checked =
      cli::MakeServeSetup(next, cli::CrawlerProblem::kRefusesTheConfig);
  if (!checked.ok()) return checked.status();
  std::string token = std::move(checked->token);
  std::optional<CrawlSetup> setup;
  if (targets_.crawl != nullptr) {
    if (next.crawler.seeds.empty()) {
      return InvalidArgumentError(source_ +
                                  ": crawler.seeds: the running crawler needs at least one seed");
    }
    setup = std::move(checked->crawler);
  }

  const std::vector<std::string> applied = config::ChangedKeys(running_, next);
  const std::vector<std::string> ignored = config::ChangedKeys(next, *loaded);
  const bool token_changed = token != token_;
  bool crawler_changed = false, every_changed = false;
  for (const std::string& key : applied) {
    crawler_changed |= key.starts_with("crawler.");
    every_changed |= key == "crawler.every";
  }

  spdlog::default_logger()->set_level(spdlog::level::from_str(next.logging.level));
  if (targets_.api != nullptr) targets_.api->SetSettings(ApiSettingsFor(next, token));
  if (targets_.server != nullptr) {
    targets_.server->SetLimits(HttpLimitsFor(next.limits));
    targets_.server->set_access_log(next.logging.access_log);
    targets_.server->set_access_log_format(
        ParseAccessLogFormat(next.logging.access_log_format).value_or(AccessLogFormat::kText));
  }
  store::MappedFile* mapped_file =
      targets_.store != nullptr ? targets_.store->mapped_file() : nullptr;  // null on the cluster
  if (mapped_file != nullptr && next.store.max_map_size != running_.store.max_map_size) {
    // Checked above against initial_map_size, the only refusal.
    mapped_file->SetMaxMapSize(static_cast<uint64_t>(next.store.max_map_size)).IgnoreError();
  }
  if (targets_.crawl != nullptr && crawler_changed) {
    targets_.crawl->SetSetup(std::move(*setup));
    if (every_changed) targets_.crawl->SetEvery(next.crawler.every_s);
  }
  running_ = std::move(next);
  token_ = std::move(token);

  std::string what = Join(applied);
  // Never the token itself.
  if (token_changed) what += std::string(what.empty() ? "" : ", ") + "the auth token";
  if (what.empty()) {
    spdlog::info("SIGHUP: reloaded {}: nothing changed", source_);
  } else {
    spdlog::info("SIGHUP: reloaded {}: changed {}{}", source_, what,
                 crawler_changed && targets_.crawl != nullptr
                     ? " (a running crawler sweep keeps its settings; the next one takes them)"
                     : "");
  }
  if (!ignored.empty()) {
    spdlog::warn(
        "SIGHUP: {} changed in {} but cannot change without a restart: ignored until "
        "then, the running values stay in force",
        Join(ignored), source_);
  }
  return OkStatus();
}

}  // namespace shingled::daemon
