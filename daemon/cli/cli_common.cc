#include "daemon/cli/cli_common.h"

#include <iostream>
#include <utility>

namespace shingled::cli {

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

int Fail(std::string_view command, const Status& status, int code) {
  std::cerr << "shingled " << command << ": " << status.message() << "\n";
  return code;
}

}  // namespace shingled::cli
