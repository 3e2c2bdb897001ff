// Fuzzes what the HTTP API reads from a client (daemon/wire/request_parse.h,
// daemon/wire/http_query.h), called directly rather than through a socket: the input is taken at
// once as a request target, as a JSON body (a takedown's too), as an NDJSON batch (line by line),
// as a date, a status and an id. Besides crashes, sanitizer reports and hangs, it aborts when
// - a decoded target or percent-decoded text is longer than its input;
// - an accepted value is outside its documented range (status 100..599, threshold 0..1,
//   limit 1..1000, ids above 0, a batch page without content whose status needs content);
// - a URL PageUrl accepted changes when normalized again, or a takedown's scope when read again;
// - a parsed date, printed by FormatIsoTime, does not read back as the same second.
//
//   build-fuzz/tests/fuzz/request_parse_fuzz -max_total_time=600 -rss_limit_mb=2048
//       -dict=tests/fuzz/request_parse.dict tests/fuzz/corpus/request_parse
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/wire/forget_request.h"
#include "daemon/wire/http_query.h"
#include "daemon/wire/request_parse.h"

namespace {

using namespace shingled::daemon;

constexpr size_t kMaxUrlBytes = 4096;
constexpr int64_t kNow = 1714564800;  // 2024-05-01T12:00:00Z

// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the dates a 4-digit year spans.
constexpr int64_t kYear0 = -62167219200;
constexpr int64_t kYear9999End = 253402300799;

void Check(bool ok) {
  if (!ok) abort();
}

void CheckPage(const PagePost& page, std::string_view input) {
  Check(page.http_status >= 100 && page.http_status <= 599);
  // A stored URL is normalized: normalizing it again changes nothing.
  shingled::StatusOr<std::string> again = PageUrl(page.url, kMaxUrlBytes);
  Check(again.ok() && *again == page.url);
  Check(page.body.size() <= input.size() && page.content_type.size() <= input.size());
}

void FuzzDate(std::string_view text) {
  shingled::StatusOr<int64_t> t = ParseIsoTime(text);
  if (!t.ok()) {
    Check(t.status().code() == shingled::StatusCode::kInvalidArgument);
    return;
  }
  // A 4-digit year, shifted by a zone offset of less than a day.
  Check(*t >= kYear0 - 86400 && *t <= kYear9999End + 86400);
  const std::string printed = FormatIsoTime(*t);
  if (*t >= kYear0 && *t <= kYear9999End) {
    shingled::StatusOr<int64_t> back = ParseIsoTime(printed);
    Check(back.ok() && *back == *t);
  }
}

void FuzzTarget(std::string_view text) {
  for (bool plus_is_space : {false, true}) {
    shingled::StatusOr<std::string> decoded = PercentDecode(text, plus_is_space);
    if (decoded.ok()) Check(decoded->size() <= text.size());
  }
  shingled::StatusOr<Target> target = ParseTarget(text);
  if (!target.ok()) return;
  Check(!target->path.empty() && target->path.front() == '/');
  Check(target->path.size() <= text.size());
  for (const auto& [key, value] : target->params) Check(key.size() + value.size() <= text.size());

  shingled::StatusOr<shingled::store::QueryOptions> q = ParseQueryOptions(*target);
  if (q.ok()) {
    Check(q->threshold >= 0 && q->threshold <= 1);
    Check(q->limit >= 1 && q->limit <= kMaxQueryLimit);
  }
  shingled::StatusOr<PagePost> page = ParsePageTarget(*target, "default", kMaxUrlBytes, kNow);
  if (page.ok()) {
    CheckPage(*page, text);
    Check(page->sweep == target->Get("sweep").value_or("default"));
    Check(target->Get("fetched_at").has_value() || page->date == kNow);
  }
  for (const char* name : {"status", "fetched_at", "id"}) {
    if (std::optional<std::string> value = target->Get(name)) FuzzDate(*value);
  }
}

void FuzzBodies(std::string_view text) {
  shingled::StatusOr<Json> body = ParseObjectBody(text);
  if (body.ok()) {
    Check(body->is_object());
    for (const char* key : {"start", "end"}) {
      shingled::StatusOr<int64_t> date = DateMember(*body, key, kNow);
      if (date.ok() && (!body->contains(key) || (*body)[key].is_null())) Check(*date == kNow);
    }
  }
  // A takedown's body: one scope, normalized (its value taken again unchanged), bounds kept.
  shingled::StatusOr<shingled::store::ForgetOptions> forget =
      ParseForgetBody(text, kMaxUrlBytes, kNow);
  if (forget.ok()) {
    Check(!forget->value.empty() && forget->date == kNow);
    Check(forget->list_limit <= kMaxForgetListed);
    Check(forget->max_urls >= 1 && forget->max_urls <= kMaxForgetMaxUrls);
    const std::optional<std::string> value = forget->value;
    const bool url = forget->scope == shingled::store::ForgetScope::kUrl;
    const bool host = forget->scope == shingled::store::ForgetScope::kHost;
    shingled::StatusOr<shingled::store::ForgetOptions> again =
        ForgetScopeOf(url ? value : std::nullopt, host ? value : std::nullopt,
                      !url && !host ? value : std::nullopt, kMaxUrlBytes);
    Check(again.ok() && again->scope == forget->scope && again->value == forget->value);
  } else {
    Check(forget.status().code() == shingled::StatusCode::kInvalidArgument);
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    shingled::StatusOr<PagePost> page = ParseBatchLine(line, "default", kMaxUrlBytes, kNow);
    if (!page.ok()) {
      Check(page.status().code() == shingled::StatusCode::kInvalidArgument);
      continue;
    }
    CheckPage(*page, line);
    // Only a status whose answer is content needs content: a 404 records a dead URL, a 403 or a 5xx
    // a failed attempt (the check said 404 or 410 before failed attempts existed; fuzz.sh found
    // a batch line of status 403 without content, which the parser rightly takes).
    Check(!page->body.empty() || shingled::store::ClassifyHttpStatus(page->http_status) !=
                                     shingled::store::StatusClass::kContent);
  }
}

void FuzzNumbers(std::string_view text) {
  shingled::StatusOr<int> status = ParseHttpStatus(text);
  if (status.ok()) Check(*status >= 100 && *status <= 599);
  shingled::StatusOr<uint64_t> id = ParseId(text, "document");
  if (id.ok()) Check(*id > 0);
  shingled::StatusOr<std::string> url = PageUrl(text, kMaxUrlBytes);
  if (url.ok()) {
    Check(!url->empty() && url->size() <= kMaxUrlBytes);
    shingled::StatusOr<std::string> again = PageUrl(*url, kMaxUrlBytes);
    Check(again.ok() && *again == *url);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  FuzzTarget(in);
  FuzzBodies(in);
  FuzzDate(in);
  FuzzNumbers(in);
  return 0;
}
