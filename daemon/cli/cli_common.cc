#include "daemon/cli/cli_common.h"

#include <iostream>
#include <utility>

#include "daemon/process/store_setup.h"
#include "daemon/wire/http_query.h"

namespace shingled::cli {

CLI::Validator UrlArgument() {
  return CLI::Validator(
      [](std::string& url) {
        StatusOr<std::string> normalized = daemon::PageUrl(url, kNoUrlLimit);
        if (!normalized.ok()) return std::string(normalized.status().message());
        url = std::move(*normalized);
        return std::string();
      },
      "URL");
}

StatusOr<config::Config> LoadConfig(const std::string& config_file, const std::string& store_dir) {
  config::Config config;
  if (!config_file.empty()) {
    StatusOr<config::Config> loaded = config::LoadConfigFile(config_file);
    if (!loaded.ok()) return loaded.status();
    config = std::move(*loaded);
  }
  if (!store_dir.empty()) config.store.path = store_dir;
  return config;
}

StatusOr<ServeSetup> MakeServeSetup(const config::Config& config, CrawlerProblem crawler_problem) {
  ServeSetup setup;
  if (!config.auth.token_file.empty()) {
    StatusOr<std::string> token = daemon::ReadTokenFile(config.auth.token_file);
    if (!token.ok()) return token.status();
    setup.token = std::move(*token);
  }
  if (config.crawler.enabled) {
    StatusOr<daemon::CrawlSetup> crawler = daemon::MakeCrawlSetup(config.crawler);
    if (crawler.ok()) {
      setup.crawler = std::move(*crawler);
    } else if (crawler_problem == CrawlerProblem::kRefusesTheConfig) {
      return crawler.status();
    } else {
      setup.crawler_error = crawler.status();
    }
  }
  return setup;
}

int Fail(std::string_view command, const Status& status, int code) {
  std::cerr << "shingled " << command << ": " << status.message() << "\n";
  return code;
}

}  // namespace shingled::cli
