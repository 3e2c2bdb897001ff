// What a page is to the store, written once for every engine's writer: whether it can be applied
// at all, and what its version is against its URL's versions (FORMAT.md, "Versions"). An engine
// reads the URL's versions its own way, then asks these functions; they read and write nothing.
#ifndef SHINGLED_STORE_INTERNAL_PAGE_VERSIONS_H_
#define SHINGLED_STORE_INTERNAL_PAGE_VERSIONS_H_

#include <string>

#include "base/status.h"
#include "dedup/sketch.h"
#include "store/internal/codec.h"
#include "store/types.h"

namespace shingled::store::internal {

// InvalidArgument naming the page and what is wrong when the store cannot apply it: no URL, a
// redirect target on a status that is not a redirect, or a content page's sketch not made with
// this store's `params` (its minhashes, features, MOD sample, or chunks). A page of another
// status, or a revisit, carries no sketch that counts.
Status ValidatePage(const PageInput& page, const dedup::SketchParams& params);

// The version that a failed fetch or a redirect (`kind`) records, `last` the URL's last version
// (null: none). A failed fetch is not the page's content: the content the URL showed stays live
// (its document). A redirect has none: the URL points elsewhere, and the version names the
// target. Neither keeps the canonical link of a body it does not store.
inline VersionRecord AttemptVersion(const PageInput& page, StatusClass kind,
                                    const VersionRecord* last) {
  const bool redirect = kind == StatusClass::kRedirect;
  VersionRecord v;
  v.sweep = page.sweep;
  v.date = page.date;
  v.http_status = static_cast<uint32_t>(page.http_status);
  v.verdict = redirect ? Verdict::kRedirect : Verdict::kFailed;
  v.doc = !redirect && last != nullptr && LiveVersion(*last) ? last->doc : 0;
  if (redirect) v.redirect_target = page.redirect_target;
  return v;
}

// Whether `attempt` (AttemptVersion's) is a replay of the URL's last version: the same attempt in
// the same sweep with nothing recorded since (a client that posts again after a lost answer).
// Unlike content, an attempt that another version followed is recorded again: it says the content
// (or the target) changed back.
inline bool ReplaysAttempt(const VersionRecord& last, const VersionRecord& attempt) {
  return last.sweep == attempt.sweep && last.verdict == attempt.verdict &&
         last.http_status == attempt.http_status && last.doc == attempt.doc &&
         last.redirect_target == attempt.redirect_target;
}

// Whether version `v`, of the page's sweep, is the page applied before: a dead page (`dead`) the
// same gone status, content the same document (`identical`: the document of the page's bytes, 0
// when none). A failed attempt names the document it kept, not content seen in this sweep.
// An engine asks it of the URL's versions of the page's sweep, newest first.
inline bool ReplaysPage(const VersionRecord& v, const PageInput& page, bool dead,
                        DocId identical) {
  return dead ? (v.verdict == Verdict::kGone &&
                 v.http_status == static_cast<uint32_t>(page.http_status))
              : (v.verdict != Verdict::kFailed && v.doc != 0 && v.doc == identical);
}

// The same for a revisit of document `doc`: a revisit is one more observation of known content,
// so unlike a page, two revisits (or a page and its revisit) at different dates of one sweep are
// two versions; the same one again, at the same date, is a replay.
inline bool ReplaysRevisit(const VersionRecord& v, const PageInput& page, DocId doc) {
  return v.doc == doc && v.date == page.date;
}

// The verdict of a page whose bytes are those of stored document `doc` (and of a revisit of it):
// unchanged when the URL's last version shows the document already, else a duplicate (another
// URL's content).
inline Verdict IdenticalVerdict(const VersionRecord* last, DocId doc) {
  return last != nullptr && last->doc == doc ? Verdict::kUnchanged : Verdict::kDuplicate;
}

// A new document's exact level (FORMAT.md, "Document record"): the owner of its lexical
// fingerprint (the same tokens), else of its shingle fingerprint (the same shingles), is its
// equivalent; it owns each fingerprint it has that had no owner. `lexical_owner` and
// `shingle_owner` are 0 when no document before this one had them.
struct ExactLevel {
  DocId equivalent = 0;  // 0: none, the document holds its own sketch
  Relation relation = Relation::kLexical;
  bool owns_lexical = false;
  bool owns_shingle = false;
};
inline ExactLevel ExactLevelOf(const dedup::Sketch& sketch, DocId lexical_owner,
                               DocId shingle_owner) {
  ExactLevel e;
  e.equivalent = lexical_owner != 0 ? lexical_owner : shingle_owner;
  e.relation = lexical_owner != 0 ? Relation::kLexical : Relation::kShingle;
  e.owns_lexical = sketch.tokens > 0 && lexical_owner == 0;
  e.owns_shingle = sketch.shingles > 0 && shingle_owner == 0;
  return e;
}

// The answer to a revisit whose target URL has no document.
inline Status NoDocumentToRevisit(const PageInput& page) {
  const std::string& target = page.revisit_of.empty() ? page.url : page.revisit_of;
  return NotFoundError("revisit of " + target +
                       ": the store has no document for this URL (the content it refers to was "
                       "never ingested)");
}

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_PAGE_VERSIONS_H_
