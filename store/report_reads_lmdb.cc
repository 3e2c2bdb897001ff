// The LMDB store's ReportReads (store/internal/report_reads.h): the reads of the change reports
// and of lost and found, in read transactions. A walk reads kUrlsPerTxn URLs per transaction; a
// batch (Holders) is one transaction; lost and found pins one transaction for its whole search.
#include <algorithm>
#include <optional>

#include "dedup/estimate.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/queries.h"
#include "store/internal/report_reads.h"
#include "store/internal/store_impl.h"

namespace shingled::store::internal {

namespace {

// URLs per read transaction of a walk: long enough to amortize opening one (~1 us), short
// enough that a map growth waits a few milliseconds at most.
constexpr size_t kUrlsPerTxn = 2048;

class LmdbReads final : public ReportReads {
 public:
  explicit LmdbReads(const StoreImpl& impl) : impl_(impl) {}

  Status Pin() {
    StatusOr<ReadTxn> txn = impl_.BeginRead();
    if (!txn.ok()) return txn.status();
    pinned_.emplace(std::move(*txn));
    return OkStatus();
  }

  Status Walk(UrlId after, const WantName& want_name, const BlockVisitor& visit,
              std::atomic<uint64_t>* walked) const override {
    UrlId next = after + 1;
    bool done = after == UINT64_MAX;
    std::vector<WalkedUrl> block;
    while (!done) {
      block.clear();
      const Status read = InTxn([&](TxnOps& ops) -> Status {
        Cursor c;
        if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0) {
          return ops.Fail(rc, "versions cursor");
        }
        const std::string start = VersionKey(next, 0);
        MDB_val k = Val(start), v;
        int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
        // The URL read last is complete: its name, when wanted, and counted.
        auto finish = [&]() -> Status {
          if (block.empty()) return OkStatus();
          WalkedUrl& u = block.back();
          if (walked != nullptr) walked->fetch_add(1);
          if (want_name && want_name(u.id, u.versions)) {
            std::string_view name;
            SHINGLED_RETURN_IF_ERROR(
                ops.Get(ops.dbis().url_names, Key64(u.id).view(), &name, "url_names"));
            u.name = std::string(name);
          }
          return OkStatus();
        };
        while (true) {
          if (rc == MDB_NOTFOUND) {
            done = true;
            return finish();
          }
          if (rc != 0) return ops.Fail(rc, "versions");
          UrlId url = 0;
          uint32_t seq = 0;
          SHINGLED_RETURN_IF_ERROR(DecodeVersionKey(View(k), &url, &seq));
          if (block.empty() || url != block.back().id) {
            SHINGLED_RETURN_IF_ERROR(finish());
            if (block.size() == kUrlsPerTxn) {
              next = url;
              return OkStatus();
            }
            block.push_back(WalkedUrl{.id = url, .name = {}, .versions = {}});
          }
          StatusOr<VersionRecord> ver = DecodeVersion(View(v));
          if (!ver.ok()) return ver.status();
          block.back().versions.push_back(std::move(*ver));
          rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
        }
      });
      if (!read.ok()) return read;
      if (block.empty()) break;
      StatusOr<bool> go_on = visit(block);
      if (!go_on.ok()) return go_on.status();
      if (!*go_on) break;
    }
    return OkStatus();
  }

  StatusOr<SweepInfo> Sweep(SweepId id) const override {
    SweepInfo out;
    const Status read = InTxn([&](TxnOps& ops) -> Status {
      std::string_view v;
      SHINGLED_RETURN_IF_ERROR(
          ops.Get(ops.dbis().sweeps, SweepKey(id), &v, "sweep " + std::to_string(id)));
      StatusOr<SweepRecord> rec = DecodeSweep(v);
      if (!rec.ok()) return rec.status();
      out = SweepInfoOf(id, *rec);
      return OkStatus();
    });
    if (!read.ok()) return read;
    return out;
  }

  Status Holders(const std::vector<DocId>& docs, bool sketches,
                 std::vector<HeldSketch>* out) const override {
    out->clear();
    if (docs.empty()) return OkStatus();
    return InTxn([&](TxnOps& ops) -> Status {
      for (DocId d : docs) {
        HeldSketch h;
        StatusOr<DocumentRecord> rec = ReadSketchHolder(ops, d, &h.holder);
        if (!rec.ok()) return rec.status();
        if (sketches) SketchInto(*rec, &h.sketch);
        out->push_back(std::move(h));
      }
      return OkStatus();
    });
  }

  StatusOr<std::optional<UrlId>> FindUrl(std::string_view url) const override {
    std::optional<UrlId> out;
    const Status read = InTxn([&](TxnOps& ops) -> Status {
      StatusOr<UrlId> id = LookupUrl(ops, url);
      if (id.ok()) {
        out = *id;
        return OkStatus();
      }
      return id.status().code() == StatusCode::kNotFound ? OkStatus() : id.status();
    });
    if (!read.ok()) return read;
    return out;
  }

  StatusOr<WalkedUrl> ReadUrl(UrlId id) const override {
    WalkedUrl u;
    u.id = id;
    const Status read = InTxn([&](TxnOps& ops) -> Status {
      std::string_view name;
      SHINGLED_RETURN_IF_ERROR(ops.Get(ops.dbis().url_names, Key64(id).view(), &name, "url_names"));
      u.name = std::string(name);
      Cursor c;
      if (int rc = c.Open(ops.txn(), ops.dbis().versions); rc != 0) {
        return ops.Fail(rc, "versions cursor");
      }
      const std::string key = VersionKey(id, 0);
      MDB_val k = Val(key), v;
      int rc = mdb_cursor_get(c.get(), &k, &v, MDB_SET_RANGE);
      while (rc == 0) {
        if (k.mv_size < 8 || GetBE64(static_cast<const char*>(k.mv_data)) != id) break;
        UrlId url = 0;
        uint32_t seq = 0;
        SHINGLED_RETURN_IF_ERROR(DecodeVersionKey(View(k), &url, &seq));
        StatusOr<VersionRecord> ver = DecodeVersion(View(v));
        if (!ver.ok()) return ver.status();
        u.versions.push_back(std::move(*ver));
        rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
      }
      if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "versions");
      return OkStatus();
    });
    if (!read.ok()) return read;
    if (u.versions.empty()) {
      return DataLossError("url id " + std::to_string(id) + " (" + u.name + ") has no version");
    }
    return u;
  }

  StatusOr<ClusterId> ClusterOf(DocId doc) const override {
    ClusterId out = 0;
    const Status read = InTxn([&](TxnOps& ops) -> Status {
      StatusOr<ClusterId> c = FindCluster(ops, doc);
      if (!c.ok()) return c.status();
      out = *c;
      return OkStatus();
    });
    if (!read.ok()) return read;
    return out;
  }

  StatusOr<std::vector<DocId>> ClusterMembersOf(ClusterId root) const override {
    std::vector<DocId> out;
    const Status read = InTxn([&](TxnOps& ops) -> Status {
      StatusOr<std::vector<DocId>> m = ClusterMembers(ops, root);
      if (!m.ok()) return m.status();
      out = std::move(*m);
      return OkStatus();
    });
    if (!read.ok()) return read;
    return out;
  }

  Status QueryCandidates(DocId, const dedup::Sketch& sketch, size_t max, std::vector<DocId>* out,
                         bool* truncated) const override {
    return InTxn([&](TxnOps& ops) -> Status {
      StatusOr<std::shared_ptr<const WriteBuffer>> buffer = impl_.BufferFor(ops);
      if (!buffer.ok()) return buffer.status();
      StoreOptions search = impl_.options_;
      search.max_candidates = static_cast<uint32_t>(std::max<size_t>(1, max));
      return FindQueryCandidates(ops, search, **buffer, sketch, out, truncated);
    });
  }

  Status UrlsOfDoc(DocId doc, size_t max, std::vector<UrlId>* out, size_t* count) const override {
    return InTxn([&](TxnOps& ops) -> Status {
      Cursor doc_urls;
      if (int rc = doc_urls.Open(ops.txn(), ops.dbis().doc_urls); rc != 0) {
        return ops.Fail(rc, "doc_urls cursor");
      }
      if (int rc = ReadPostings(doc_urls.get(), Key64(doc).view(), max, out, count); rc != 0) {
        return ops.Fail(rc, "doc_urls");
      }
      return OkStatus();
    });
  }

  std::pair<double, double> Compare(const dedup::Sketch& a, const dedup::Sketch& b) const override {
    return {dedup::ResemblanceFromMinhashes(a, b),
            dedup::ContainmentsFromModSample(a.sample, b.sample).a_in_b};
  }

 private:
  // Runs `body` in the pinned transaction, or in one of its own.
  template <typename Body>
  Status InTxn(Body&& body) const {
    if (pinned_) {
      TxnOps ops(pinned_->txn.get(), impl_.dbis_);
      return body(ops);
    }
    StatusOr<ReadTxn> txn = impl_.BeginRead();
    if (!txn.ok()) return txn.status();
    TxnOps ops(txn->txn.get(), impl_.dbis_);
    return body(ops);
  }

  const StoreImpl& impl_;
  std::optional<ReadTxn> pinned_;
};

}  // namespace

StatusOr<std::unique_ptr<ReportReads>> LmdbReportReads(const StoreImpl& impl, bool pinned) {
  auto reads = std::make_unique<LmdbReads>(impl);
  if (pinned) SHINGLED_RETURN_IF_ERROR(reads->Pin());
  return std::unique_ptr<ReportReads>(std::move(reads));
}

}  // namespace shingled::store::internal
