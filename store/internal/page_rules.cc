#include "store/internal/page_rules.h"

#include <string>

namespace shingled::store::internal {

Status ValidatePage(const PageInput& page, const dedup::SketchParams& params) {
  if (page.url.empty()) return InvalidArgumentError("page has an empty URL");
  const StatusClass kind = ClassifyHttpStatus(page.http_status);
  if (!page.redirect_target.empty() && kind != StatusClass::kRedirect) {
    return InvalidArgumentError("page " + page.url + " has a redirect target but status " +
                                std::to_string(page.http_status) + ", not a redirect");
  }
  if (kind != StatusClass::kContent) return OkStatus();  // the sketch is ignored
  if (page.revisit) return OkStatus();  // the sketch is ignored
  const dedup::Sketch& s = page.sketch;
  // Chunks as this store's chunking makes them (FORMAT.md, "Chunks").
  if (!s.chunks.empty()) {
    if (params.chunking.input == dedup::ChunkInput::kNone) {
      return InvalidArgumentError("sketch of " + page.url +
                                  " has chunks; this store's chunking is off");
    }
    uint64_t total = 0;
    for (const dedup::Chunk& c : s.chunks) {
      if (c.length == 0)
        return InvalidArgumentError("sketch of " + page.url + " has a chunk of length 0");
      total += c.length;
    }
    if (params.chunking.input == dedup::ChunkInput::kRawBytes && total != s.bytes) {
      return InvalidArgumentError("sketch of " + page.url + " has chunks of " +
                                  std::to_string(total) + " bytes in all, not its " +
                                  std::to_string(s.bytes) + " bytes");
    }
  }
  if (s.empty()) {
    if (!s.features.empty() || !s.sample.values.empty()) {
      return InvalidArgumentError("sketch of " + page.url + " has features or a sample but no minhashes");
    }
    return OkStatus();
  }
  if (s.minhashes.size() != static_cast<size_t>(params.num_minhashes()) ||
      s.features.size() != static_cast<size_t>(params.feature_groups)) {
    return InvalidArgumentError("sketch of " + page.url + " has " + std::to_string(s.minhashes.size()) +
                                " minhashes and " + std::to_string(s.features.size()) +
                                " features; this store's params make " +
                                std::to_string(params.num_minhashes()) + " and " +
                                std::to_string(params.feature_groups));
  }
  if (s.sample.values.size() > static_cast<size_t>(params.mod_sample_max) || s.sample.log2_modulus > 64) {
    return InvalidArgumentError("sketch of " + page.url + " has a MOD sample over mod_sample_max");
  }
  return OkStatus();
}

}  // namespace shingled::store::internal
