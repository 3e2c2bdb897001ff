// robots.txt: parsing and matching per RFC 9309 (the Robots Exclusion Protocol).
//
// Parse() reads groups of rules: one or more user-agent lines followed by allow, disallow and
// crawl-delay lines. The crawler obeys the groups whose user-agent names its product token
// (case-insensitive; several such groups are merged), otherwise the groups for "*", otherwise
// nothing (everything allowed). For a path, the rule whose pattern matches the most octets wins;
// between an allow and a disallow rule of equal length, allow wins. Patterns may use "*" (any
// sequence) and a final "$" (end of path). Pattern and path are compared after normalizing
// percent-encoding (unreserved characters decoded, others encoded with upper-case hex), so
// "/%7Efoo" and "/~foo" are the same, and "/ツ" matches "/%E3%83%84".
//
// Robustness: only the first kRobotsParseLimit bytes are parsed (RFC 9309 section 2.5 asks for
// at least 500 KiB); lines without a colon, unknown keys and binary junk are ignored; a UTF-8 BOM
// is skipped; CR, LF and CRLF all end lines. Common misspellings ("user agent", "useragent",
// "dissallow", "disalow") are accepted, as Google's parser accepts them.
//
// FromFetch() applies section 2.3.1's fetch outcomes: 2xx parses the body, 4xx (other than 429)
// means no robots.txt (allow all), and 5xx, 429 or an unreachable server means disallow
// everything for now. 429 is treated like 5xx because it asks the crawler to back off, which an
// "allow all" would ignore. The crawler caches one RobotsRules per host for a sweep.
//
// A RobotsRules is immutable after construction and safe for concurrent reads.
#ifndef SHINGLED_CRAWLER_ROBOTS_H_
#define SHINGLED_CRAWLER_ROBOTS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shingled::crawler {

inline constexpr size_t kRobotsParseLimit = 500 * 1024;

class RobotsRules {
 public:
  // Everything allowed, no crawl delay (also what a default-constructed object is).
  RobotsRules() = default;

  // Parses robots.txt text for a crawler whose product token is `product_token` (e.g.
  // "shingled"; REQUIRES: letters, digits, '_' and '-' only, as section 2.2.1 requires).
  static RobotsRules Parse(std::string_view text, std::string_view product_token);
  static RobotsRules AllowAll() { return RobotsRules(); }
  static RobotsRules DisallowAll();

  // The rules for a fetch of /robots.txt that ended with HTTP status `http_status` (after
  // redirects; 0 when the server could not be reached or the fetch failed) and `body`.
  static RobotsRules FromFetch(int http_status, std::string_view body,
                               std::string_view product_token);

  // Whether the crawler may fetch `path_and_query` ("/a/b?c", as Url::PathAndQuery() gives).
  // "/robots.txt" itself is always allowed.
  bool IsAllowed(std::string_view path_and_query) const;

  // The Crawl-delay of the selected group, in seconds, when it gave a valid non-negative number.
  std::optional<double> crawl_delay_seconds() const { return crawl_delay_seconds_; }
  // Whether the text was longer than kRobotsParseLimit and its tail was ignored.
  bool truncated() const { return truncated_; }
  // Whether this is the "disallow everything" of a 5xx or unreachable robots.txt.
  bool disallow_all() const { return disallow_all_; }
  size_t rule_count() const { return rules_.size(); }

 private:
  struct Rule {
    bool allow = false;
    std::string pattern;  // percent-normalized; starts with '/' or '*'
  };

  std::vector<Rule> rules_;
  std::optional<double> crawl_delay_seconds_;
  bool truncated_ = false;
  bool disallow_all_ = false;
};

// Whether robots.txt `pattern` (already percent-normalized) matches the start of `path`
// ('*' matches any sequence, a final '$' anchors at the end). Exposed for tests and the fuzzer.
bool RobotsPatternMatches(std::string_view pattern, std::string_view path);

}  // namespace shingled::crawler

#endif  // SHINGLED_CRAWLER_ROBOTS_H_
