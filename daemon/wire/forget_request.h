// What a takedown names (store::Store::Forget), as the HTTP API (POST /v1/forget) and `shingled
// forget` give it: one scope, a URL, a host or a URL prefix, normalized as the other requests
// normalize theirs, and the bounds of one call. docs/API.md, "Forgetting", describes the body.
//
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_WIRE_FORGET_REQUEST_H_
#define SHINGLED_DAEMON_WIRE_FORGET_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "daemon/wire/request_parse.h"
#include "store/types.h"

namespace shingled::daemon {

// URLs listed in an answer (`list_limit`): none by default (the counts say what went), and at
// most this many, so that an answer stays small whatever the scope.
inline constexpr size_t kMaxForgetListed = 1000;
// URLs forgotten per call (`max_urls`, one write transaction): the store's range.
inline constexpr size_t kDefaultForgetMaxUrls = 10000;
inline constexpr size_t kMaxForgetMaxUrls = 1000000;

// The scope of a takedown from exactly one of `url`, `host` and `prefix` (each absent when
// nullopt), the rest of the options at their defaults:
//   - url: a page URL, normalized by PageUrl (at most `max_url_bytes`), forgotten as stored;
//   - host: "example.com" or "example.com:8080", as a sweep's scope names hosts (SweepScope),
//     in lower case and without a default port; its http and https URLs go;
//   - prefix: a URL prefix, normalized by PageUrl (at most kMaxScopePrefixBytes).
// InvalidArgument saying what is wrong: none given, two given (naming them), or a value that is
// not what it should be.
StatusOr<store::ForgetOptions> ForgetScopeOf(const std::optional<std::string>& url,
                                             const std::optional<std::string>& host,
                                             const std::optional<std::string>& prefix,
                                             size_t max_url_bytes);

// The body of POST /v1/forget: a JSON object with one of the strings "url", "host", "prefix"
// (ForgetScopeOf), and optionally "dry_run" (a boolean), "list_limit" (an integer in
// 0..kMaxForgetListed, default 0) and "max_urls" (an integer in 1..kMaxForgetMaxUrls, default
// kDefaultForgetMaxUrls); no other member, none of them null. `date` is `now`. InvalidArgument
// naming the member that is wrong.
StatusOr<store::ForgetOptions> ParseForgetBody(std::string_view body, size_t max_url_bytes,
                                               int64_t now);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_WIRE_FORGET_REQUEST_H_
