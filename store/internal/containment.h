// Containment of a short page in a long one (docs/METHOD.md, "Containment"): candidates
// found through the file-chunk graph (`chunk_docs`, FORMAT.md "Chunks") and estimated by their
// bytes in common, template chunks left out. The MOD samples cannot do it: both are read at the
// larger page's modulus, where a page 100 times shorter keeps about one value in a hundred of its
// sample, often none. Private to store/; store/containment.cc.
#ifndef SHINGLED_STORE_INTERNAL_CONTAINMENT_H_
#define SHINGLED_STORE_INTERNAL_CONTAINMENT_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dedup/chunker.h"
#include "store/internal/schema.h"
#include "store/types.h"

namespace shingled::store::internal {

class TemplateJudge;  // store/internal/templates.h

// How many of max_candidates are kept for containment candidates: a quarter (none when
// max_candidates is 1). Room they do not use goes to the resemblance candidates.
size_t ContainmentRoom(size_t max_candidates);

// A text at least this many times longer than the other is a containment question: a page whose
// whole text is in a document twice as long resembles it at 0.5 at most, below what the
// resemblance relations accept, while for closer lengths they find the pair themselves.
inline constexpr double kContainmentLengthRatio = 2.0;

struct ContainmentCandidate {
  DocId doc = 0;
  CommonBytes common;  // a = the page, b = the document (spans not listed)
};

// Up to `room` documents whose text holds the page's, or whose text the page holds: documents
// that share a chunk with `chunks` (the page's, in order) that is not template by a mark or the
// document limit (their postings are read up to template_max_docs), at least
// kContainmentLengthRatio times longer or shorter than the page (the chunked text), and of which
// the shared chunks make at least half of the shorter text. At most 4 * max_candidates of them
// (the most shared bytes first) have their chunks read (`*truncated`, when not null: true when
// more shared a chunk); those kept are the `room` with the
// largest share of the shorter text in common (template chunks left out, with the host-share rule
// too: `page_host` is the page's, "" for none), then the smaller id. `exclude` (the page's own
// document, 0: none) is never a candidate. Nothing for a page without chunks. `judge` is the
// writer's batch judge (it sees the batch's chunk_docs postings) or a query's own.
Status FindContainment(const StoreOptions& options, TemplateJudge& judge,
                       std::span<const dedup::Chunk> chunks, std::string_view page_host,
                       DocId exclude, size_t room, std::vector<ContainmentCandidate>* out,
                       bool* truncated = nullptr);

// The containment relation of a candidate, from its bytes in common with the page: kContains
// when the page holds kCommonHighShare or more of the document's text, kContainedIn when the
// document holds as much of the page's; nothing when neither or both (a near-identical pair is
// the resemblance relations' question).
std::optional<Relation> ContainmentRelation(const CommonBytes& common);

// The shorter text's share in common: the figure containment candidates are ranked by.
double ShorterShare(const CommonBytes& common);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_CONTAINMENT_H_
