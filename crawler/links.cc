#include "crawler/links.h"

#include <gumbo.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "crawler/url.h"
#include "dedup/html_nesting.h"

namespace shingled::crawler {
namespace {

const char* Attribute(const GumboElement& element, const char* name) {
  const GumboAttribute* attribute = gumbo_get_attribute(&element.attributes, name);
  return attribute == nullptr ? nullptr : attribute->value;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Whether a space/comma separated token list (rel, meta content) holds `token`, ignoring case.
bool HasToken(const char* list, std::string_view token) {
  if (list == nullptr) return false;
  const std::string lower = Lower(list);
  size_t pos = 0;
  while (pos < lower.size()) {
    const size_t end = lower.find_first_of(" \t\n\r\f,", pos);
    const size_t stop = end == std::string::npos ? lower.size() : end;
    if (std::string_view(lower).substr(pos, stop - pos) == token) return true;
    pos = stop + 1;
  }
  return false;
}

struct GumboOutputDeleter {
  void operator()(GumboOutput* output) const {
    gumbo_destroy_output(&kGumboDefaultOptions, output);  // only its allocator is used
  }
};

}  // namespace

ExtractedLinks ExtractLinks(std::string_view html, std::string_view page_url,
                            const LinkOptions& options) {
  ExtractedLinks result;
  StatusOr<std::string> page = NormalizeUrl(page_url);
  if (!page.ok()) return result;
  result.base_url = *page;

  // Gumbo's offsets are 32-bit, and its tree construction is quadratic in nesting depth and
  // in recorded errors: parse a nesting-limited copy without recording errors (see
  // dedup/html_nesting.h). A link nested deeper than the limit is not found.
  if (html.size() > std::numeric_limits<uint32_t>::max()) {
    html = html.substr(0, std::numeric_limits<uint32_t>::max());
  }
  const std::optional<std::string> limited = dedup::LimitHtmlNesting(html);
  if (limited.has_value()) html = *limited;
  GumboOptions gumbo_options = kGumboDefaultOptions;
  gumbo_options.max_errors = 0;
  const std::unique_ptr<GumboOutput, GumboOutputDeleter> output(
      gumbo_parse_with_options(&gumbo_options, html.data(), html.size()));
  if (output == nullptr) return result;

  // Collect candidate elements in document order first: <base> may follow a link in a broken
  // page, but it applies to the whole document, so resolution waits until the walk is done.
  std::vector<std::pair<std::string, bool>> raw;  // (reference, is canonical)
  bool have_base = false;
  std::vector<const GumboNode*> stack = {output->root};  // explicit stack: deep pages are fine
  while (!stack.empty()) {
    const GumboNode* node = stack.back();
    stack.pop_back();
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) continue;
    const GumboElement& element = node->v.element;
    const char* reference = nullptr;
    switch (element.tag) {
      case GUMBO_TAG_A:
      case GUMBO_TAG_AREA:
        reference = Attribute(element, "href");
        if (reference != nullptr && HasToken(Attribute(element, "rel"), "nofollow")) {
          ++result.nofollow_skipped;
          reference = nullptr;
        }
        break;
      case GUMBO_TAG_FRAME:
      case GUMBO_TAG_IFRAME:
        reference = Attribute(element, "src");
        break;
      case GUMBO_TAG_BASE:
        if (const char* href = Attribute(element, "href"); href != nullptr && !have_base) {
          have_base = true;
          StatusOr<std::string> base = ResolveUrl(*page, href);
          if (base.ok()) result.base_url = *base;
        }
        break;
      case GUMBO_TAG_LINK:
        if (HasToken(Attribute(element, "rel"), "canonical")) {
          if (const char* href = Attribute(element, "href"); href != nullptr) {
            raw.emplace_back(href, true);
          }
        }
        break;
      case GUMBO_TAG_META: {
        const char* name = Attribute(element, "name");
        if (name == nullptr) break;
        const std::string lower = Lower(name);
        if (lower != "robots" && lower != Lower(options.product_token)) break;
        const char* content = Attribute(element, "content");
        if (HasToken(content, "nofollow") || HasToken(content, "none")) result.meta_nofollow = true;
        if (HasToken(content, "noindex") || HasToken(content, "none")) result.meta_noindex = true;
        break;
      }
      default:
        break;
    }
    if (reference != nullptr) raw.emplace_back(reference, false);
    const GumboVector& children = element.children;
    for (unsigned i = children.length; i > 0; --i) {
      stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
    }
  }

  std::unordered_set<std::string> seen;
  for (const auto& [reference, is_canonical] : raw) {
    StatusOr<std::string> url = ResolveUrl(result.base_url, reference);
    if (is_canonical) {
      if (url.ok() && !result.canonical) result.canonical = *url;
      continue;
    }
    if (!url.ok() || result.meta_nofollow) {
      if (!url.ok()) ++result.dropped;
      continue;
    }
    if (seen.contains(*url)) continue;
    if (result.links.size() >= options.max_links) {
      ++result.dropped;
      continue;
    }
    seen.insert(*url);
    result.links.push_back(std::move(*url));
  }
  return result;
}

}  // namespace shingled::crawler
