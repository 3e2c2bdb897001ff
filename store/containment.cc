// Store: containment candidates through the file-chunk graph 
// (store/internal/containment.h).
#include "store/internal/containment.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "store/internal/chunks.h"
#include "store/internal/store_impl.h"
#include "store/internal/templates.h"

namespace shingled::store::internal {

namespace {

// Below this share of the shorter text in common (counted before templates and edges), a
// document is not worth reading: a text contained whole keeps more, but for its first and last
// chunks (cut elsewhere inside the longer text) on a text of a few chunks.
constexpr double kCandidateShare = 0.5;

uint64_t TotalLength(std::span<const dedup::Chunk> chunks) {
  uint64_t n = 0;
  for (const dedup::Chunk& c : chunks) n += c.length;
  return n;
}

}  // namespace

size_t ContainmentRoom(size_t max_candidates) {
  return max_candidates < 2 ? 0 : std::max<size_t>(1, max_candidates / 4);
}

double ShorterShare(const CommonBytes& common) {
  return common.length_a <= common.length_b ? common.share_a : common.share_b;
}

std::optional<Relation> ContainmentRelation(const CommonBytes& common) {
  switch (common.relation) {
    case CommonRelation::kAContainsB:
      return Relation::kContains;
    case CommonRelation::kBContainsA:
      return Relation::kContainedIn;
    case CommonRelation::kNone:
    case CommonRelation::kNearIdentical:
    case CommonRelation::kOverlap:
      break;
  }
  return std::nullopt;
}

Status FindContainment(const StoreOptions& options, TemplateJudge& judge,
                       std::span<const dedup::Chunk> chunks, std::string_view page_host,
                       DocId exclude, size_t room, std::vector<ContainmentCandidate>* out,
                       bool* truncated) {
  out->clear();
  if (truncated != nullptr) *truncated = false;
  if (chunks.empty() || room == 0) return OkStatus();
  const double page_length = static_cast<double>(TotalLength(chunks));
  // The page's distinct chunks; a chunk that repeats counts once, as a posting names it once.
  std::vector<dedup::Chunk> distinct(chunks.begin(), chunks.end());
  std::sort(distinct.begin(), distinct.end(),
            [](const dedup::Chunk& a, const dedup::Chunk& b) { return a.hash < b.hash; });
  distinct.erase(
      std::unique(distinct.begin(), distinct.end(),
                  [](const dedup::Chunk& a, const dedup::Chunk& b) { return a.hash == b.hash; }),
      distinct.end());
  std::unordered_map<DocId, uint64_t> held;  // bytes of the page's distinct chunks each holds
  for (const dedup::Chunk& c : distinct) {
    StatusOr<const std::vector<DocId>*> docs = judge.DocumentsOf(c.hash);
    if (!docs.ok()) return docs.status();
    if (*docs == nullptr) continue;  // template
    for (DocId d : **docs) {
      if (d != exclude) held[d] += c.length;
    }
  }
  // A document holding less than kCandidateShare of the page may still be a short one the page
  // holds: its length decides, read with its chunks, the most shared bytes first.
  std::vector<std::pair<uint64_t, DocId>> by_held;
  by_held.reserve(held.size());
  for (const auto& [doc, bytes] : held) by_held.emplace_back(bytes, doc);
  std::sort(by_held.begin(), by_held.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // Not fewer: documents that hold the page whole (a licence inside many files) share as many of
  // its bytes as the one it holds, so a smaller bound would miss it behind them; only the length
  // read here tells them apart.
  const size_t reads = std::min<size_t>(by_held.size(), size_t{4} * options.max_candidates);
  if (truncated != nullptr) *truncated = reads < by_held.size();
  struct Kept {
    double share;  // approximate share of the shorter text
    DocId doc;
    std::vector<dedup::Chunk> chunks;  // the document's, read once
  };
  std::vector<Kept> kept;
  std::vector<dedup::Chunk> other;
  {
    std::vector<DocId> docs;
    for (size_t i = 0; i < reads; ++i) docs.push_back(by_held[i].second);
    if (!docs.empty()) SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskChunksOf(docs));
  }
  for (size_t i = 0; i < reads; ++i) {
    const auto [bytes, doc] = by_held[i];
    bool known = false;
    SHINGLED_RETURN_IF_ERROR(judge.reads().Chunks(doc, &other, &known));
    if (!known) continue;
    const double length = static_cast<double>(TotalLength(other));
    const double longer = std::max(length, page_length), shorter = std::min(length, page_length);
    if (longer < kContainmentLengthRatio * shorter) continue;
    const double share = static_cast<double>(bytes) / shorter;
    if (share >= kCandidateShare) kept.push_back(Kept{share, doc, other});
  }
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) {
    return a.share != b.share ? a.share > b.share : a.doc < b.doc;
  });
  // The exact figures, templates left out, for at most twice the room (templates can only lower
  // a share), then the best `room` of them.
  if (kept.size() > 2 * room) kept.resize(2 * room);
  {
    std::vector<DocId> docs;
    for (const Kept& k : kept) docs.push_back(k.doc);
    if (!docs.empty()) SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskUrls(docs));
  }
  for (const Kept& k : kept) {
    StatusOr<std::string> host = judge.HostOfDocument(k.doc);
    if (!host.ok()) return host.status();
    StatusOr<CommonBytes> common = judge.Common(chunks, k.chunks, page_host, *host, 0);
    if (!common.ok()) return common.status();
    out->push_back(ContainmentCandidate{k.doc, std::move(*common)});
  }
  std::stable_sort(out->begin(), out->end(),
                   [](const ContainmentCandidate& a, const ContainmentCandidate& b) {
                     const double sa = ShorterShare(a.common), sb = ShorterShare(b.common);
                     return sa != sb ? sa > sb : a.doc < b.doc;
                   });
  if (out->size() > room) out->resize(room);
  return OkStatus();
}

}  // namespace shingled::store::internal
