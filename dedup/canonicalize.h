// Canonicalization: a page's bytes to its canonical token stream.
//
// HTML is reduced to its visible text in document order: the text of script, style, template,
// noscript, noembed, noframes, iframe and head-only elements other than <title> is dropped, and so
// are comments, the doctype and processing instructions; character references are decoded; every
// element that is not phrasing content (p, div, li, td, br, h1, ...) separates words, while
// phrasing elements (a, b, i, span, em, ...) do not ("foo<b>bar</b>" is one token "foobar").
// The text then goes through the Tokenizer (dedup/tokenizer.h). Plain text skips the parser.
// Binary content has no tokens.
//
// The Gumbo canonicalizer builds a whole parse tree; it is the reference implementation.
//
// Functions here are pure and thread-compatible.
#ifndef SHINGLED_DEDUP_CANONICALIZE_H_
#define SHINGLED_DEDUP_CANONICALIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "dedup/charset.h"
#include "dedup/tokenizer.h"

namespace shingled::dedup {

// What canonicalization found out about a page.
struct CanonicalizeInfo {
  ContentKind kind = ContentKind::kBinary;
  std::string charset;  // canonical encoding name; empty for binary content
  CharsetSource charset_source = CharsetSource::kDefault;
  uint64_t tokens = 0;
};

// Sends the visible text of an HTML document, already in UTF-8, to `tokenizer` through Gumbo's
// parse tree, calling tokenizer->Break() at every word-separating element edge. Does not call
// Finish(). Gumbo never fails on any input; nor does this.
void CanonicalizeHtmlGumbo(std::string_view utf8_html, Tokenizer* tokenizer);

// Canonicalizes a whole page: detects its kind and charset (dedup/charset.h) from `content_type`
// (an HTTP Content-Type header value, may be empty) and the bytes, converts it to UTF-8 and sends
// its tokens to `sink`. Never fails: undecodable bytes become separators.
CanonicalizeInfo CanonicalizePage(std::string_view bytes, std::string_view content_type,
                                  TokenSink* sink);

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_CANONICALIZE_H_
