// Sweeps' scopes and closing (FORMAT.md, "Closing a sweep"), and their upgrade to format 8.
#include "store/internal/sweeps.h"

#include <utf8proc.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "store/internal/lmdb.h"
#include "store/internal/store_impl.h"

namespace shingled::store::internal {

Status ValidateSweepName(std::string_view name) {
  if (name.empty()) return InvalidArgumentError("sweep name is empty");
  if (name.size() > kMaxSweepName) {
    return InvalidArgumentError("sweep name longer than " + std::to_string(kMaxSweepName) +
                                " bytes");
  }
  for (size_t i = 0; i < name.size();) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(name.data() + i),
                         static_cast<utf8proc_ssize_t>(name.size() - i), &cp);
    if (n <= 0) {
      return InvalidArgumentError("sweep name is not UTF-8 (a bad byte at " + std::to_string(i) +
                                  ")");
    }
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
      return InvalidArgumentError("sweep name contains a control character (at byte " +
                                  std::to_string(i) + ")");
    }
    i += static_cast<size_t>(n);
  }
  return OkStatus();
}

StatusOr<std::vector<std::string>> ValidateScope(std::vector<std::string> prefixes) {
  if (prefixes.size() > kMaxScopePrefixes) {
    return InvalidArgumentError("a sweep's scope has at most " + std::to_string(kMaxScopePrefixes) +
                                " prefixes, not " + std::to_string(prefixes.size()));
  }
  for (const std::string& p : prefixes) {
    if (p.size() > kMaxScopePrefix) {
      return InvalidArgumentError("scope prefix " + p.substr(0, 40) + "... is longer than " +
                                  std::to_string(kMaxScopePrefix) + " bytes");
    }
    const size_t scheme_end = p.find("://");
    if (scheme_end == std::string::npos || scheme_end == 0 || scheme_end + 3 == p.size()) {
      return InvalidArgumentError("scope prefix \"" + p +
                                  "\" is not the start of an absolute URL (scheme://host...)");
    }
  }
  std::sort(prefixes.begin(), prefixes.end());
  prefixes.erase(std::unique(prefixes.begin(), prefixes.end()), prefixes.end());
  return prefixes;
}

std::vector<std::string_view> DisjointPrefixes(const std::vector<std::string>& scope) {
  std::vector<std::string_view> out;
  for (const std::string& p : scope) {
    if (!out.empty() && p.starts_with(out.back())) continue;
    out.push_back(p);
  }
  return out;
}

Status FindGone(TxnOps& ops, SweepId id, const SweepRecord& rec, int64_t end,
                const std::function<bool(std::string_view url)>& may_be_gone,
                const std::function<Status(const GoneUrl&)>& visit) {
  const Dbis& d = ops.dbis();
  // Whether sweep `other` is later than this one, by start, then id; read once per sweep.
  std::map<SweepId, bool> later;
  auto is_later = [&](SweepId other) -> StatusOr<bool> {
    if (other == id) return false;
    auto it = later.find(other);
    if (it != later.end()) return it->second;
    std::string_view v;
    SHINGLED_RETURN_IF_ERROR(
        ops.Get(d.sweeps, SweepKey(other), &v, "sweep " + std::to_string(other)));
    StatusOr<SweepRecord> o = DecodeSweep(v);
    if (!o.ok()) return o.status();
    const bool l = LaterSweep(other, o->start, id, rec.start);
    later.emplace(other, l);
    return l;
  };

  Cursor urls, versions;
  if (int rc = urls.Open(ops.txn(), d.urls); rc != 0) return ops.Fail(rc, "urls cursor");
  if (int rc = versions.Open(ops.txn(), d.versions); rc != 0)
    return ops.Fail(rc, "versions cursor");
  for (std::string_view prefix : DisjointPrefixes(rec.scope)) {
    MDB_val k = Val(prefix), v;
    int rc = mdb_cursor_get(urls.get(), &k, &v, MDB_SET_RANGE);
    for (; rc == 0 && View(k).starts_with(prefix);
         rc = mdb_cursor_get(urls.get(), &k, &v, MDB_NEXT)) {
      if (v.mv_size != 8) return DataLossError("a urls value is not 8 bytes; run shingled check");
      const UrlId url = GetBE64(static_cast<const char*>(v.mv_data));
      const std::string_view key = View(k);

      // The URL's versions: seen in this sweep or a later one, and the last.
      bool seen = false;
      std::optional<VersionRecord> last;
      uint32_t last_seq = 0;
      std::string from = VersionKey(url, 0);
      MDB_val vk = Val(from), vv;
      int vrc = mdb_cursor_get(versions.get(), &vk, &vv, MDB_SET_RANGE);
      for (; vrc == 0; vrc = mdb_cursor_get(versions.get(), &vk, &vv, MDB_NEXT)) {
        UrlId of = 0;
        uint32_t seq = 0;
        SHINGLED_RETURN_IF_ERROR(DecodeVersionKey(View(vk), &of, &seq));
        if (of != url) break;
        StatusOr<VersionRecord> ver = DecodeVersion(View(vv));
        if (!ver.ok()) return ver.status();
        StatusOr<bool> l = is_later(ver->sweep);
        if (!l.ok()) return l.status();
        if (ver->sweep == id || *l) seen = true;
        last = std::move(ver).value();
        last_seq = seq;
      }
      if (vrc != 0 && vrc != MDB_NOTFOUND) return ops.Fail(vrc, "versions");
      if (!GoneAtClose(seen, last ? &*last : nullptr, end)) continue;

      std::string_view name = key;
      if (key.size() >= kMaxWholeUrlKey) {
        // A long URL's key holds its start and a hash: its bytes are in url_names. The lookup
        // leaves the urls cursor where it is.
        SHINGLED_RETURN_IF_ERROR(ops.Get(d.url_names, Key64(url).view(), &name, "url_names"));
      }
      if (may_be_gone && !may_be_gone(name)) continue;
      SHINGLED_RETURN_IF_ERROR(visit(GoneUrl{url, last_seq + 1, name}));
    }
    if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "urls");
  }
  return OkStatus();
}

Status UpgradeSweepsToFormat8(TxnOps& ops) {
  const Dbis& d = ops.dbis();
  std::map<SweepId, SweepRecord> sweeps;
  {
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.sweeps); rc != 0) return ops.Fail(rc, "sweeps cursor");
    MDB_val k, v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
      StatusOr<SweepId> id = StoredSweepId(View(k), "a sweeps key");
      if (!id.ok()) return id.status();
      StatusOr<SweepRecord> rec = DecodeSweep(View(v), /*format7=*/true);
      if (!rec.ok()) return rec.status();
      sweeps.emplace(*id, std::move(rec).value());
    }
    if (rc != MDB_NOTFOUND) return ops.Fail(rc, "sweeps");
  }
  if (sweeps.empty()) return OkStatus();
  // A sweep starts no later than its earliest version (a WARC imported without a date opened
  // its sweep at the time of the import, after the records it holds).
  {
    Cursor c;
    if (int rc = c.Open(ops.txn(), d.versions); rc != 0) return ops.Fail(rc, "versions cursor");
    MDB_val k, v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT)) {
      StatusOr<VersionRecord> ver = DecodeVersion(View(v));
      if (!ver.ok()) return ver.status();
      auto it = sweeps.find(ver->sweep);
      if (it != sweeps.end() && ver->date < it->second.start) it->second.start = ver->date;
    }
    if (rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
  }
  for (const auto& [id, rec] : sweeps) {
    SHINGLED_RETURN_IF_ERROR(ops.Put(d.sweeps, SweepKey(id), EncodeSweep(rec), 0, "sweeps"));
  }
  return OkStatus();
}

}  // namespace shingled::store::internal
