// The decision for a page, written once for every backend: what one candidate is to a
// new page (store/FORMAT.md and docs/METHOD.md, "The decision": the 2-of-6 filter, the
// similar relation, the verification sample, the chunk graph's containment), the matches
// of the exact levels, and their order. A backend finds the candidates and reads their records
// its own way, then asks these functions; they read and write nothing.
#ifndef SHINGLED_STORE_DECIDE_H_
#define SHINGLED_STORE_DECIDE_H_

#include <optional>
#include <span>
#include <vector>

#include "dedup/sketch.h"
#include "store/types.h"

namespace shingled::store {

// Whether `page` is applied as a revisit (PageInput::revisit): flagged so and a 2xx answer. A
// revisit of a dead, redirected or failed answer is applied as that answer, like any page of
// its status.
inline bool AppliesAsRevisit(const PageInput& page) {
  return page.revisit && ClassifyHttpStatus(page.http_status) == StatusClass::kContent;
}

// The first look at a candidate that has a sketch: its minhash resemblance to the page, the
// features they share, and whether it is worth judging (`worth_judging`: fungible, or its
// minhash estimate within 0.2 of the lower of the similar and verified thresholds, 4 standard
// errors of the 84 minhashes at J = 0.7; another reaches neither threshold with a chance below
// 1e-4). Only a candidate worth judging has its verification sample read.
struct CandidateScreen {
  double minhash_resemblance = 0;
  int features = 0;
  bool worth_judging = false;
};
CandidateScreen ScreenCandidate(const dedup::Sketch& page, const dedup::Sketch& candidate,
                                const StoreOptions& options, const dedup::SketchParams& params);

// Whether the decision reads candidates' verification samples for this page at all.
bool UsesVerifySample(const dedup::Sketch& page, const dedup::SketchParams& params);

// What a candidate is to the page.
struct CandidateDecision {
  std::optional<Match> match;  // none: not a match
  bool joins = false;          // the page's cluster and the candidate's merge
  bool link = false;           // a "similar" link to record under the page (FORMAT.md, "Links")
};

// Judges candidate `id` for `page`. `candidate`: its sketch, or null for a document without one
// of its own (an exact equivalent: only a containment candidate can be such). `screen`:
// ScreenCandidate's answer (unused when `candidate` is null). `verify` and `verify_known`: the
// candidate's verification sample when it was read (known false: none, or not read).
// `containment`: its bytes in common with the page when the chunk graph proposed it, else null;
// a candidate no resemblance relation takes is then a containment match that joins no cluster
// (a licence inside many files would chain them).
CandidateDecision JudgeCandidate(DocId id, const dedup::Sketch& page,
                                 const dedup::Sketch* candidate, const CandidateScreen& screen,
                                 std::span<const uint32_t> verify, bool verify_known,
                                 const CommonBytes* containment, const StoreOptions& options,
                                 const dedup::SketchParams& params);

// The match of a page whose raw bytes are those of document `doc`.
Match IdenticalMatch(DocId doc, const dedup::Sketch& page);
// The match of a page lexically (kLexical) or shingle (kShingle) equivalent to `doc`, whose
// sketch is `other`.
Match EquivalentMatch(DocId doc, Relation relation, const dedup::Sketch& page,
                      const dedup::Sketch& other);

// Orders a page's matches strongest first: the exact levels, then verified, fungible, similar
// (the containment relations after them), each by resemblance, stable otherwise.
void SortMatches(std::vector<Match>* matches);

// Keeps the first `max_matches` of `*matches` (sorted by SortMatches) of the exact and
// resemblance relations, and the first `max_matches` of the containment ones (which sort after
// them: near-copies must not crowd them out), and returns how many it dropped: a page lists its
// strongest matches, and only those get bytes in common.
uint64_t LimitMatches(size_t max_matches, std::vector<Match>* matches);

}  // namespace shingled::store

#endif  // SHINGLED_STORE_DECIDE_H_
