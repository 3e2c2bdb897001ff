#include "dedup/internal/html_tags.h"

#include "dedup/internal/html_elements.h"

namespace shingled::dedup::internal {
namespace {

struct TagSpec {
  std::string_view name;
  Tag tag;
  uint8_t flags;
};

// Elements with behaviour or flags of their own; the word-break class comes from
// html_elements.h.
constexpr TagSpec kTagSpecs[] = {
    {"area", Tag::kOther, kVoid},
    {"b", Tag::kOther, kBreakout},
    {"base", Tag::kOther, kHeadOk | kVoid},
    {"basefont", Tag::kOther, kHeadOk | kHeadNoscriptOk | kVoid},
    {"bgsound", Tag::kOther, kHeadOk | kHeadNoscriptOk | kVoid},
    {"big", Tag::kOther, kBreakout},
    {"blockquote", Tag::kOther, kBreakout},
    {"body", Tag::kBody, kBreakout},
    {"br", Tag::kBr, kBreakout | kVoid},
    {"caption", Tag::kOther, kTablePart},
    {"center", Tag::kOther, kBreakout},
    {"code", Tag::kOther, kBreakout},
    {"col", Tag::kOther, kVoid | kTablePart},
    {"colgroup", Tag::kOther, kTablePart},
    {"dd", Tag::kOther, kBreakout},
    {"div", Tag::kOther, kBreakout},
    {"dl", Tag::kOther, kBreakout},
    {"dt", Tag::kOther, kBreakout},
    {"em", Tag::kOther, kBreakout},
    {"embed", Tag::kOther, kBreakout | kVoid},
    {"frame", Tag::kOther, kVoid},
    {"frameset", Tag::kFrameset, 0},
    {"h1", Tag::kOther, kBreakout},
    {"h2", Tag::kOther, kBreakout},
    {"h3", Tag::kOther, kBreakout},
    {"h4", Tag::kOther, kBreakout},
    {"h5", Tag::kOther, kBreakout},
    {"h6", Tag::kOther, kBreakout},
    {"head", Tag::kHead, kBreakout | kHeadOk},
    {"hr", Tag::kOther, kBreakout | kVoid},
    {"html", Tag::kHtml, kHeadOk},
    {"i", Tag::kOther, kBreakout},
    {"iframe", Tag::kIframe, 0},
    {"image", Tag::kOther, kVoid},
    {"img", Tag::kOther, kBreakout | kVoid},
    {"input", Tag::kInput, kVoid},
    {"keygen", Tag::kKeygen, kVoid},
    {"li", Tag::kOther, kBreakout},
    {"link", Tag::kOther, kHeadOk | kHeadNoscriptOk | kVoid},
    {"listing", Tag::kOther, kBreakout},
    {"math", Tag::kMath, 0},
    {"menu", Tag::kOther, kBreakout},
    {"meta", Tag::kOther, kBreakout | kHeadOk | kHeadNoscriptOk | kVoid},
    {"nobr", Tag::kOther, kBreakout},
    {"noembed", Tag::kNoembed, 0},
    {"noframes", Tag::kNoframes, kHeadOk | kHeadNoscriptOk},
    {"noscript", Tag::kNoscript, kHeadOk},
    {"ol", Tag::kOther, kBreakout},
    {"optgroup", Tag::kOptgroup, 0},
    {"option", Tag::kOption, 0},
    {"p", Tag::kOther, kBreakout},
    {"param", Tag::kOther, kVoid},
    {"plaintext", Tag::kPlaintext, 0},
    {"pre", Tag::kOther, kBreakout},
    {"ruby", Tag::kOther, kBreakout | kCloser},
    {"s", Tag::kOther, kBreakout},
    {"script", Tag::kScript, kHeadOk},
    {"select", Tag::kSelect, 0},
    {"small", Tag::kOther, kBreakout},
    {"source", Tag::kOther, kVoid},
    {"span", Tag::kOther, kBreakout},
    {"strike", Tag::kOther, kBreakout},
    {"strong", Tag::kOther, kBreakout},
    {"style", Tag::kStyle, kHeadOk | kHeadNoscriptOk},
    {"sub", Tag::kOther, kBreakout},
    {"sup", Tag::kOther, kBreakout},
    {"svg", Tag::kSvg, 0},
    {"table", Tag::kTable, kBreakout},
    {"tbody", Tag::kOther, kTablePart},
    {"td", Tag::kOther, kTablePart},
    {"template", Tag::kTemplate, kHeadOk},
    {"textarea", Tag::kTextarea, 0},
    {"tfoot", Tag::kOther, kTablePart},
    {"th", Tag::kOther, kTablePart},
    {"thead", Tag::kOther, kTablePart},
    {"title", Tag::kTitle, kHeadOk},
    {"tr", Tag::kOther, kTablePart},
    {"track", Tag::kOther, kVoid},
    {"tt", Tag::kOther, kBreakout},
    {"u", Tag::kOther, kBreakout},
    {"ul", Tag::kOther, kBreakout},
    {"var", Tag::kOther, kBreakout},
    {"wbr", Tag::kOther, kVoid},
    {"xmp", Tag::kXmp, 0},
};

}  // namespace

TagTable::TagTable() {
  for (const TagSpec& spec : kTagSpecs) Insert(spec.name, spec.tag, spec.flags);
  // Every name Gumbo knows, so that unknown names are told apart exactly as the reference
  // tells them (GUMBO_TAG_UNKNOWN): unknown elements are phrasing. Known names take their
  // class from the shared lists.
  for (int tag = 0; tag < GUMBO_TAG_UNKNOWN; ++tag) {
    const std::string_view name = gumbo_normalized_tagname(static_cast<GumboTag>(tag));
    uint8_t flags = 0;
    if (IsDroppedElement(name)) {
      flags |= kDropped;
    } else if (!IsPhrasingElement(name, /*known=*/true)) {
      flags |= kSeparates;
    }
    Insert(name, Tag::kOther, flags);
    if ((flags & kSeparates) != 0) SetCounter(name, static_cast<uint8_t>(tag));
  }
  // The edges of <html>, <head> and <body> never separate two pieces of text that something
  // else does not already separate (text before <body> is in <title> or moved into the body),
  // while a repeated <body> or <html>, or a <head> in the body, is ignored by the tree builder
  // and must not break a word.
  // <frame> outside a frameset is ignored too, and inside one there is no text.
  for (std::string_view name : {"html", "head", "body", "frame"}) ClearFlag(name, kSeparates);
}

void TagTable::Insert(std::string_view name, Tag tag, uint8_t flags) {
  const TagKey key = KeyOf(name);
  for (size_t i = Hash(key);; i = (i + 1) & kMask) {
    Slot& slot = slots_[i];
    if (slot.key.lo == 0) {
      slot.key = key;
      slot.info = {tag, flags, kNotCounted};
      return;
    }
    if (slot.key == key) {
      if (tag != Tag::kOther) slot.info.tag = tag;
      slot.info.flags |= flags;
      return;
    }
  }
}

TagTable::Slot& TagTable::Find(std::string_view name) {
  const TagKey key = KeyOf(name);
  for (size_t i = Hash(key);; i = (i + 1) & kMask) {
    if (slots_[i].key == key) return slots_[i];
  }
}

const TagTable& Tags() {
  static const TagTable* const table = new TagTable();  // never destroyed: used at exit too
  return *table;
}

}  // namespace shingled::dedup::internal
