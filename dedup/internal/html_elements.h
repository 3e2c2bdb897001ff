// HTML element classes shared by the two canonicalizers
// (dedup/canonicalize_gumbo.cc and dedup/streaming_canonicalizer.cc), so that
// they split words and drop text at the same elements. A change here changes
// the canonical token stream of most pages, and so every stored sketch.
//
// Names are lower-case ASCII, as the HTML tokenizer produces them (and as
// gumbo_normalized_tagname() returns them). Everything here is constant data;
// thread-safe.
#ifndef SHINGLED_DEDUP_INTERNAL_HTML_ELEMENTS_H_
#define SHINGLED_DEDUP_INTERNAL_HTML_ELEMENTS_H_

#include <algorithm>
#include <iterator>
#include <string_view>

namespace shingled::dedup::internal {

// Phrasing content (HTML standard, 3.2.5.2.5) minus <br>, plus the obsolete
// inline elements that pages still use (acronym, big, font, nobr, strike, tt)
// and <image>, which the tree builder turns into <img>. An edge of one of these
// does not separate words: "foo<b>bar</b>" is "foobar". Every other element,
// known or not, separates words: an unknown element is not phrasing content in
// the standard (only autonomous custom elements are, and they are rare in the
// pages we see), and a spurious word break costs less than two words glued
// together. Sorted, for binary search.
inline constexpr std::string_view kPhrasingElements[] = {
    "a",     "abbr",   "acronym", "area",     "audio",  "b",      "bdi",      "bdo",
    "big",   "button", "canvas",  "cite",     "code",   "data",   "datalist", "del",
    "dfn",   "em",     "embed",   "font",     "i",      "iframe", "image",    "img",
    "input", "ins",    "kbd",     "label",    "link",   "map",    "mark",     "math",
    "meta",  "meter",  "nobr",    "noscript", "object", "output", "picture",  "progress",
    "q",     "ruby",   "s",       "samp",     "script", "select", "slot",     "small",
    "span",  "strike", "strong",  "sub",      "sup",    "svg",    "template", "textarea",
    "time",  "tt",     "u",       "var",      "video",  "wbr",
};

// Elements whose whole content is not visible text: it is dropped with its
// descendants. <xmp> is raw text too, but it is rendered, so it is not here;
// <title> is kept as the page's name. Sorted, for binary search.
inline constexpr std::string_view kDroppedElements[] = {"iframe", "noembed", "noframes", "noscript",
                                                        "script", "style",   "template"};

static_assert(std::is_sorted(std::begin(kPhrasingElements), std::end(kPhrasingElements)));
static_assert(std::is_sorted(std::begin(kDroppedElements), std::end(kDroppedElements)));

// True if `name` (lower case) is phrasing content: its edges do not separate
// words.
constexpr bool IsPhrasingElement(std::string_view name) {
  return std::binary_search(std::begin(kPhrasingElements), std::end(kPhrasingElements), name);
}

// True if the content of `name` (lower case) is dropped from the visible text.
constexpr bool IsDroppedElement(std::string_view name) {
  return std::binary_search(std::begin(kDroppedElements), std::end(kDroppedElements), name);
}

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_HTML_ELEMENTS_H_
