// One line of an NDJSON batch, parsed with bounded depth and memory.
//
// A batch line is one flat JSON object whose values are strings, numbers, booleans or null. A
// DOM parse of any JSON first would let one line of "[[[[..." or of a million small members
// cost far more memory than its bytes (tens of bytes per value), and nest as deep as the body
// is long. This parser reads the line through nlohmann's SAX interface and stops at the first
// nested object or array and at the first key the line does not take, so what it builds is at
// most the line's bytes (plus one small value per allowed key).
#ifndef SHINGLED_DAEMON_JSON_LINE_H_
#define SHINGLED_DAEMON_JSON_LINE_H_

#include <initializer_list>
#include <string_view>

#include "base/status.h"
#include "daemon/wire/request_parse.h"

namespace shingled::daemon {

// The nesting a batch line may have: the object itself, no object or array inside it.
inline constexpr int kMaxBatchLineDepth = 1;

// Parses `line` as one JSON object with members among `allowed`, each a scalar. InvalidArgument:
// "invalid JSON object" (with the byte offset) when it is not JSON or not an object; naming the
// member when a value is an object or array (nesting over kMaxBatchLineDepth); as CheckMembers
// for a key not in `allowed`.
StatusOr<Json> ParseFlatJsonObject(std::string_view line,
                                   std::initializer_list<std::string_view> allowed);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_JSON_LINE_H_
