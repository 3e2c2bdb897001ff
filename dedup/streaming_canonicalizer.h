// Streaming canonicalization: a page's bytes to its canonical token stream in one pass, as the
// bytes arrive (a libcurl write callback, a WARC record, an HTTP body), without building a tree
// and without ever holding the page.
//
// The result follows the rules of dedup/canonicalize.h (visible text only, the same elements
// dropped, the same elements separating words, the same charset handling) and equals the Gumbo
// reference's token stream on almost every page. The HTML is read with the tokenizer of the HTML
// standard (13.2.5): tags and their attributes, comments (including "<!-->" and "--!>"), bogus
// comments, the doctype, processing instructions and CDATA sections outside SVG/MathML are
// skipped; script, style, iframe, noembed and noframes are raw text and dropped, xmp is raw text
// and kept; title and textarea are RCDATA (kept, references decoded); plaintext runs to the end;
// the script-data escape states are followed so that "<!--<script>...</script>-->" inside a
// script does not end it early; character references are decoded (the standard's 2231 named
// ones, the legacy ones without a semicolon, decimal and hex, the 0x80-0x9F replacement table,
// invalid code points as U+FFFD). Which elements drop text and which separate words comes from
// dedup/internal/html_elements.h, shared with the reference. Of the tree builder, only what
// changes visible text is kept, in counters of fixed size: the depth of <template> and of
// <noscript> (whose content is dropped; scripting is disabled, as in Gumbo, so noscript content
// is markup, and in <head> its text is visible), the depth of <svg>/<math> (CDATA is text there,
// every element separates words, breakout tags leave it), whether a <select> is open (most tags
// are ignored inside), and an open count per element name, so that a tag the tree builder
// ignores (an end tag with nothing to close, a table part outside a table, a second <body>)
// does not break a word. Where the tree builder moves text (foster parenting out of tables) or
// decides by its stack of open elements or a rarer insertion mode (frameset), the two
// canonicalizers differ; every known kind of difference is listed, with the reason, in
// dedup/CANONICALIZER_DIFFERENCES.md.
//
// The token stream depends only on the bytes, never on how they were split into Feed calls.
// Memory per page in flight is bounded by a constant (about kSniffBytes, plus a converter's
// buffer for a slice of at most kConvertSliceBytes of input), whatever the page's size.
//
// Nothing here is safe for concurrent use; use one object per page in flight. The free functions
// are thread-compatible.
#ifndef SHINGLED_DEDUP_STREAMING_CANONICALIZER_H_
#define SHINGLED_DEDUP_STREAMING_CANONICALIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "dedup/canonicalize.h"
#include "dedup/charset.h"
#include "dedup/tokenizer.h"

namespace shingled::dedup {

// Which canonicalizer turns HTML into tokens. Both give the same tokens on almost every page
// (dedup/CANONICALIZER_DIFFERENCES.md); streaming is many times faster and bounded in memory,
// Gumbo is the reference. The choice changes stored sketches only on the rare pages where the
// two differ.
enum class CanonicalizerKind { kStreaming, kGumbo };

// "streaming" or "gumbo", as the setting `canonicalizer` spells it.
std::string_view CanonicalizerKindName(CanonicalizerKind kind);

// Parses the setting's value ("streaming" or "gumbo", exactly). InvalidArgument otherwise.
StatusOr<CanonicalizerKind> ParseCanonicalizerKind(std::string_view name);

// Input is converted to UTF-8 in slices of at most this many bytes, so that one huge Feed call
// does not make a huge UTF-8 copy.
inline constexpr size_t kConvertSliceBytes = 16 * 1024;

// UTF-8 HTML in, visible text out to a Tokenizer, streaming: the counterpart of
// CanonicalizeHtmlGumbo. Calls tokenizer->Break() at every word-separating element edge and
// never calls tokenizer->Finish().
class HtmlTextExtractor {
 public:
  // `tokenizer` must outlive the extractor.
  explicit HtmlTextExtractor(Tokenizer* tokenizer);
  ~HtmlTextExtractor();
  HtmlTextExtractor(const HtmlTextExtractor&) = delete;
  HtmlTextExtractor& operator=(const HtmlTextExtractor&) = delete;

  // Consumes UTF-8 HTML. A chunk may end anywhere, even inside a tag, a reference or a code
  // point. Invalid UTF-8 is passed on to the Tokenizer, which reads it as separators, exactly as
  // U+FFFD from a converter would be read.
  void Feed(std::string_view utf8_html);

  // Ends the document: text held back (an unfinished reference, a lone "<") is sent, and the
  // extractor is reset for another document.
  void Finish();

  // Bytes held between Feed calls (tag name, reference name, lookahead). Bounded by a small
  // constant whatever the input; tests assert it.
  size_t BufferedBytesForTesting() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Sends the visible text of a whole UTF-8 HTML document to `tokenizer`, as HtmlTextExtractor
// does. Does not call Finish(). Never fails.
void CanonicalizeHtmlStreaming(std::string_view utf8_html, Tokenizer* tokenizer);

// A page's bytes in, its tokens out to a TokenSink, streaming: the counterpart of
// CanonicalizePage. The first min(kSniffBytes, page size) bytes are held to decide the page's
// kind and charset exactly as CanonicalizePage does (DetectContentKind, DetectCharset); the rest
// streams through.
//
// Phases: Feed any number of times, then Finish once. After Finish the object may not be fed
// again.
class StreamingCanonicalizer {
 public:
  // `content_type` is the HTTP Content-Type header value (may be empty); it is copied.
  // `sink` must outlive the canonicalizer.
  StreamingCanonicalizer(std::string_view content_type, TokenSink* sink);
  ~StreamingCanonicalizer();
  StreamingCanonicalizer(const StreamingCanonicalizer&) = delete;
  StreamingCanonicalizer& operator=(const StreamingCanonicalizer&) = delete;

  // Consumes the next bytes of the page. Tokens may reach the sink during the call.
  // REQUIRES: Finish() has not been called.
  void Feed(std::string_view bytes);

  // Ends the page: the last tokens reach the sink. Returns what CanonicalizePage would return
  // for the same bytes. Never fails: undecodable bytes become separators.
  // REQUIRES: called once.
  CanonicalizeInfo Finish();

  // Bytes held between Feed calls: the sniffing buffer (at most kSniffBytes, released once the
  // charset is decided) plus the HTML extractor's. Bounded whatever the page.
  size_t BufferedBytesForTesting() const;

 private:
  void Decide();
  void Process(std::string_view bytes);

  const std::string content_type_;
  Tokenizer tokenizer_;
  HtmlTextExtractor html_;
  std::string head_;  // the first bytes, until the kind and charset are decided
  bool decided_ = false;
  bool finished_ = false;
  CanonicalizeInfo info_;
  std::unique_ptr<Utf8Converter> converter_;  // null when the input is already UTF-8
  std::string utf8_;                          // converter output for one slice
  size_t bom_to_skip_ = 0;
};

// Canonicalizes a whole page with the chosen canonicalizer: CanonicalizePage for kGumbo, a
// StreamingCanonicalizer fed once for kStreaming. Never fails.
CanonicalizeInfo CanonicalizePageWith(CanonicalizerKind kind, std::string_view bytes,
                                      std::string_view content_type, TokenSink* sink);

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_STREAMING_CANONICALIZER_H_
