// Candidate search's ranking, written once for every engine's writer (FORMAT.md, "Posting
// lists"): what each posting a page shares with a document is worth, the floor under which a
// document that shares only sample values is not scored, and the ranking itself. An engine reads
// the postings its own way, then asks these functions; they read and write nothing.
#ifndef SHINGLED_STORE_INTERNAL_CANDIDATES_H_
#define SHINGLED_STORE_INTERNAL_CANDIDATES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "dedup/sketch.h"
#include "store/types.h"

namespace shingled::store::internal {

// What one posting read by candidate search is worth to its document (RankCandidates): 4 points
// a shared feature, 1 a shared super shingle or sample value. A sample value's point is kept in
// the high half, so that a candidate sharing nothing but sample values can be told.
inline constexpr uint32_t kFeatureHit = 4;
inline constexpr uint32_t kSuperShingleHit = 1;
inline constexpr uint32_t kSampleHit = uint32_t{1} << 16;

// The writer's floor for a candidate that shares no feature and no super shingle with the page:
// at least this many of the page's `indexed` sample values (FORMAT.md, "Posting lists"). Pages
// of one site share its template's few sample values (a 45-word header and footer on a 650-word
// page: ~1.75 of ~25, mostly 1 or 2) and would each be scored and dropped. A page of resemblance
// 0.5 of like size shares each value with probability 2J / (1 + J) = 0.67, so it falls under a
// floor of 3 of 12 values with probability ~5e-4, and also has no super shingle in common with
// ~0.1 (sketch.h): ~5e-5. A short page (fewer than 12 values) has a lower floor, down to 1.
// `sample` is the page's: its indexed values (IndexedSampleValue) are counted.
uint32_t SampleOnlyFloor(const dedup::ModSample& sample);

// Ranks candidate documents from `hits`, one (document, kFeatureHit, kSuperShingleHit or
// kSampleHit) per posting read: appends to `*out` the documents in decreasing order of their
// summed points (the older first on a tie), at most `max_candidates`, and sets `*truncated` when
// there were more (and `*left_out`, if given, to how many were left out). A document that shares
// only sample values, fewer than `sample_floor`, is not ranked: `*below_floor`, if given, counts
// them. Sorts `*hits`: a page reads a few dozen postings, for which a sorted vector beats a hash
// map.
void RankCandidates(std::vector<std::pair<DocId, uint32_t>>* hits, size_t max_candidates,
                    std::vector<DocId>* out, bool* truncated, uint64_t* left_out = nullptr,
                    uint32_t sample_floor = 1, uint64_t* below_floor = nullptr);

// At most this many postings of a feature or super shingle are read, by the writers and by
// queries (a sample value's stop at common_value_limit).
inline size_t FeatureReadCap(const StoreOptions& options) { return 4 * options.common_value_limit; }

// A similarity query's candidates come from its indexed sample values' postings (a value listing
// more than common_value_limit documents unused), and from its features' only when this says so:
// with fewer than kEnoughSampleValues usable values, or when the sample values found more than
// `max_candidates` postings (a feature's 4 points then decide which candidates are kept). A page
// that shares a feature with the query (14 equal minhashes: resemblance ~0.7 or more) holds each
// of the query's usable values with probability ~0.8 or more, so 8 usable values miss it with
// probability ~0.2^8 (~3e-6).
inline constexpr size_t kEnoughSampleValues = 8;
inline bool QueryReadsFeatures(size_t usable_values, size_t sample_hits, size_t max_candidates) {
  return usable_values < kEnoughSampleValues || sample_hits > max_candidates;
}

// A similarity query's candidates from the postings it read (`hits`, as RankCandidates takes
// them), into `*out` in id order: the documents found but `exclude` and the `reserved` ones (the
// containment candidates, whose room is kept out of max_candidates); when there are more than
// that room, the best ranked. `*truncated` and `*left_out` (if given) as RankCandidates sets them.
void QueryCandidatesOf(std::vector<std::pair<DocId, uint32_t>>* hits, DocId exclude,
                       std::span<const DocId> reserved, size_t max_candidates,
                       std::vector<DocId>* out, bool* truncated, uint64_t* left_out);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_CANDIDATES_H_
