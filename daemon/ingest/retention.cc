#include "daemon/ingest/retention.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace shingled::daemon {

StatusOr<store::RetentionStep> RunRetentionPass(
    store::Store& store, const store::RetentionOptions& rules,
    const std::function<bool()>& keep_going, Metrics* metrics,
    const std::function<void(const store::RetentionStep&)>& on_step) {
  store::RetentionOptions options = rules;
  options.now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  store::RetentionStep sum;
  while (keep_going == nullptr || keep_going()) {
    StatusOr<store::RetentionStep> step = store.ApplyRetention(options);
    if (!step.ok()) return step.status();
    if (metrics != nullptr) metrics->RetentionStepped(*step);
    sum.urls_examined += step->urls_examined;
    sum.versions += step->versions;
    sum.urls += step->urls;
    sum.documents += step->documents;
    sum.documents_kept += step->documents_kept;
    sum.clusters_split += step->clusters_split;
    if (on_step) on_step(sum);
    if (step->pass_done) {
      sum.pass_done = true;
      sum.record = step->record;
      if (metrics != nullptr) metrics->RetentionPassDone();
      break;
    }
  }
  return sum;
}

RetentionRunner::RetentionRunner(store::Store* store, Metrics* metrics,
                                 RetentionSchedule schedule)
    : store_(store), metrics_(metrics), schedule_(std::move(schedule)) {}

void RetentionRunner::Start() { thread_ = std::thread([this] { Run(); }); }

void RetentionRunner::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RetentionRunner::Run() {
  pthread_setname_np(pthread_self(), "retention");
  auto keep_going = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return !stopping_;
  };
  while (keep_going()) {
    StatusOr<store::RetentionStep> pass =
        RunRetentionPass(*store_, schedule_.rules, keep_going, metrics_);
    if (!pass.ok()) {
      spdlog::warn("retention: {} (tried again in {} s)", pass.status().ToString(),
                   schedule_.every.count());
    } else if (pass->pass_done) {
      spdlog::info(
          "retention pass: {} URLs looked at; removed {} versions, {} URLs, {} documents ({} kept "
          "for documents sharing their sketch), {} clusters split; forget record {}",
          pass->urls_examined, pass->versions, pass->urls, pass->documents, pass->documents_kept,
          pass->clusters_split, pass->record);
    }
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, schedule_.every, [this] { return stopping_; });
  }
}

}  // namespace shingled::daemon
