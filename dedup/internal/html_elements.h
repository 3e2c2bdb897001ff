// HTML element classes shared by the two canonicalizers (dedup/canonicalize_gumbo.cc and
// dedup/streaming_canonicalizer.cc), so that they drop text and split words at the same elements.
// A change here changes the canonical token stream of most pages, and so every stored sketch.
//
// Both canonicalizers read these lists (the Gumbo reference through a table by GumboTag),
// by name: lower-case ASCII, as the HTML tokenizer produces names and as
// gumbo_normalized_tagname() returns them. Everything here is constant data; thread-safe.
#ifndef SHINGLED_DEDUP_INTERNAL_HTML_ELEMENTS_H_
#define SHINGLED_DEDUP_INTERNAL_HTML_ELEMENTS_H_

#include <algorithm>
#include <iterator>
#include <string_view>

namespace shingled::dedup::internal {

// Elements whose whole subtree is invisible text: scripts and styles, templates (inert content),
// fallback content shown only without scripting, frames or embedded documents, and head-only
// elements (<title> is kept: it is the page's name). base/link/meta have no text anyway; listed
// so that the rule is explicit. Their edges do not separate words either: the element is as if
// absent ("foo<script>x</script>bar" is "foobar"). Sorted, for binary search.
inline constexpr std::string_view kDroppedElements[] = {"base",    "iframe",   "link",     "meta",
                                                        "noembed", "noframes", "noscript", "script",
                                                        "style",   "template"};

// Phrasing elements: text on either side of their edges is one word, as a browser renders it
// ("foo<b>bar</b>" reads "foobar"). This is the HTML standard's phrasing content restricted to
// elements that lay text out inline with their neighbours:
//   - text-level semantics: a abbr b bdi bdo cite code data del dfn em i ins kbd mark q s samp
//     small span strong sub sup time u var;
//   - obsolete inline formatting still common on old pages: acronym big blink font nobr strike
//     tt spacer;
//   - wbr: only a line-break opportunity inside a word ("super<wbr>califragilistic");
//   - ruby and rb: the base text of a ruby continues the line (rt, rp and rtc, the annotation
//     and its fallback parentheses, are not phrasing here: they are a separate reading);
//   - label, output: inline text.
// Unknown (custom) elements, names the HTML parser does not know, are phrasing too: browsers
// render them inline by default; see IsPhrasingElement. Elements of SVG and MathML (in foreign
// content) always separate words. Left out although the standard calls them phrasing, because
// they are boxes of their own whose content is not part of the surrounding word: img, input,
// button, select, textarea, video, audio, canvas, embed, object, svg, math, meter, progress,
// map, br. Sorted, for binary search.
inline constexpr std::string_view kPhrasingElements[] = {
    "a",      "abbr",   "acronym", "b",   "bdi",  "bdo", "big",  "blink", "cite",   "code",
    "data",   "del",    "dfn",     "em",  "font", "i",   "ins",  "kbd",   "label",  "mark",
    "nobr",   "output", "q",       "rb",  "ruby", "s",   "samp", "small", "spacer", "span",
    "strike", "strong", "sub",     "sup", "time", "tt",  "u",    "var",   "wbr"};

static_assert(std::is_sorted(std::begin(kDroppedElements), std::end(kDroppedElements)));
static_assert(std::is_sorted(std::begin(kPhrasingElements), std::end(kPhrasingElements)));

// True if the content of the HTML element `name` (lower case) is dropped from the visible text.
constexpr bool IsDroppedElement(std::string_view name) {
  return std::binary_search(std::begin(kDroppedElements), std::end(kDroppedElements), name);
}

// True if the edges of the HTML element `name` (lower case) do not separate words. `known`
// says whether the HTML parser knows the name (Gumbo: a tag other than GUMBO_TAG_UNKNOWN);
// unknown elements are phrasing.
constexpr bool IsPhrasingElement(std::string_view name, bool known) {
  return !known ||
         std::binary_search(std::begin(kPhrasingElements), std::end(kPhrasingElements), name);
}

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_HTML_ELEMENTS_H_
