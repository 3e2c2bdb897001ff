// Fuzzes the config loader (config/config.h): arbitrary bytes as a TOML file. A Config comes out,
// or a clear error: InvalidArgument whose message starts with the source name (and so names
// where the problem is). Besides crashes, sanitizer reports and hangs, it aborts when
// - the error has another code or does not name the source;
// - an accepted Config breaks the ranges the loader promises (checked for a few keys that size
//   buffers: limits, sessions, threads);
// - ChangedKeys finds a difference between a Config and itself.
//
//   build-fuzz/tests/fuzz/config_fuzz -max_total_time=600 -dict=tests/fuzz/config.dict
//       tests/fuzz/corpus/config
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/config.h"

namespace {

void Check(bool ok) {
  if (!ok) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shingled::config;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  shingled::StatusOr<Config> config = ParseConfig(text, "fuzz.toml");
  if (!config.ok()) {
    Check(config.status().code() == shingled::StatusCode::kInvalidArgument);
    Check(config.status().message().substr(0, 9) == "fuzz.toml");
    return 0;
  }
  Check(config->limits.max_body_bytes >= 1 && config->limits.max_body_bytes <= int64_t{1} << 30);
  Check(config->limits.max_header_bytes >= 1024 && config->limits.max_header_bytes <= int64_t{1}
                                                                                          << 20);
  Check(config->server.max_sessions >= 1 && config->server.max_sessions <= 100000);
  Check(config->server.io_threads >= 1 && config->server.io_threads <= 64);
  Check(config->server.max_pipelined_requests >= 1 && config->server.max_pipelined_requests <= 128);
  Check(ChangedKeys(*config, *config).empty());
  // Every address the loader accepted prints as text it accepts again.
  shingled::StatusOr<ListenAddress> listen = ParseListenAddress(config->server.listen.ToString());
  Check(listen.ok() && *listen == config->server.listen);
  return 0;
}
