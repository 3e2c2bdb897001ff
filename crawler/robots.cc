#include "crawler/robots.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "crawler/url.h"

namespace shingled::crawler {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return Lower(x) == Lower(y); });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

enum class Key { kUnknown, kUserAgent, kAllow, kDisallow, kCrawlDelay };

Key ParseKey(std::string_view key) {
  std::string k;
  for (char c : key) k += Lower(c);
  if (k == "user-agent" || k == "user agent" || k == "useragent") return Key::kUserAgent;
  if (k == "allow") return Key::kAllow;
  if (k == "disallow" || k == "dissallow" || k == "disalow" || k == "dissalow")
    return Key::kDisallow;
  if (k == "crawl-delay" || k == "crawl delay" || k == "crawldelay") return Key::kCrawlDelay;
  return Key::kUnknown;
}

// The product token at the start of a user-agent value ("Googlebot/2.1" -> "Googlebot").
std::string_view ProductToken(std::string_view value) {
  size_t n = 0;
  while (n < value.size()) {
    const char c = value[n];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '*')) {
      break;
    }
    ++n;
  }
  return value.substr(0, n);
}

struct Group {
  bool matches_us = false;
  bool matches_star = false;
  std::vector<std::pair<bool, std::string>> rules;  // allow?, pattern
  std::optional<double> crawl_delay;
};

}  // namespace

bool RobotsPatternMatches(std::string_view pattern, std::string_view path) {
  bool anchored = false;
  if (!pattern.empty() && pattern.back() == '$') {
    anchored = true;
    pattern.remove_suffix(1);
  }
  // Glob matching with backtracking to the last '*': O(pattern * path) in the worst case, no
  // recursion, so hostile patterns ("*a*a*a*...") cannot blow the stack.
  size_t p = 0, s = 0;
  size_t star = std::string_view::npos, mark = 0;
  while (s < path.size()) {
    if (p == pattern.size() && !anchored) return true;  // a pattern matches a prefix
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = s;
    } else if (p < pattern.size() && pattern[p] == path[s]) {
      ++p;
      ++s;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      s = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

RobotsRules RobotsRules::DisallowAll() {
  RobotsRules rules;
  rules.disallow_all_ = true;
  rules.rules_.push_back({false, "/"});
  return rules;
}

RobotsRules RobotsRules::FromFetch(int http_status, std::string_view body,
                                   std::string_view product_token) {
  if (http_status >= 200 && http_status < 300) return Parse(body, product_token);
  if (http_status >= 400 && http_status < 500 && http_status != 429) return AllowAll();
  // 5xx, 429, unreachable (0), and anything else unexpected (1xx, an unfollowed 3xx).
  // Section 2.3.1.3 allows treating too many redirects as unavailable (allow all); the fetcher
  // gives a final 3xx only when it ran out of hops, so that case allows.
  if (http_status >= 300 && http_status < 400) return AllowAll();
  return DisallowAll();
}

RobotsRules RobotsRules::Parse(std::string_view text, std::string_view product_token) {
  RobotsRules result;
  if (text.size() > kRobotsParseLimit) {
    text = text.substr(0, kRobotsParseLimit);
    result.truncated_ = true;
  }
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);

  std::vector<Group> groups;
  bool in_agent_lines = false;  // the previous meaningful line was a user-agent line
  while (!text.empty()) {
    const size_t end = text.find_first_of("\r\n");
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);

    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const Key key = ParseKey(Trim(line.substr(0, colon)));
    const std::string_view value = Trim(line.substr(colon + 1));
    switch (key) {
      case Key::kUserAgent: {
        if (!in_agent_lines) groups.emplace_back();
        in_agent_lines = true;
        const std::string_view token = ProductToken(value);
        if (token == "*") {
          groups.back().matches_star = true;
        } else if (!token.empty() && EqualsIgnoreCase(token, product_token)) {
          groups.back().matches_us = true;
        }
        break;
      }
      case Key::kAllow:
      case Key::kDisallow: {
        in_agent_lines = false;
        // Rules before any user-agent line belong to no group (section 2.2).
        if (groups.empty() || value.empty()) break;
        // Google's parser reads "Disallow: page" as "/page"; so do we.
        std::string pattern = (value[0] == '/' || value[0] == '*') ? std::string() : "/";
        pattern += NormalizePercentEncoding(value);
        groups.back().rules.emplace_back(key == Key::kAllow, std::move(pattern));
        break;
      }
      case Key::kCrawlDelay: {
        in_agent_lines = false;
        if (groups.empty()) break;
        const std::string v(value);
        char* parse_end = nullptr;
        const double seconds = std::strtod(v.c_str(), &parse_end);
        if (parse_end != v.c_str() && *parse_end == '\0' && std::isfinite(seconds) &&
            seconds >= 0) {
          groups.back().crawl_delay = seconds;
        }
        break;
      }
      case Key::kUnknown:
        // Sitemap and other records neither end the user-agent lines nor belong to a group;
        // section 2.2.4 says they do not end a group, and Google treats them the same way.
        break;
    }
  }

  bool any_ours = false;
  for (const Group& g : groups) any_ours = any_ours || g.matches_us;
  for (Group& g : groups) {
    if (any_ours ? !g.matches_us : !g.matches_star) continue;
    for (auto& [allow, pattern] : g.rules) result.rules_.push_back({allow, std::move(pattern)});
    if (!result.crawl_delay_seconds_ && g.crawl_delay) result.crawl_delay_seconds_ = g.crawl_delay;
  }
  return result;
}

bool RobotsRules::IsAllowed(std::string_view path_and_query) const {
  if (path_and_query == "/robots.txt") return true;
  if (rules_.empty()) return true;
  const std::string path = NormalizePercentEncoding(path_and_query.empty() ? "/" : path_and_query);
  size_t best_length = 0;
  bool best_allow = true;
  bool matched = false;
  for (const Rule& rule : rules_) {
    const size_t length = rule.pattern.size();
    if (matched && length < best_length) continue;
    if (!RobotsPatternMatches(rule.pattern, path)) continue;
    if (!matched || length > best_length) {
      best_length = length;
      best_allow = rule.allow;
      matched = true;
    } else if (rule.allow) {
      best_allow = true;  // equal length: allow wins (section 2.2.2)
    }
  }
  return best_allow;
}

}  // namespace shingled::crawler
