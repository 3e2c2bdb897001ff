// LimitHtmlNesting (dedup/html_nesting.h).
#include "dedup/html_nesting.h"

#include <gumbo.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "dedup/internal/gumbo_tags.h"

namespace shingled::dedup {
namespace {

using internal::IsDropped;
using internal::IsPhrasing;

// LimitNesting: bounds how deep the input can make Gumbo's stack of open elements.
//
// A cheap lexer follows start and end tags and keeps an estimate of the depth of open elements
// and of the number of open formatting elements (b, i, font, ...; each may be cloned again after
// every implied close, "reconstruct the active formatting elements", so many of them multiply
// the tree). Tags beyond the limits are removed from the text Gumbo sees: a phrasing tag is
// removed outright and any other tag becomes a space, which is exactly how the canonicalizer's walk
// treats their edges, so the tokens do not change. A dropped element (template, noscript,
// script inside <svg>) past the limit is removed whole, up to its matching end tag, so that its
// content does not become visible. Raw text (script, style, textarea, ...) is never touched.
//
// The estimate errs high (tags closed implicitly by the parser stay counted until their end
// tag), so the limits are set well above what real pages use; at worst a page with hundreds of
// unclosed tags loses some structure (e.g. table foster-parenting) past that point, and a
// dropped element past it that the parser would close implicitly (by an ancestor's end tag)
// hides text up to its own end tag. The option not taken: a full tree-construction model,
// which would be the parser again. Inside <svg> and <math> nothing is raw text (the tokenizer
// there reads <style> and <title> content as markup), so the lexer follows that too.
//
// Chromium caps its DOM depth at 512 for the same reason; we count more coarsely, hence less.
constexpr size_t kMaxNestingDepth = 256;
constexpr size_t kMaxOpenFormatting = 32;

constexpr bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool IsHtmlSpace(char c) {
  return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' ';
}
constexpr char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool IsVoid(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_AREA:
    case GUMBO_TAG_BASE:
    case GUMBO_TAG_BASEFONT:
    case GUMBO_TAG_BGSOUND:
    case GUMBO_TAG_BR:
    case GUMBO_TAG_COL:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_FRAME:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_IMAGE:
    case GUMBO_TAG_IMG:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_KEYGEN:
    case GUMBO_TAG_LINK:
    case GUMBO_TAG_META:
    case GUMBO_TAG_PARAM:
    case GUMBO_TAG_SOURCE:
    case GUMBO_TAG_TRACK:
    case GUMBO_TAG_WBR:
    case GUMBO_TAG_MENUITEM:
      return true;
    default:
      return false;
  }
}

// Elements whose content Gumbo's tokenizer reads as text up to the matching end tag, in HTML
// (not foreign) content. Not <noscript>: Gumbo parses as if scripting were off, so its content
// is markup (measured: 100k "<noscript><div>" nest 200k deep).
bool IsRawText(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_NOEMBED:
    case GUMBO_TAG_NOFRAMES:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_TITLE:
      return true;
    default:
      return false;
  }
}

// The HTML standard's formatting elements (the "list of active formatting elements").
bool IsFormatting(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_A:
    case GUMBO_TAG_B:
    case GUMBO_TAG_BIG:
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_EM:
    case GUMBO_TAG_FONT:
    case GUMBO_TAG_I:
    case GUMBO_TAG_NOBR:
    case GUMBO_TAG_S:
    case GUMBO_TAG_SMALL:
    case GUMBO_TAG_STRIKE:
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_TT:
    case GUMBO_TAG_U:
      return true;
    default:
      return false;
  }
}

// A start tag of one of these closes an open element of the same name (the parser's "close a
// p element", the <li>/<dd>/<dt> loops, the adoption agency for <a>/<nobr>, closing a cell or a
// row), so such a start tag does not add depth when one is open. Elements that the parser
// closes only when they are the current node (option, h1..h6, rt) are not listed: counting
// them errs high, the safe side.
bool ReopenCloses(GumboTag tag) {
  switch (tag) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_A:
    case GUMBO_TAG_NOBR:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_TH:
    case GUMBO_TAG_TR:
      return true;
    default:
      return false;
  }
}

class NestingLimiter {
 public:
  explicit NestingLimiter(std::string_view html) : s_(html) {}

  // Returns the rewritten text, or nullopt when nothing had to be removed.
  std::optional<std::string> Run() {
    size_t pos = 0;
    while (pos < s_.size()) {
      const size_t lt = s_.find('<', pos);
      if (lt == std::string_view::npos || lt + 1 >= s_.size()) break;
      const char next = s_[lt + 1];
      if (next == '!') {
        if (s_.compare(lt, 4, "<!--") == 0) {
          const size_t end = s_.find("-->", lt + 2);
          if (end == std::string_view::npos) break;
          pos = end + 3;
        } else {
          pos = SkipPast('>', lt + 2);
        }
      } else if (next == '?') {
        pos = SkipPast('>', lt + 2);
      } else if (next == '/' && lt + 2 < s_.size() && IsAsciiAlpha(s_[lt + 2])) {
        pos = EndTag(lt);
      } else if (IsAsciiAlpha(next)) {
        pos = StartTag(lt);
      } else {
        pos = lt + 1;
      }
    }
    if (skip_depth_ > 0) Remove(skip_begin_, s_.size(), skip_tag_);  // never closed
    if (!rewritten_) return std::nullopt;
    out_.append(s_.substr(copied_));
    return std::move(out_);
  }

 private:
  size_t SkipPast(char c, size_t from) const {
    const size_t at = s_.find(c, from);
    return at == std::string_view::npos ? s_.size() : at + 1;
  }

  // Reads a tag name at `pos` (lower-cased into name_), then skips attributes, quotes included,
  // up to and past the '>'. Returns the position after the tag, or npos when the input ends
  // first (Gumbo then drops the unfinished tag: nothing to count).
  size_t ReadTag(size_t pos) {
    name_.clear();
    while (pos < s_.size() && !IsHtmlSpace(s_[pos]) && s_[pos] != '/' && s_[pos] != '>') {
      name_.push_back(AsciiLower(s_[pos++]));
    }
    char quote = 0;
    for (; pos < s_.size(); ++pos) {
      const char c = s_[pos];
      if (quote != 0) {
        if (c == quote) quote = 0;
      } else if (c == '>') {
        return pos + 1;
      } else if ((c == '"' || c == '\'') && pos > 0 && s_[pos - 1] == '=') {
        quote = c;  // a quoted value only starts right after '=' (spaces aside: rare, harmless)
      }
    }
    return std::string_view::npos;
  }

  static GumboTag TagOf(const std::string& name) {
    return gumbo_tagn_enum(name.data(), static_cast<unsigned>(name.size()));
  }

  // Removes s_[begin, end): a tag, or a whole dropped element. `tag` decides whether a space
  // stands in for it; a dropped element leaves none, as the walk below adds no break for it.
  void Remove(size_t begin, size_t end, GumboTag tag) {
    rewritten_ = true;
    out_.append(s_.substr(copied_, begin - copied_));
    if (!IsPhrasing(tag) && !IsDropped(tag)) out_.push_back(' ');
    copied_ = end;
  }

  size_t StartTag(size_t lt) {
    const size_t end = ReadTag(lt + 1);
    if (end == std::string_view::npos) return s_.size();
    const GumboTag tag = TagOf(name_);
    if (IsVoid(tag)) return end;
    if (foreign_ == 0) {
      if (tag == GUMBO_TAG_PLAINTEXT) return s_.size();  // the rest is text
      if (IsRawText(tag)) return SkipRawText(end);
    }
    if (skip_depth_ > 0) {  // inside a dropped element being removed: only find its end
      if (name_ == skip_name_) ++skip_depth_;
      return end;
    }
    if (ReopenCloses(tag) && open_[name_] > 0) return end;
    const bool formatting = IsFormatting(tag);
    if (depth_ >= kMaxNestingDepth || (formatting && open_formatting_ >= kMaxOpenFormatting)) {
      if (IsDropped(tag)) {
        skip_name_ = name_;
        skip_tag_ = tag;
        skip_depth_ = 1;
        skip_begin_ = lt;
      } else {
        ++removed_[name_];
        Remove(lt, end, tag);
      }
      return end;
    }
    ++open_[name_];
    ++depth_;
    if (formatting) ++open_formatting_;
    if (tag == GUMBO_TAG_SVG || tag == GUMBO_TAG_MATH) ++foreign_;
    return end;
  }

  size_t EndTag(size_t lt) {
    const size_t end = ReadTag(lt + 2);
    if (end == std::string_view::npos) return s_.size();
    const GumboTag tag = TagOf(name_);
    if (skip_depth_ > 0) {
      if (name_ == skip_name_ && --skip_depth_ == 0) Remove(skip_begin_, end, skip_tag_);
      return end;
    }
    if (auto it = removed_.find(name_); it != removed_.end() && it->second > 0) {
      // Removed start tags are the innermost ones, so their end tags come first.
      --it->second;
      Remove(lt, end, tag);
      return end;
    }
    if (auto it = open_.find(name_); it != open_.end() && it->second > 0) {
      --it->second;
      --depth_;
      if (IsFormatting(tag)) --open_formatting_;
      if ((tag == GUMBO_TAG_SVG || tag == GUMBO_TAG_MATH) && foreign_ > 0) --foreign_;
    }
    return end;
  }

  // Skips raw text up to the end tag "</name" followed by a space, '/' or '>'.
  size_t SkipRawText(size_t pos) {
    for (;;) {
      const size_t lt = s_.find("</", pos);
      if (lt == std::string_view::npos) return s_.size();
      size_t i = lt + 2;
      size_t k = 0;
      while (k < name_.size() && i < s_.size() && AsciiLower(s_[i]) == name_[k]) ++i, ++k;
      if (k == name_.size() && i < s_.size() &&
          (IsHtmlSpace(s_[i]) || s_[i] == '/' || s_[i] == '>')) {
        return lt;  // the end tag itself is read by the main loop
      }
      pos = lt + 2;
    }
  }

  std::string_view s_;
  std::string name_;
  std::unordered_map<std::string, uint32_t> open_;     // per tag name, estimated open
  std::unordered_map<std::string, uint32_t> removed_;  // per tag name, removed and not closed
  size_t depth_ = 0;
  size_t open_formatting_ = 0;
  size_t foreign_ = 0;  // open <svg> and <math>
  // A dropped element past the limit, being removed whole: its name, nesting and start.
  std::string skip_name_;
  GumboTag skip_tag_ = GUMBO_TAG_UNKNOWN;
  size_t skip_depth_ = 0;
  size_t skip_begin_ = 0;
  bool rewritten_ = false;
  std::string out_;
  size_t copied_ = 0;  // s_ before this offset is in out_
};

}  // namespace

std::optional<std::string> LimitHtmlNesting(std::string_view html) {
  return NestingLimiter(html).Run();
}

}  // namespace shingled::dedup
