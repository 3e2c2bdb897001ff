#include "store/internal/candidates.h"

#include <algorithm>
#include <cstddef>

#include "store/internal/codec.h"

namespace shingled::store::internal {

uint32_t SampleOnlyFloor(const dedup::ModSample& sample) {
  const auto indexed = std::count_if(sample.values.begin(), sample.values.end(), [&](uint64_t v) {
    return IndexedSampleValue(v, sample.log2_modulus);
  });
  return static_cast<uint32_t>(std::clamp<std::ptrdiff_t>(indexed / 4, 1, 3));
}

void RankCandidates(std::vector<std::pair<DocId, uint32_t>>* hits, size_t max_candidates,
                    std::vector<DocId>* out, bool* truncated, uint64_t* left_out,
                    uint32_t sample_floor, uint64_t* below_floor) {
  std::sort(hits->begin(), hits->end());
  std::vector<std::pair<uint32_t, DocId>> ranked;
  uint64_t below = 0;
  for (size_t i = 0; i < hits->size();) {
    DocId doc = (*hits)[i].first;
    uint32_t points = 0;
    for (; i < hits->size() && (*hits)[i].first == doc; ++i) points += (*hits)[i].second;
    const uint32_t samples = points >> 16;
    const uint32_t others = points & (kSampleHit - 1);
    if (others == 0 && samples < sample_floor) {
      ++below;
      continue;
    }
    ranked.emplace_back(others + samples, doc);
  }
  if (below_floor != nullptr) *below_floor = below;
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  *truncated = ranked.size() > max_candidates;
  if (left_out != nullptr) *left_out = *truncated ? ranked.size() - max_candidates : 0;
  if (ranked.size() > max_candidates) ranked.resize(max_candidates);
  for (auto& [points, doc] : ranked) out->push_back(doc);
}

void QueryCandidatesOf(std::vector<std::pair<DocId, uint32_t>>* hits, DocId exclude,
                       std::span<const DocId> reserved, size_t max_candidates,
                       std::vector<DocId>* out, bool* truncated, uint64_t* left_out) {
  std::erase_if(*hits, [&](const auto& hit) {
    return hit.first == exclude ||
           std::find(reserved.begin(), reserved.end(), hit.first) != reserved.end();
  });
  const size_t room = max_candidates - std::min(reserved.size(), max_candidates);
  out->clear();
  for (const auto& hit : *hits) out->push_back(hit.first);
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  *truncated = false;
  if (left_out != nullptr) *left_out = 0;
  if (out->size() > room) {
    out->clear();
    RankCandidates(hits, room, out, truncated, left_out);
    std::sort(out->begin(), out->end());
  }
}

}  // namespace shingled::store::internal
