// Candidate search's ranking, written once for every engine's writer (FORMAT.md, "Posting
// lists"): what each posting a page shares with a document is worth, the floor under which a
// document that shares only sample values is not scored, and the ranking itself. An engine reads
// the postings its own way, then asks these functions; they read and write nothing.
#ifndef SHINGLED_STORE_INTERNAL_CANDIDATES_H_
#define SHINGLED_STORE_INTERNAL_CANDIDATES_H_

#include <cstdint>
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

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_CANDIDATES_H_
