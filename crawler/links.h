// Link extraction from HTML pages, with Gumbo.
//
// Follows hrefs of <a> and <area> and srcs of <frame> and <iframe>, resolved against the page URL
// or the first <base href>, normalized (crawler/url.h) and deduplicated, in document order. Links
// with rel="nofollow" are skipped. <link rel="canonical" href> is returned separately (a page
// names its preferred URL; the crawler records it, it does not follow it). <meta name="robots">
// (and <meta name="PRODUCT_TOKEN">) with "nofollow", "noindex" or "none" is honoured: nofollow
// empties the link list, and both are reported as flags. Links that do not resolve to an http or
// https URL (mailto:, javascript:, broken) are dropped and counted.
//
// Input should be UTF-8. Bytes of other encodings are replaced by Gumbo with U+FFFD, which can
// only affect non-ASCII characters in URLs; the crawler's URLs are almost always ASCII, and the
// option of converting every page first was not taken because links need no text but hrefs.
//
// Cost: Gumbo 0.10's tree building is quadratic in nesting depth (20,000 nested <div>s, 100 KB,
// take 16 s on the build host; 2,000 take 0.1 s). The fetcher's body limit bounds it; a depth
// guard would need a patched Gumbo. TODO(crawler): measure whether the max body size needs a
// lower default for link extraction than for sketching.
//
// Pure computation, thread-compatible.
#ifndef SHINGLED_CRAWLER_LINKS_H_
#define SHINGLED_CRAWLER_LINKS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shingled::crawler {

struct LinkOptions {
  // Product token for <meta name="TOKEN" content="nofollow"> (besides name="robots").
  std::string product_token = "shingled";
  // At most this many links are returned; the rest are counted in `dropped`. Protects the
  // frontier from link farms. Range 0..any.
  size_t max_links = 10000;
};

struct ExtractedLinks {
  std::vector<std::string> links;        // absolute, normalized, unique, document order
  std::optional<std::string> canonical;  // <link rel=canonical>, absolute and normalized
  std::string base_url;                  // what relative links were resolved against
  bool meta_nofollow = false;
  bool meta_noindex = false;
  size_t nofollow_skipped = 0;  // links skipped for rel=nofollow
  size_t dropped = 0;           // links that did not resolve, were not http(s) or over max_links
};

// Extracts links from `html` fetched from `page_url` (an absolute http(s) URL). Never fails:
// a broken page yields fewer links.
ExtractedLinks ExtractLinks(std::string_view html, std::string_view page_url,
                            const LinkOptions& options = {});

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_LINKS_H_
