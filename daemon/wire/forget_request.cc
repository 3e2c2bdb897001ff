#include "daemon/wire/forget_request.h"

#include <array>
#include <string_view>

namespace shingled::daemon {
namespace {

// The unsigned integer member `key` of `body` in min..max, or `fallback` when absent.
StatusOr<uint64_t> IntegerMember(const Json& body, const char* key, uint64_t fallback, uint64_t min,
                                 uint64_t max) {
  if (!body.contains(key)) return fallback;
  const Json& value = body[key];
  // is_number_unsigned: nlohmann reads a non-negative integer as unsigned; 2.0, -1 and "5" are
  // refused rather than converted.
  if (!value.is_number_unsigned() || value.get<uint64_t>() < min || value.get<uint64_t>() > max) {
    return InvalidArgumentError(std::string(key) + " must be an integer in " + std::to_string(min) +
                                ".." + std::to_string(max));
  }
  return value.get<uint64_t>();
}

}  // namespace

StatusOr<store::ForgetOptions> ForgetScopeOf(const std::optional<std::string>& url,
                                             const std::optional<std::string>& host,
                                             const std::optional<std::string>& prefix,
                                             size_t max_url_bytes) {
  const std::array<std::pair<const char*, const std::optional<std::string>*>, 3> given = {
      {{"url", &url}, {"host", &host}, {"prefix", &prefix}}};
  std::string named;
  int count = 0;
  for (const auto& [name, value] : given) {
    if (!value->has_value()) continue;
    ++count;
    named += (named.empty() ? "" : " and ") + std::string(name);
  }
  if (count == 0) return InvalidArgumentError("give what to forget: one of url, host or prefix");
  // Two scopes would be read as their union or their intersection; neither is what every caller
  // means, and a takedown must not remove more than was asked.
  if (count > 1) {
    return InvalidArgumentError("give one of url, host or prefix, not " + named);
  }
  store::ForgetOptions options;
  if (url) {
    StatusOr<std::string> normalized = PageUrl(*url, max_url_bytes);
    if (!normalized.ok()) return InvalidArgumentError("url: " + normalized.status().message());
    options.scope = store::ForgetScope::kUrl;
    options.value = std::move(normalized).value();
  } else if (host) {
    // Read as a sweep's scope reads a host, so that the same hosts are taken and spelt the same:
    // its first root is "http://HOST[:PORT]/".
    StatusOr<std::vector<std::string>> roots = SweepScope({*host}, {});
    if (!roots.ok()) {
      return InvalidArgumentError("host \"" + host->substr(0, 200) +
                                  "\" is not a host name or host:port");
    }
    constexpr std::string_view kHttp = "http://";
    const std::string& root = roots->front();
    options.scope = store::ForgetScope::kHost;
    options.value = root.substr(kHttp.size(), root.size() - kHttp.size() - 1);
  } else {
    StatusOr<std::string> normalized = PageUrl(*prefix, kMaxScopePrefixBytes);
    if (!normalized.ok()) return InvalidArgumentError("prefix: " + normalized.status().message());
    options.scope = store::ForgetScope::kPrefix;
    options.value = std::move(normalized).value();
  }
  return options;
}

StatusOr<store::ForgetOptions> ParseForgetBody(std::string_view text, size_t max_url_bytes,
                                               int64_t now) {
  StatusOr<Json> body = ParseObjectBody(text);
  if (!body.ok()) return body.status();
  if (Status s =
          CheckMembers(*body, {"url", "host", "prefix", "dry_run", "list_limit", "max_urls"});
      !s.ok()) {
    return s;
  }
  std::optional<std::string> scopes[3];
  const char* keys[3] = {"url", "host", "prefix"};
  for (int i = 0; i < 3; ++i) {
    if (!body->contains(keys[i])) continue;
    const Json& value = (*body)[keys[i]];
    if (!value.is_string()) return InvalidArgumentError(std::string(keys[i]) + " must be a string");
    scopes[i] = value.get<std::string>();
  }
  StatusOr<store::ForgetOptions> options =
      ForgetScopeOf(scopes[0], scopes[1], scopes[2], max_url_bytes);
  if (!options.ok()) return options.status();
  options->date = now;
  if (body->contains("dry_run")) {
    if (!(*body)["dry_run"].is_boolean())
      return InvalidArgumentError("dry_run must be true or false");
    options->dry_run = (*body)["dry_run"].get<bool>();
  }
  StatusOr<uint64_t> list_limit = IntegerMember(*body, "list_limit", 0, 0, kMaxForgetListed);
  if (!list_limit.ok()) return list_limit.status();
  options->list_limit = *list_limit;
  StatusOr<uint64_t> max_urls =
      IntegerMember(*body, "max_urls", kDefaultForgetMaxUrls, 1, kMaxForgetMaxUrls);
  if (!max_urls.ok()) return max_urls.status();
  options->max_urls = *max_urls;
  return options;
}

}  // namespace shingled::daemon
