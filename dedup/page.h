// PageSketcher: a page's bytes in, as they arrive, its sketch out when the last byte is in.
//
// The bytes go once through the raw-bytes fingerprint and the canonicalizer, whose tokens go
// straight into a Sketcher: the page is never held (the streaming canonicalizer holds at most
// kSniffBytes to decide the charset; the Gumbo reference needs the whole page and holds it).
// Not safe for concurrent use: one per page in flight. The SketchContext must outlive it.
#ifndef SHINGLED_DEDUP_PAGE_H_
#define SHINGLED_DEDUP_PAGE_H_

#include <memory>
#include <string>
#include <string_view>

#include "dedup/canonicalize.h"
#include "dedup/sketch.h"
#include "dedup/streaming_canonicalizer.h"

namespace shingled::dedup {

class PageSketcher {
 public:
  // `content_type` is the HTTP Content-Type header value, or empty (then the bytes are sniffed).
  PageSketcher(const SketchContext& context, std::string_view content_type,
               CanonicalizerKind kind = CanonicalizerKind::kStreaming);
  ~PageSketcher();
  PageSketcher(const PageSketcher&) = delete;
  PageSketcher& operator=(const PageSketcher&) = delete;

  // Every shingle also goes to `observer` (for exact computations); nullptr for none.
  void set_shingle_observer(ShingleObserver* observer) { sketcher_.set_shingle_observer(observer); }

  // The next bytes of the page. REQUIRES: Finish() has not been called.
  void Feed(std::string_view bytes);

  // The page's sketch; `info`, when given, receives what canonicalization found (kind, charset).
  // REQUIRES: called once.
  Sketch Finish(CanonicalizeInfo* info = nullptr);

 private:
  Sketcher sketcher_;
  const CanonicalizerKind kind_;
  const std::string content_type_;
  std::unique_ptr<StreamingCanonicalizer> streaming_;  // kStreaming
  std::string whole_page_;                             // kGumbo: the reference parses a whole page
};

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_PAGE_H_
