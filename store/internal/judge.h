// The candidate loops, written once for every engine: a new page's candidates judged in rank
// order (matches, "similar" links, unions, and the verdict's near-duplicate half), and a
// similarity query's candidates scored and ordered. Each candidate's judgement is decide.h's; an
// engine finds the candidates and reads their records its own way (CandidateRecords), and records
// the outcomes its own way (PageCandidates). No key layout or transaction is known here.
#ifndef SHINGLED_STORE_INTERNAL_JUDGE_H_
#define SHINGLED_STORE_INTERNAL_JUDGE_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/internal/containment.h"
#include "store/types.h"

namespace shingled::store::internal {

// An engine's reads of candidate records, as the loops below compare them.
class CandidateRecords {
 public:
  virtual ~CandidateRecords() = default;
  // Candidate `id`: false when it has no record to read (a posting filed ahead of its record on
  // an engine whose writers race: not a candidate yet). Otherwise `*page` is the page's (or
  // query's) sketch as compared with this candidate, and `*candidate` the candidate's sketch, or
  // null for a document without one of its own (an exact equivalent). Both stay valid until the
  // next call.
  virtual StatusOr<bool> Read(DocId id, const dedup::Sketch** page,
                              const dedup::Sketch** candidate) = 0;
  // The verification sample of the candidate last read; `*known` false when it has none. Only
  // read when the estimate uses it. Valid until the next call.
  virtual Status ReadVerifySample(DocId id, std::span<const uint32_t>* sample, bool* known) = 0;
};

// What the page loop asks of the writer beyond the reads.
class PageCandidates : public CandidateRecords {
 public:
  // Whether candidate `id` is in the cluster the page has joined (asked only after it joined
  // one). An engine that cannot tell while a batch is judged (its unions are made after) answers
  // false, and every candidate is scored.
  virtual StatusOr<bool> InPagesCluster(DocId id) = 0;
  // Records a "similar" link from the page to the earlier candidate `id` (FORMAT.md, "Links").
  virtual Status Link(DocId id, double resemblance) = 0;
  // Merges the page's cluster and candidate `id`'s.
  virtual Status Join(DocId id) = 0;
};

// A new page's candidates in the order JudgePageCandidates takes them into `*out` (cleared
// first): the documents of `hits` (RankCandidates' points) but its containment candidates, ranked
// with the page's SampleOnlyFloor (of `sample`) into the room max_candidates leaves beside the
// containment candidates, then those. `*truncated`, `*left_out` and `*below_floor` as
// RankCandidates sets them.
void RankPageCandidates(std::vector<std::pair<DocId, uint32_t>>* hits,
                        std::span<const ContainmentCandidate> containment,
                        const dedup::ModSample& sample, size_t max_candidates,
                        std::vector<DocId>* out, bool* truncated, uint64_t* left_out,
                        uint64_t* below_floor);

// Judges `candidates` (ranked, the containment candidates among them) for a new page whose sketch
// is `page`, in order: each match goes to `result->matches`, each link and union to `writer`.
// Once the page has joined a cluster and lists `options.max_matches` matches, a candidate of its
// own cluster can change neither its verdict, nor its cluster, nor the strongest matches listed:
// it is counted in `result->candidates_in_cluster`, not scored, so that a page of a family of
// thousands costs what one of a few costs (candidates of other clusters are still scored: they
// may merge theirs into the page's). Returns whether the page joined a cluster.
StatusOr<bool> JudgePageCandidates(const dedup::Sketch& page, std::span<const DocId> candidates,
                                   std::span<const ContainmentCandidate> containment,
                                   const StoreOptions& options, const dedup::SketchParams& params,
                                   PageCandidates& writer, PageResult* result);

// Scores a similarity query's `candidates` (the containment candidates among them): the documents
// whose resemblance or either containment reaches `query.threshold`, strongest first (resemblance,
// then the larger containment, then the older), at most `query.limit`. A containment candidate
// whose bytes in common make a containment relation is estimated from them; any other from the
// sketches. The results' cluster, URL and bytes in common are left to the engine.
StatusOr<std::vector<SimilarDoc>> ScoreQueryCandidates(
    std::span<const DocId> candidates, std::span<const ContainmentCandidate> containment,
    const QueryOptions& query, const dedup::SketchParams& params, CandidateRecords& records);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_JUDGE_H_
