// JSON forms of the store's answers, shared by the HTTP API and the command line (docs/API.md
// describes every key). The ISO-8601 dates both accept and print are in request_parse.h.
//
// Document and cluster ids are JSON numbers; 64-bit hash values are 16-digit hex strings, as
// `shingled sketch` prints them. Dates are ISO-8601 UTC strings ("2024-05-01T12:00:00Z").
//
// Thread-compatible free functions.
#ifndef SHINGLED_DAEMON_JSON_CODEC_H_
#define SHINGLED_DAEMON_JSON_CODEC_H_

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "daemon/wire/request_parse.h"
#include "store/types.h"

namespace shingled::daemon {

// `j` as text (`indent` -1: one line). Strings that are not UTF-8 (a file name, a URL or a name
// given on a command line, where nothing checked the bytes) are written with U+FFFD in place of
// the bad bytes rather than throwing, which nlohmann's default does.
template <typename BasicJson>
std::string DumpJson(const BasicJson& j, int indent = -1) {
  return j.dump(indent, ' ', false, BasicJson::error_handler_t::replace);
}

// --- bytes in common ---
// {"shared_bytes", "share_a", "share_b", "relation", "length_a", "length_b", "shared_chunks",
// "template_bytes", "template_chunks", "template_a", "template_b"} (with `spans`, also "spans":
// [{"offset_a", "offset_b", "length"}] and "spans_truncated"); for documents without chunks
// {"chunks": "unknown", "a_chunks": bool, "b_chunks": bool}.
Json CommonJson(const store::CommonBytes& common, bool spans);
// An operator's template mark: {"cluster", "members", "chunks", "chunk_bytes"}.
Json TemplateMarkJson(const store::TemplateMark& mark);

Json PageResultJson(std::string_view url, const store::PageResult& result);
// `candidates_left_out`: how many candidates the store did not score.
Json SimilarJson(const std::vector<store::SimilarDoc>& docs, uint64_t candidates_left_out = 0);
Json HistoryJson(std::string_view url, const std::vector<store::UrlVersion>& versions);
Json ClusterJson(const store::ClusterInfo& cluster);
Json DocumentJson(const store::DocumentInfo& doc);
Json LostJson(const store::LostAndFound& lost);
Json SweepJson(const store::SweepInfo& sweep);
// The sweep after a close (or, `dry_run`, as it is), with "closing": {"dry_run", "gone_urls"
// (how many URLs the close recorded or would record gone), "listed", "urls" (the first of
// them)}.
Json SweepClosingJson(const store::SweepClosing& closing, bool dry_run);
// How many gone URLs a close lists by default, and at most (`limit`).
inline constexpr size_t kDefaultGoneListed = 100;
inline constexpr size_t kMaxGoneListed = 100000;
Json StatsJson(const store::StoreStats& stats);

// --- forgetting (docs/API.md, "Forgetting") ---
// What one call of Store::Forget did, or with options.dry_run would do: {"scope", "value" (as
// normalized), "dry_run", "urls", "versions", "documents", "documents_kept",
// "clusters_recomputed", "clusters_split", "listed" (the first URLs, in URL order), "more",
// "record" (the record's id; null for a dry run)}.
Json ForgetResultJson(const store::ForgetOptions& options, const store::ForgetResult& result);
// A recorded takedown: {"id", "date", "scope", "value_sha256" (64 lower-case hex digits), "urls",
// "versions", "documents", "clusters_split"}.
Json ForgetRecordJson(const store::ForgetRecord& record);
// The 64 lower-case hex digits of a SHA-256 digest.
std::string Sha256Hex(const std::array<uint8_t, 32>& digest);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_JSON_CODEC_H_
