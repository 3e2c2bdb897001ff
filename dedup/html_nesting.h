// LimitHtmlNesting: bounds how deep a page can make Gumbo's stack of open elements.
//
// Gumbo 0.10 (Debian 12) has no limit on tree depth, and its tree construction costs O(depth) per
// start tag, so a page of 100k nested <div>s takes ~30 s to parse. Every caller of Gumbo on pages
// from outside (the Gumbo canonicalizer, the crawler's link extraction) parses the rewritten text
// this returns instead: start tags past a depth of 256 open elements (or 32 open formatting
// elements) are removed, a phrasing tag outright and any other tag replaced by a space, and a
// dropped element (script, template, noscript, ...) past the limit is removed whole. Pages real
// browsers render are far below the limits; the details are in html_nesting.cc.
//
// Pure computation, thread-safe.
#ifndef SHINGLED_DEDUP_HTML_NESTING_H_
#define SHINGLED_DEDUP_HTML_NESTING_H_

#include <optional>
#include <string>
#include <string_view>

namespace shingled::dedup {

// The rewritten page, or nullopt when nothing had to be removed (parse `html` itself). Linear in
// the size of `html`.
std::optional<std::string> LimitHtmlNesting(std::string_view html);

}  // namespace shingled::dedup

#endif  // SHINGLED_DEDUP_HTML_NESTING_H_
