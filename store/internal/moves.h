// The one rule for "this URL's content now lives at that URL" (docs/REPORTS.md, "Moves"): the
// change reports (store/reports.cc) and lost and found (store/lost.cc), and so every page and
// answer built on them, judge a content match between a dead URL's last content and a document
// live elsewhere with JudgeContentMove. A recorded redirect is the other evidence; each caller
// checks it before the content. Private to store/; store/moves.cc.
#ifndef SHINGLED_STORE_INTERNAL_MOVES_H_
#define SHINGLED_STORE_INTERNAL_MOVES_H_

#include <cstdint>
#include <string_view>

#include "store/types.h"

namespace shingled::store::internal {

// Resemblance from which a document born or changed when the old URL died is its new home. An
// edited move (a header and links rewritten) keeps 0.5-0.8; the minhash estimate's standard error
// at 0.5 is about 0.055, so 0.4 keeps such moves and leaves out pages that share only navigation.
inline constexpr double kMoveResemblance = 0.4;
// Share of the old text (its chunks, template chunks left out) found in the new document from
// which that document holds the old content. Only bytes in common decide it: the MOD samples'
// containment of a short page overshoots (both are read at the larger page's modulus).
inline constexpr double kMoveContainment = 0.6;
// A document whose chunked text is more than this share template (FORMAT.md, "Templates") is no
// new home by resemblance or containment: a near-empty page of a site resembles every other
// near-empty page of it through the navigation alone.
inline constexpr double kMaxTemplateShare = 0.5;

// Why a document holds a dead URL's content, from the strongest.
enum class MoveEvidence : uint8_t {
  kNone,
  kSameContent,  // the same document, or one lexically or shingle equivalent
  kResemblance,  // resemblance outside the template >= kMoveResemblance
  kContainment,  // bytes in common: the new document holds >= kMoveContainment of the old text
};

// "same_content", "resemblance", "containment" ("" for kNone).
std::string_view MoveEvidenceName(MoveEvidence evidence);

// What is known of one match: `old` is the dead URL's last live content, `candidate` the
// document that may hold it now.
struct ContentMatch {
  bool same_content = false;  // the same sketch holder
  double resemblance = 0;     // the best estimate the caller has (verification sample, minhashes)
  // The bytes in common, a = old, b = candidate, template chunks left out (unknown when either
  // has no chunks: then containment cannot be shown, and the template rule cannot apply).
  CommonBytes common;
};

// The evidence that `match` shows a move, or kNone. The rule, in order: the same content; no
// move to a document that is mostly template (kMaxTemplateShare); resemblance outside the
// template; containment confirmed by bytes in common.
MoveEvidence JudgeContentMove(const ContentMatch& match);

// The resemblance of two texts without the template they have in common, estimated from the
// resemblance of the whole texts and the bytes of `common` (a = one text, b = the other), bytes
// standing in for shingles (one starts at each word). A short page and a long one of the same
// site resemble each other at 0.45 through their navigation alone, and at 0.18 without it.
// `resemblance` itself when the chunks are unknown or share no template chunk.
double ResemblanceOutsideTemplate(double resemblance, const CommonBytes& common);

// Whether `common` shows document b to be mostly template (and its chunks known).
bool MostlyTemplate(const CommonBytes& common);

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_MOVES_H_
