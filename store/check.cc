// Store: Check (every invariant of FORMAT.md) and Backup.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "store/internal/chunks.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/forget_rules.h"
#include "store/internal/store_impl.h"
#include "store/internal/templates.h"
#include "store/internal/verify.h"
#include "store/internal/write_buffer.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

using internal::Cursor;
using internal::DocumentRecord;
using internal::GetBE32;
using internal::GetBE64;
using internal::GetLE64;
using internal::Key64;
using internal::SweepRecord;
using internal::TxnOps;
using internal::Val;
using internal::VersionRecord;
using internal::View;

namespace {

constexpr size_t kMaxProblems = 1000;

class Checker {
 public:
  explicit Checker(TxnOps& ops) : ops_(ops), d_(ops.dbis()) {}

  Status Run() {
    // Invariant 10: the B-trees hold a document's postings (fingerprints) of a slice up to the
    // slice's watermark, the write buffer (rebuilt from the documents) those above it.
    SHINGLED_RETURN_IF_ERROR(ReadMarks(internal::ReadWatermarks, "posting", &marks_, &marks_ok_));
    SHINGLED_RETURN_IF_ERROR(
        ReadMarks(internal::ReadFingerprintWatermarks, "fingerprint", &fp_marks_, &fp_marks_ok_));
    SHINGLED_RETURN_IF_ERROR(
        ReadMarks(internal::ReadChunkWatermarks, "chunk posting", &chunk_marks_, &chunk_marks_ok_));
    StatusOr<std::shared_ptr<const internal::WriteBuffer>> built =
        internal::BuildWriteBuffer(ops_, marks_, fp_marks_, chunk_marks_);
    if (!built.ok()) return built.status();
    buffer_ = std::move(built).value();
    SHINGLED_RETURN_IF_ERROR(CheckDocuments());
    SHINGLED_RETURN_IF_ERROR(CheckRepDocs());
    SHINGLED_RETURN_IF_ERROR(CheckPostings());
    SHINGLED_RETURN_IF_ERROR(CheckFingerprintEntries());
    SHINGLED_RETURN_IF_ERROR(CheckCommonValues());
    SHINGLED_RETURN_IF_ERROR(CheckClusters());
    SHINGLED_RETURN_IF_ERROR(CheckUrlsAndVersions());
    SHINGLED_RETURN_IF_ERROR(CheckLinks());
    // Invariant 11: the file-chunk graph.
    SHINGLED_RETURN_IF_ERROR(
        internal::CheckChunks(ops_, *buffer_, [this](std::string p) { Problem(std::move(p)); }));
    // Invariant 12: the verification samples.
    SHINGLED_RETURN_IF_ERROR(
        internal::CheckVerifySamples(ops_, [this](std::string p) { Problem(std::move(p)); }));
    // Invariant 13: the template marks.
    SHINGLED_RETURN_IF_ERROR(
        internal::CheckTemplates(ops_, [this](std::string p) { Problem(std::move(p)); }));
    SHINGLED_RETURN_IF_ERROR(CheckForgetRecords());
    return CheckMeta();
  }
  std::vector<std::string> TakeProblems() { return std::move(problems_); }

 private:
  void Problem(std::string p) {
    if (problems_.size() < kMaxProblems) {
      problems_.push_back(std::move(p));
    } else if (problems_.size() == kMaxProblems) {
      problems_.push_back("more problems not listed");
    }
  }
  static std::string Doc(DocId d) { return "document " + std::to_string(d); }
  // Reads a set of watermarks with `read`. Damaged ones are a problem, and are replaced by
  // UINT64_MAX: the rest is checked as if the B-trees held every `what`.
  Status ReadMarks(Status (*read)(TxnOps&, internal::Watermarks*), const std::string& what,
                   internal::Watermarks* marks, bool* ok) {
    Status s = read(ops_, marks);
    if (s.ok()) return s;
    if (s.code() != StatusCode::kDataLoss) return s;
    Problem(std::string(s.message()) + " (the rest is checked as if the B-trees held every " +
            what + ")");
    marks->doc.fill(UINT64_MAX);
    *ok = false;
    return OkStatus();
  }
  std::string Watermark(uint64_t value) const {
    const int slice = internal::BufferSlice(value);
    return "slice " + std::to_string(slice) + ", document " + std::to_string(marks_.doc[slice]);
  }

  // The sizes FORMAT.md gives a database's keys and values; 0 for any size.
  struct Shape {
    size_t key = 0, value = 0;
  };
  static std::string SizeName(size_t n) { return n == 0 ? "any" : std::to_string(n); }

  // Calls fn(key, value) for every entry (every posting of a DUPSORT database) of the `shape`. An
  // entry of another shape is reported and skipped: the checks read fixed-width keys and values
  // without looking at their sizes, and a short one would make them read past it.
  template <typename Fn>
  Status ForEach(MDB_dbi dbi, const char* name, Shape shape, Fn&& fn) {
    Cursor c;
    if (int rc = c.Open(ops_.txn(), dbi); rc != 0) return ops_.Fail(rc, name);
    MDB_val k, v;
    int rc = mdb_cursor_get(c.get(), &k, &v, MDB_FIRST);
    while (rc == 0) {
      if ((shape.key != 0 && k.mv_size != shape.key) ||
          (shape.value != 0 && v.mv_size != shape.value)) {
        Problem(std::string(name) + " has an entry of " + std::to_string(k.mv_size) + " + " +
                std::to_string(v.mv_size) + " bytes (key + value), not " + SizeName(shape.key) +
                " + " + SizeName(shape.value));
      } else {
        SHINGLED_RETURN_IF_ERROR(fn(View(k), View(v)));
      }
      rc = mdb_cursor_get(c.get(), &k, &v, MDB_NEXT);
    }
    if (rc != MDB_NOTFOUND) return ops_.Fail(rc, name);
    return OkStatus();
  }

  // Whether the posting index `dbi` files `doc` under `value`.
  StatusOr<bool> HasPosting(MDB_dbi dbi, uint64_t value, uint64_t doc) {
    internal::PostingKey k(value);
    internal::Posting p(value, doc);
    MDB_val kv = Val(k.view()), pv = Val(p.view());
    Cursor c;
    if (int rc = c.Open(ops_.txn(), dbi); rc != 0) return ops_.Fail(rc, "cursor");
    int rc = mdb_cursor_get(c.get(), &kv, &pv, MDB_GET_BOTH);
    if (rc == MDB_NOTFOUND) return false;
    if (rc != 0) return ops_.Fail(rc, "postings");
    return true;
  }

  // The document fingerprint index `index` (`dbi`) maps `fp` to: its B-tree's, else its
  // buffer's; 0 for none.
  StatusOr<DocId> FingerprintDoc(int index, MDB_dbi dbi, const dedup::Fingerprint128& fp) {
    std::string_view v;
    Status s = ops_.Get(dbi, internal::FingerprintKey(fp), &v, "fingerprint");
    if (s.code() == StatusCode::kNotFound) return buffer_->FindFingerprint(index, fp);
    if (!s.ok()) return s;
    return v.size() == 8 ? GetBE64(v.data()) : 0;  // the wrong size is reported by ForEach
  }

  DocId Holder(DocId d) const {
    auto it = rep_.find(d);
    return it == rep_.end() ? 0 : (it->second == 0 ? d : it->second);
  }

  Status CheckDocuments() {
    std::vector<std::pair<DocId, DocumentRecord>> records;
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.documents, "documents", {8, 0}, [&](std::string_view k, std::string_view v) {
          DocId id = GetBE64(k.data());
          last_doc_ = std::max(last_doc_, id);
          StatusOr<DocumentRecord> rec = internal::DecodeDocument(v);
          if (!rec.ok()) {
            Problem(Doc(id) + ": " + rec.status().message());
            return OkStatus();
          }
          rep_[id] = rec->rep;
          records.emplace_back(id, std::move(rec).value());
          return OkStatus();
        }));
    documents_ = rep_.size();
    for (auto& [id, rec] : records) {
      if (!rec.has_sketch()) {
        auto it = rep_.find(rec.rep);
        if (it == rep_.end() || it->second != 0) Problem(Doc(id) + ": representative " + std::to_string(rec.rep) + " is not a document with a sketch");
      }
      StatusOr<DocId> fp = FingerprintDoc(internal::kFpIdentical, d_.fp_identical, rec.identical);
      if (!fp.ok()) return fp.status();
      if (*fp != id) Problem(Doc(id) + ": fp_identical maps its fingerprint to " + std::to_string(*fp));
      for (auto [index, dbi, name, fpv, applies, owns] :
           {std::tuple{internal::kFpLexical, d_.fp_lexical, "fp_lexical", rec.lexical,
                       rec.tokens > 0, rec.owns_lexical},
            std::tuple{internal::kFpShingle, d_.fp_shingle, "fp_shingle", rec.shingle,
                       rec.shingles > 0, rec.owns_shingle}}) {
        if (owns && !applies)
          Problem(Doc(id) + ": owns its " + name + " fingerprint but has no " +
                  (index == internal::kFpLexical ? "tokens" : "shingles"));
        if (!applies) continue;
        StatusOr<DocId> got = FingerprintDoc(index, dbi, fpv);
        if (!got.ok()) return got.status();
        if (owns && *got != id) {
          Problem(Doc(id) + ": owns its " + name + " fingerprint, which maps to " +
                  std::to_string(*got));
        } else if (*got == 0 || (*got != id && Holder(*got) != Holder(id))) {
          Problem(Doc(id) + ": " + name + " maps its fingerprint to " + std::to_string(*got) + ", not to its group");
        }
      }
      if (!rec.has_sketch()) continue;
      std::vector<uint64_t> indexed_sample;
      internal::IndexedSample(rec.sample.values, rec.sample.log2_modulus, &indexed_sample);
      for (auto [dbi, name, values] :
           {std::tuple{d_.features, "features", &rec.features},
            std::tuple{d_.supershingles, "supershingles", &rec.supershingles},
            std::tuple{d_.samples, "samples", &indexed_sample}}) {
        for (uint64_t value : *values) {
          StatusOr<bool> has = HasPosting(dbi, value, id);
          if (!has.ok()) return has.status();
          const bool below = id <= marks_.doc[internal::BufferSlice(value)];
          if (below && !*has)
            Problem(Doc(id) + ": missing from " + name + " under " + std::to_string(value));
          if (!below && *has) {
            Problem(Doc(id) + ": in " + name + " under " + std::to_string(value) +
                    ", above the watermark of its slice (" + Watermark(value) + ")");
          }
        }
      }
    }
    return OkStatus();
  }

  // Invariant 15: `rep_docs` files each document that names a representative under it, and
  // nothing else.
  Status CheckRepDocs() {
    std::unordered_set<DocId> filed;
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.rep_docs, "rep_docs", {8, 8}, [&](std::string_view k, std::string_view v) {
          const DocId holder = GetBE64(k.data()), doc = GetBE64(v.data());
          auto it = rep_.find(doc);
          if (it == rep_.end() || it->second != holder) {
            Problem("rep_docs files " + Doc(doc) + " under " + std::to_string(holder) +
                    ", which is not its representative");
          } else {
            filed.insert(doc);
          }
          return OkStatus();
        }));
    for (const auto& [doc, rep] : rep_) {
      if (rep != 0 && !filed.contains(doc))
        Problem(Doc(doc) + ": names representative " + std::to_string(rep) +
                " but rep_docs does not file it there");
    }
    return OkStatus();
  }

  Status CheckPostings() {
    for (auto [dbi, name] : {std::pair{d_.features, "features"}, std::pair{d_.supershingles, "supershingles"},
                             std::pair{d_.samples, "samples"}}) {
      const Shape posting{internal::kPostingKeySize, internal::kPostingSize};
      SHINGLED_RETURN_IF_ERROR(
          // `name = name`: clang before 16 (14 builds the fuzzers) does not let a lambda capture
          // a structured binding (C++20, P1091).
          ForEach(dbi, name, posting, [&, name = name](std::string_view k, std::string_view v) {
            DocId d = internal::PostingDoc(v);
            const uint64_t value = internal::PostingValue(k, v);
            auto it = rep_.find(d);
            if (it == rep_.end() || it->second != 0) {
              Problem(std::string(name) + " posting under " + std::to_string(value) + " names " +
                      Doc(d) + ", not a document with a sketch");
            } else if (d > marks_.doc[internal::BufferSlice(value)]) {
              Problem(std::string(name) + " posting under " + std::to_string(value) + " names " +
                      Doc(d) + ", above the watermark of its slice (" + Watermark(value) + ")");
            }
            return OkStatus();
          }));
    }
    return OkStatus();
  }

  Status CheckFingerprintEntries() {
    for (auto [dbi, name] : {std::pair{d_.fp_identical, "fp_identical"}, std::pair{d_.fp_lexical, "fp_lexical"},
                             std::pair{d_.fp_shingle, "fp_shingle"}}) {
      SHINGLED_RETURN_IF_ERROR(
          ForEach(dbi, name, {16, 8}, [&, name = name](std::string_view k, std::string_view v) {
            DocId d = GetBE64(v.data());
            const int slice = internal::BufferSlice(GetBE64(k.data()));
            if (!rep_.contains(d)) {
              Problem(std::string(name) + " entry names missing " + Doc(d));
            } else if (d > fp_marks_.doc[slice]) {
              Problem(std::string(name) + " entry names " + Doc(d) +
                      ", above the watermark of its slice (slice " + std::to_string(slice) +
                      ", document " + std::to_string(fp_marks_.doc[slice]) + ")");
            }
            return OkStatus();
          }));
    }
    return OkStatus();
  }

  Status CheckCommonValues() {
    Cursor c;
    if (int rc = c.Open(ops_.txn(), d_.samples); rc != 0) return ops_.Fail(rc, "samples");
    return ForEach(
        d_.common_values, "common_values", {8, 8}, [&](std::string_view k, std::string_view v) {
          std::vector<DocId> docs;
          size_t n = 0;
          bool more = false;
          if (int rc = internal::ReadValuePostings(c.get(), GetBE64(k.data()), SIZE_MAX, &docs, &n,
                                                   &more);
              rc != 0) {
            return ops_.Fail(rc, "samples");
          }
          // The count takes the buffered postings too.
          size_t buffered = 0;
          buffer_->Read(internal::kBufferSamples, GetBE64(k.data()), SIZE_MAX, &docs, &buffered,
                        &more);
          n += buffered;
          uint64_t stored = GetLE64(v.data());
          if (stored != n) {
            Problem("common_values lists " + std::to_string(GetBE64(k.data())) + " with count " +
                    std::to_string(stored) + " but it has " + std::to_string(n) + " postings");
          }
          return OkStatus();
        });
  }

  Status CheckClusters() {
    std::unordered_map<DocId, DocId> parent;
    SHINGLED_RETURN_IF_ERROR(ForEach(d_.cluster_parent, "cluster_parent", {8, 8},
                                     [&](std::string_view k, std::string_view v) {
                                       parent[GetBE64(k.data())] = GetBE64(v.data());
                                       return OkStatus();
                                     }));
    std::map<DocId, std::set<DocId>> members;
    SHINGLED_RETURN_IF_ERROR(ForEach(d_.cluster_members, "cluster_members", {8, 8},
                                     [&](std::string_view k, std::string_view v) {
                                       members[GetBE64(k.data())].insert(GetBE64(v.data()));
                                       return OkStatus();
                                     }));
    clusters_ = members.size();
    std::map<DocId, std::set<DocId>> from_parents;
    for (auto [d, p] : parent) {
      if (!rep_.contains(d)) Problem("cluster_parent names missing " + Doc(d));
      auto it = parent.find(p);
      if (it == parent.end() || it->second != p) Problem(Doc(d) + ": cluster parent " + std::to_string(p) + " is not a root");
      from_parents[p].insert(d);
    }
    if (from_parents != members) {
      for (auto& [root, set] : members) {
        auto it = from_parents.find(root);
        if (it == from_parents.end() || it->second != set) {
          Problem("cluster " + std::to_string(root) + ": member list (" + std::to_string(set.size()) +
                  ") differs from the documents whose parent it is (" +
                  std::to_string(it == from_parents.end() ? 0 : it->second.size()) + ")");
        }
      }
      for (auto& [root, set] : from_parents) {
        if (!members.contains(root)) Problem("cluster " + std::to_string(root) + " has members but no member list");
      }
    }
    for (auto& [root, set] : members) {
      if (set.size() < 2) Problem("cluster " + std::to_string(root) + " has a member list of one");
    }
    return OkStatus();
  }

  Status CheckUrlsAndVersions() {
    std::unordered_map<UrlId, std::string> names;
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.url_names, "url_names", {8, 0}, [&](std::string_view k, std::string_view v) {
          names[GetBE64(k.data())] = std::string(v);
          return OkStatus();
        }));
    uint64_t url_keys = 0;
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.urls, "urls", {0, 8}, [&](std::string_view, std::string_view v) {
          ++url_keys;
          UrlId id = GetBE64(v.data());
          if (!names.contains(id))
            Problem("urls entry names url id " + std::to_string(id) + " without a name");
          return OkStatus();
        }));
    for (auto& [id, name] : names) {
      std::string_view v;
      Status s = ops_.Get(d_.urls, internal::UrlKey(name), &v, "urls");
      if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
      if (!s.ok() || v.size() != 8 || GetBE64(v.data()) != id)
        Problem("url " + name + " (id " + std::to_string(id) + ") is not in urls");
    }
    if (url_keys != names.size()) Problem("urls has " + std::to_string(url_keys) + " entries, url_names " + std::to_string(names.size()));
    urls_ = names.size();

    std::map<SweepId, SweepRecord> recorded, counted;
    std::unordered_map<std::string, SweepId> by_name;
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.sweeps, "sweeps", {4, 0}, [&](std::string_view k, std::string_view v) {
          SweepId id = GetBE32(k.data());
          StatusOr<SweepRecord> rec = internal::DecodeSweep(v);
          if (!rec.ok()) {
            Problem("sweep " + std::to_string(id) + ": " + rec.status().message());
            return OkStatus();
          }
          counted[id].name = rec->name;
          recorded[id] = std::move(rec).value();
          return OkStatus();
        }));
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.sweep_names, "sweep_names", {0, 4}, [&](std::string_view k, std::string_view v) {
          SweepId id = GetBE32(v.data());
          auto it = recorded.find(id);
          if (it == recorded.end() || it->second.name != k)
            Problem("sweep_names entry " + std::string(k) + " does not match sweep " +
                    std::to_string(id));
          by_name[std::string(k)] = id;
          return OkStatus();
        }));
    if (by_name.size() != recorded.size()) Problem("sweep_names and sweeps differ in size");

    // Every (document, url) a version names, with the first such version's seq.
    std::map<std::pair<DocId, UrlId>, uint32_t> pairs;
    UrlId current = 0;
    uint32_t expected = 1;
    std::optional<VersionRecord> previous;  // the URL's version before this one
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.versions, "versions", {12, 0}, [&](std::string_view k, std::string_view v) {
          ++versions_;
          UrlId url = GetBE64(k.data());
          uint32_t seq = GetBE32(k.data() + 8);
          if (url != current) {
            current = url;
            expected = 1;
            previous.reset();
            if (!names.contains(url)) Problem("versions of unknown url id " + std::to_string(url));
          }
          if (seq != expected)
            Problem("url id " + std::to_string(url) + ": version " + std::to_string(seq) +
                    " where " + std::to_string(expected) + " was expected");
          expected = seq + 1;
          StatusOr<VersionRecord> ver = internal::DecodeVersion(v);
          if (!ver.ok()) {
            Problem("url id " + std::to_string(url) + " version " + std::to_string(seq) + ": " +
                    ver.status().message());
            return OkStatus();
          }
          if (std::string what = VersionShapeProblem(*ver, previous); !what.empty()) {
            Problem("url id " + std::to_string(url) + " version " + std::to_string(seq) + ": " +
                    what);
          }
          if (ver->doc != 0) {
            if (!rep_.contains(ver->doc))
              Problem("url id " + std::to_string(url) + " version " + std::to_string(seq) +
                      " names missing " + Doc(ver->doc));
            pairs.try_emplace({ver->doc, url}, seq);
          }
          auto it = counted.find(ver->sweep);
          if (it == counted.end()) {
            Problem("url id " + std::to_string(url) + " version " + std::to_string(seq) +
                    " names unknown sweep " + std::to_string(ver->sweep));
          } else {
            it->second.Count(ver->verdict);
            CheckVersionDates(url, seq, *ver, recorded[ver->sweep],
                              previous ? previous->date : INT64_MIN);
          }
          previous = std::move(ver).value();
          return OkStatus();
        }));
    std::set<std::pair<DocId, UrlId>> listed;
    SHINGLED_RETURN_IF_ERROR(
        ForEach(d_.doc_urls, "doc_urls", {8, 8}, [&](std::string_view k, std::string_view v) {
          std::pair<DocId, UrlId> p{GetBE64(k.data()), GetBE64(v.data())};
          listed.insert(p);
          if (!pairs.contains(p))
            Problem("doc_urls entry (" + std::to_string(p.first) + ", " + std::to_string(p.second) +
                    ") has no version");
          return OkStatus();
        }));
    for (const auto& [p, seq] : pairs) {
      if (!listed.contains(p)) {
        Problem("url id " + std::to_string(p.second) + " version " + std::to_string(seq) +
                ": (document " + std::to_string(p.first) + ", url id " + std::to_string(p.second) +
                ") is not in doc_urls");
      }
    }
    for (auto& [id, rec] : recorded) {
      if (!rec.open && rec.end < rec.start) {
        Problem("sweep " + rec.name + " ends (" + std::to_string(rec.end) + ") before it starts (" +
                std::to_string(rec.start) + ")");
      }
      const SweepRecord& c = counted[id];
      if (c.pages != rec.pages || c.new_docs != rec.new_docs || c.unchanged != rec.unchanged ||
          c.duplicate != rec.duplicate || c.near_duplicate != rec.near_duplicate || c.gone != rec.gone) {
        Problem("sweep " + rec.name + ": recorded counts (pages " + std::to_string(rec.pages) + ") differ from its versions (pages " + std::to_string(c.pages) + ")");
      }
    }
    return OkStatus();
  }

  // The order of dates (FORMAT.md, invariant 8): a version is not dated before its sweep's
  // start; a gone version a close wrote (status 0) is dated at its closed sweep's end, not
  // before the version it follows.
  void CheckVersionDates(UrlId url, uint32_t seq, const VersionRecord& ver,
                         const SweepRecord& sweep, int64_t previous_date) {
    const std::string where = "url id " + std::to_string(url) + " version " + std::to_string(seq);
    if (ver.date < sweep.start) {
      Problem(where + " is dated " + std::to_string(ver.date) + ", before the start of its sweep " +
              sweep.name + " (" + std::to_string(sweep.start) + ")");
    }
    if (ver.verdict != Verdict::kGone || ver.http_status != 0) return;
    if (sweep.open || ver.date != sweep.end) {
      Problem(where + " is gone from sweep " + sweep.name + " but not dated at its close");
    }
    if (ver.date < previous_date) {
      Problem(where + " is gone at " + std::to_string(ver.date) +
              ", before the version it follows (" + std::to_string(previous_date) + ")");
    }
  }

  // What is wrong with a version's fields for its verdict (FORMAT.md, invariant 7), given the
  // URL's version before it; empty if nothing.
  static std::string VersionShapeProblem(const VersionRecord& v,
                                         const std::optional<VersionRecord>& previous) {
    const std::string verdict(VerdictName(v.verdict));
    switch (v.verdict) {
      case Verdict::kNew:
      case Verdict::kUnchanged:
      case Verdict::kDuplicate:
      case Verdict::kNearDuplicate:
        if (v.doc == 0) return verdict + " without a document";
        break;
      case Verdict::kGone:
      case Verdict::kRedirect:
        if (v.doc != 0) return verdict + " names document " + std::to_string(v.doc);
        break;
      case Verdict::kFailed:
        // The content the URL showed before the attempt, or none.
        if (v.doc != 0 &&
            !(previous && internal::LiveVersion(*previous) && previous->doc == v.doc)) {
          return "failed names document " + std::to_string(v.doc) +
                 ", not the live document of the version before it";
        }
        break;
    }
    if (!v.redirect_target.empty() && v.verdict != Verdict::kRedirect) {
      return verdict + " has a redirect target";
    }
    return {};
  }

  // Each link is filed once, under the later of its two documents (FORMAT.md, "Links").
  Status CheckLinks() {
    return ForEach(d_.links, "links", {8, internal::kLinkSize},
                   [&](std::string_view k, std::string_view v) {
                     DocId a = GetBE64(k.data()), b = 0;
                     double r = 0;
                     internal::DecodeLink(v, &b, &r);
                     if (!rep_.contains(a) || !rep_.contains(b))
                       Problem("link " + std::to_string(a) + " - " + std::to_string(b) +
                               " names a missing document");
                     if (b >= a)
                       Problem("link " + std::to_string(a) + " - " + std::to_string(b) +
                               " is not under the later document");
                     return OkStatus();
                   });
  }

  // Invariant 14: every forget record decodes, and the counts of a retention pass in progress.
  Status CheckForgetRecords() {
    if (StatusOr<ForgetRecord> pass = internal::ReadRetentionPass(ops_); !pass.ok()) {
      if (pass.status().code() != StatusCode::kDataLoss) return pass.status();
      Problem(std::string(pass.status().message()));
    }
    return ForEach(d_.forgets, "forgets", {8, 0}, [&](std::string_view k, std::string_view v) {
      StatusOr<ForgetRecord> r = internal::DecodeForgetRecord(GetBE64(k.data()), v);
      if (!r.ok()) Problem(std::string(r.status().message()));
      return OkStatus();
    });
  }

  Status CheckMeta() {
    std::string_view v;
    for (const char* key :
         {"format_version", "param.shingle_size", "param.feature_groups", "param.group_size",
          "param.fungible_threshold", "param.seed", "param.min_sample_size",
          "param.supershingle_span", "param.supershingle_window", "param.mod_sample_max",
          "param.rabin_polynomial", "param.chunk_input", "param.chunk_min", "param.chunk_max",
          "param.chunk_divisor", "param.chunk_backup_divisor", internal::kVerifySampleSizeKey}) {
      Status s = ops_.Get(d_.meta, key, &v, key);
      if (s.code() == StatusCode::kNotFound) Problem(std::string("meta lacks ") + key);
      else if (!s.ok()) return s;
    }
    for (auto [key, actual] : {std::pair{"count.documents", documents_}, std::pair{"count.urls", urls_},
                               std::pair{"count.versions", versions_}, std::pair{"count.clusters", clusters_}}) {
      Status s = ops_.Get(d_.meta, key, &v, key);
      if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
      if (!s.ok()) {
        Problem(std::string("meta lacks ") + key);
      } else if (v.size() != 8) {
        Problem(std::string("meta ") + key + " is not 8 bytes");
      } else if (GetLE64(v.data()) != actual) {
        Problem(std::string("meta ") + key + " is " + std::to_string(GetLE64(v.data())) +
                ", the store has " + std::to_string(actual));
      }
    }
    StatusOr<uint64_t> largest = internal::LargestClusterByScan(ops_);
    if (!largest.ok()) return largest.status();
    // The last document id given: a takedown may have removed the last document.
    StatusOr<uint64_t> last_given =
        internal::LastAllocatedId(ops_, d_.documents, "documents", internal::kLastDocumentKey);
    if (!last_given.ok()) return last_given.status();
    last_doc_ = std::max(last_doc_, *last_given);
    for (auto [ok, marks, key] :
         {std::tuple{marks_ok_, &marks_, internal::kBufferWatermarksKey},
          std::tuple{fp_marks_ok_, &fp_marks_, internal::kFingerprintWatermarksKey},
          std::tuple{chunk_marks_ok_, &chunk_marks_, internal::kChunkWatermarksKey}}) {
      if (!ok) continue;
      for (int slice = 0; slice < internal::kBufferSlices; ++slice) {
        if (marks->doc[slice] > last_doc_) {
          Problem(std::string("meta ") + key + ": slice " + std::to_string(slice) +
                  " is at document " + std::to_string(marks->doc[slice]) +
                  ", past the last document, " + std::to_string(last_doc_));
        }
      }
    }
    Status s = ops_.Get(d_.meta, internal::kLargestClusterKey, &v, internal::kLargestClusterKey);
    if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
    if (!s.ok()) {
      Problem(std::string("meta lacks ") + internal::kLargestClusterKey);
    } else if (v.size() != 8 || GetLE64(v.data()) != *largest) {
      Problem(std::string("meta ") + internal::kLargestClusterKey + " is " +
              (v.size() == 8 ? std::to_string(GetLE64(v.data())) : "not 8 bytes") +
              ", the largest cluster has " + std::to_string(*largest) + " documents");
    }
    return OkStatus();
  }

  TxnOps& ops_;
  const internal::Dbis& d_;
  std::vector<std::string> problems_;
  std::unordered_map<DocId, DocId> rep_;  // every document -> its rep (0: has a sketch)
  DocId last_doc_ = 0;
  internal::Watermarks marks_, fp_marks_, chunk_marks_;
  bool marks_ok_ = true, fp_marks_ok_ = true, chunk_marks_ok_ = true;
  // The write buffer, rebuilt from the documents and doc_chunks and the marks above.
  std::shared_ptr<const internal::WriteBuffer> buffer_;
  uint64_t documents_ = 0, urls_ = 0, versions_ = 0, clusters_ = 0;
};

}  // namespace

StatusOr<std::vector<std::string>> LmdbStore::Check() const {
  StatusOr<internal::ReadTxn> txn = impl_->BeginRead();
  if (!txn.ok()) return txn.status();
  TxnOps ops(txn->txn.get(), impl_->dbis_);
  Checker checker(ops);
  SHINGLED_RETURN_IF_ERROR(checker.Run());
  return checker.TakeProblems();
}

Status LmdbStore::Backup(const std::string& dest) const {
  std::error_code ec;
  if (!std::filesystem::is_directory(dest, ec)) {
    return InvalidArgumentError("backup destination " + dest + " is not a directory");
  }
  const std::filesystem::path final_path = std::filesystem::path(dest) / "data.mdb";
  if (std::filesystem::exists(final_path, ec)) {
    return AlreadyExistsError("backup destination " + dest + " already holds a store");
  }
  // The copy is written under another name, made durable, then renamed: a backup that fails
  // (a full disk) or is killed midway leaves no data.mdb that would pass for a store.
  const std::string partial = (std::filesystem::path(dest) / "data.mdb.partial").string();
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return internal::LmdbStatus(errno, "backup: cannot create " + partial);
  int rc;
  {
    // Holding the resize lock shared keeps the map stable while LMDB copies in its own read
    // transaction; writers go on.
    std::shared_lock<std::shared_mutex> lock(impl_->resize_mu_);
    rc = mdb_env_copyfd2(impl_->env_, fd, MDB_CP_COMPACT);
  }
  if (rc == 0 && ::fsync(fd) != 0) rc = errno;
  if (::close(fd) != 0 && rc == 0) rc = errno;
  if (rc == 0 && std::rename(partial.c_str(), final_path.c_str()) != 0) rc = errno;
  if (rc != 0) {
    ::unlink(partial.c_str());
    return internal::LmdbStatus(rc, "backup to " + dest);
  }
  // The rename is durable once the directory is.
  const int dir_fd = ::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return internal::LmdbStatus(errno, "backup: cannot open " + dest);
  rc = ::fsync(dir_fd) != 0 ? errno : 0;
  ::close(dir_fd);
  return internal::LmdbStatus(rc, "backup: fsync of " + dest);
}

}  // namespace shingled::store
