// The element classes of dedup/internal/html_elements.h by GumboTag, for the code that walks or
// lexes HTML with Gumbo's tag enumeration (canonicalize_gumbo.cc, html_nesting.cc).
#ifndef SHINGLED_DEDUP_INTERNAL_GUMBO_TAGS_H_
#define SHINGLED_DEDUP_INTERNAL_GUMBO_TAGS_H_

#include <gumbo.h>

#include <string_view>

#include "dedup/internal/html_elements.h"

namespace shingled::dedup::internal {

// A table by Gumbo tag, built once from the tag names.
struct TagClasses {
  TagClasses() {
    for (int t = 0; t < GUMBO_TAG_LAST; ++t) {
      const auto tag = static_cast<GumboTag>(t);
      const std::string_view name = gumbo_normalized_tagname(tag);
      dropped[t] = IsDroppedElement(name);
      phrasing[t] = IsPhrasingElement(name, tag != GUMBO_TAG_UNKNOWN);
    }
  }
  bool dropped[GUMBO_TAG_LAST + 1] = {};
  bool phrasing[GUMBO_TAG_LAST + 1] = {};
};

inline const TagClasses& Classes() {
  static const TagClasses classes;
  return classes;
}

inline bool IsDropped(GumboTag tag) { return Classes().dropped[tag]; }
inline bool IsPhrasing(GumboTag tag) { return Classes().phrasing[tag]; }

}  // namespace shingled::dedup::internal

#endif  // SHINGLED_DEDUP_INTERNAL_GUMBO_TAGS_H_
