// The Gumbo canonicalizer (see dedup/canonicalize.h) and CanonicalizePage.
//
// Two properties of the Gumbo we build against (Debian 12: 0.10.1) shape this file:
//  - It has no limit on tree depth, and its tree construction costs O(depth) per start tag
//    (scope checks walk the stack of open elements), so 100k nested <div>s take ~30 s; with its
//    default max_errors (-1) each error also copies the whole stack, which makes that input use
//    gigabytes. We parse with max_errors = 0 and first bound the nesting (dedup/html_nesting.h).
//  - Its tree can be as deep as the input nests, so the tree walk here is iterative.
#include <gumbo.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/canonicalize.h"
#include "dedup/charset.h"
#include "dedup/html_nesting.h"
#include "dedup/internal/gumbo_tags.h"
#include "dedup/tokenizer.h"

namespace shingled::dedup {
namespace {

using internal::IsDropped;
using internal::IsPhrasing;

// ---------------------------------------------------------------------------------------------
// Element classes.


// Whether an element's edges separate words. Foreign (SVG, MathML) elements always do: their
// pieces (<text>, <mi>) are positioned separately, not flowed into one word.
bool BreaksWords(const GumboElement& element) {
  if (element.tag_namespace != GUMBO_NAMESPACE_HTML) return true;
  return !IsPhrasing(element.tag);
}

// ---------------------------------------------------------------------------------------------

struct GumboOutputDeleter {
  const GumboOptions* options;
  void operator()(GumboOutput* output) const { gumbo_destroy_output(options, output); }
};

const GumboVector* ChildrenOf(const GumboNode* node) {
  switch (node->type) {
    case GUMBO_NODE_DOCUMENT:
      return &node->v.document.children;
    case GUMBO_NODE_ELEMENT:
    case GUMBO_NODE_TEMPLATE:
      return &node->v.element.children;
    default:
      return nullptr;
  }
}

}  // namespace

void CanonicalizeHtmlGumbo(std::string_view utf8_html, Tokenizer* tokenizer) {
  // Gumbo takes at most 4 GiB (its offsets are 32-bit); pages are capped far below that long
  // before they get here, so the cut only keeps the call safe.
  if (utf8_html.size() > std::numeric_limits<uint32_t>::max()) {
    utf8_html = utf8_html.substr(0, std::numeric_limits<uint32_t>::max());
  }
  const std::optional<std::string> limited = LimitHtmlNesting(utf8_html);
  const std::string_view html = limited.has_value() ? std::string_view(*limited) : utf8_html;

  GumboOptions options = kGumboDefaultOptions;
  options.max_errors = 0;  // we never read errors; recording them is quadratic (see the top)
  std::unique_ptr<GumboOutput, GumboOutputDeleter> output(
      gumbo_parse_with_options(&options, html.data(), html.size()), GumboOutputDeleter{&options});
  if (output == nullptr) return;  // out of memory inside Gumbo: no text

  struct Frame {
    const GumboNode* node;
    unsigned next_child;
    bool breaks;
  };
  std::vector<Frame> stack;
  stack.push_back({output->document, 0, false});
  while (!stack.empty()) {
    Frame& top = stack.back();
    const GumboVector* children = ChildrenOf(top.node);
    if (children == nullptr || top.next_child >= children->length) {
      if (top.breaks) tokenizer->Break();
      stack.pop_back();
      continue;
    }
    const auto* child = static_cast<const GumboNode*>(children->data[top.next_child++]);
    switch (child->type) {
      case GUMBO_NODE_TEXT:
      case GUMBO_NODE_WHITESPACE:
      case GUMBO_NODE_CDATA:
        tokenizer->Feed(child->v.text.text);
        break;
      case GUMBO_NODE_ELEMENT: {
        const GumboElement& element = child->v.element;
        if (IsDropped(element.tag)) break;
        const bool breaks = BreaksWords(element);
        if (breaks) tokenizer->Break();
        stack.push_back({child, 0, breaks});  // invalidates `top`
        break;
      }
      case GUMBO_NODE_TEMPLATE:  // inert content, never rendered
      case GUMBO_NODE_COMMENT:
      case GUMBO_NODE_DOCUMENT:
        break;
    }
  }
}

CanonicalizeInfo CanonicalizePage(std::string_view bytes, std::string_view content_type,
                                  TokenSink* sink) {
  CanonicalizeInfo info;
  const ContentType type = ParseContentType(content_type);
  const std::string_view head = bytes.substr(0, kSniffBytes);
  info.kind = DetectContentKind(type.mime, head);
  if (info.kind == ContentKind::kBinary) return info;

  CharsetDecision decision = DetectCharset(type.charset, head, info.kind == ContentKind::kHtml);
  StatusOr<std::unique_ptr<Utf8Converter>> converter = Utf8Converter::CreateFor(decision);
  if (!converter.ok()) {
    // Only if the C library lacks a converter: decode as windows-1252 instead, which maps
    // (almost) every byte, rather than fail a page that the caller cannot fix.
    decision = {"windows-1252", CharsetSource::kDefault, decision.bom_length};
    converter = Utf8Converter::Create(decision.charset);
    if (!converter.ok()) {
      decision = {"UTF-8", CharsetSource::kDefault, decision.bom_length};
      converter = Utf8Converter::Create(decision.charset);  // built in: cannot fail
    }
  }
  info.charset = decision.charset;
  info.charset_source = decision.source;
  const std::string_view body = bytes.substr(decision.bom_length);

  Tokenizer tokenizer(sink);
  if (info.kind == ContentKind::kHtml) {
    std::string utf8;
    (*converter)->Convert(body, &utf8);
    (*converter)->Finish(&utf8);
    CanonicalizeHtmlGumbo(utf8, &tokenizer);
  } else {
    // Plain text streams through a bounded buffer: no copy of the whole page.
    constexpr size_t kChunk = size_t{64} << 10;
    std::string utf8;
    for (size_t pos = 0; pos < body.size(); pos += kChunk) {
      utf8.clear();
      (*converter)->Convert(body.substr(pos, kChunk), &utf8);
      tokenizer.Feed(utf8);
    }
    utf8.clear();
    (*converter)->Finish(&utf8);
    tokenizer.Feed(utf8);
  }
  tokenizer.Finish();
  info.tokens = tokenizer.token_count();
  return info;
}

}  // namespace shingled::dedup
