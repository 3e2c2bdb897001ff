// Store: the file-chunk graph (format 9; FORMAT.md, "Chunks") and bytes in common
// (paper 003).
#include "store/internal/chunks.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "store/internal/codec.h"
#include "store/internal/store_impl.h"
#include "store/internal/templates.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

using internal::Cursor;
using internal::Key64;
using internal::TxnOps;
using internal::Val;
using internal::View;

std::string_view CommonRelationName(CommonRelation relation) {
  switch (relation) {
    case CommonRelation::kNone:
      return "none";
    case CommonRelation::kNearIdentical:
      return "near_identical";
    case CommonRelation::kAContainsB:
      return "a_contains_b";
    case CommonRelation::kBContainsA:
      return "b_contains_a";
    case CommonRelation::kOverlap:
      return "overlap";
  }
  return "unknown";
}

namespace {

uint64_t TotalLength(std::span<const dedup::Chunk> chunks) {
  uint64_t n = 0;
  for (const dedup::Chunk& c : chunks) n += c.length;
  return n;
}

}  // namespace

CommonBytes BytesInCommonOf(std::span<const dedup::Chunk> a, std::span<const dedup::Chunk> b,
                            size_t max_spans) {
  return BytesInCommonOf(a, b, max_spans, {});
}

CommonBytes BytesInCommonOf(std::span<const dedup::Chunk> a, std::span<const dedup::Chunk> b,
                            size_t max_spans, std::span<const uint64_t> templates) {
  CommonBytes out;
  out.a_known = !a.empty();
  out.b_known = !b.empty();
  out.length_a = TotalLength(a);
  out.length_b = TotalLength(b);
  if (a.empty() || b.empty()) return out;
  out.known = true;
  auto is_template = [&](uint64_t hash) {
    return !templates.empty() && std::binary_search(templates.begin(), templates.end(), hash);
  };
  if (!templates.empty()) {
    for (const dedup::Chunk& c : a) out.template_a += is_template(c.hash) ? c.length : 0;
    for (const dedup::Chunk& c : b) out.template_b += is_template(c.hash) ? c.length : 0;
  }
  // B's chunk occurrences by (hash, length), each with its offset, in B's order within a key: the
  // occurrences of a chunk are matched in order, the first in A with the first in B.
  struct Occurrence {
    uint64_t hash;
    uint32_t length;
    uint64_t offset;
  };
  std::vector<Occurrence> in_b;
  in_b.reserve(b.size());
  uint64_t offset = 0;
  for (const dedup::Chunk& c : b) {
    in_b.push_back(Occurrence{c.hash, c.length, offset});
    offset += c.length;
  }
  auto key = [](const Occurrence& o) { return std::tie(o.hash, o.length, o.offset); };
  std::sort(in_b.begin(), in_b.end(),
            [&](const Occurrence& x, const Occurrence& y) { return key(x) < key(y); });
  // The next unmatched occurrence of each key: an index into in_b.
  std::unordered_map<uint64_t, size_t> next;
  offset = 0;
  for (const dedup::Chunk& c : a) {
    const uint64_t offset_a = offset;
    offset += c.length;
    auto [it, inserted] = next.try_emplace(c.hash, 0);
    if (inserted) {
      it->second = static_cast<size_t>(
          std::lower_bound(
              in_b.begin(), in_b.end(), Occurrence{c.hash, c.length, 0},
              [&](const Occurrence& x, const Occurrence& y) { return key(x) < key(y); }) -
          in_b.begin());
    }
    size_t& i = it->second;
    // A 64-bit collision of two chunks of other lengths: skip the other lengths' occurrences.
    while (i < in_b.size() && in_b[i].hash == c.hash && in_b[i].length < c.length) ++i;
    if (i >= in_b.size() || in_b[i].hash != c.hash || in_b[i].length != c.length) continue;
    if (is_template(c.hash)) {
      out.template_bytes += c.length;
      ++out.template_chunks;
      ++i;
      continue;
    }
    out.shared_bytes += c.length;
    ++out.shared_chunks;
    if (out.spans.size() < max_spans) {
      out.spans.push_back(CommonSpan{offset_a, in_b[i].offset, c.length});
    }
    ++i;
  }
  out.spans_truncated = out.shared_chunks > out.spans.size();
  // A document all template has no content to share: its share is 0.
  const uint64_t content_a = out.length_a - out.template_a,
                 content_b = out.length_b - out.template_b;
  out.share_a =
      content_a == 0 ? 0 : static_cast<double>(out.shared_bytes) / static_cast<double>(content_a);
  out.share_b =
      content_b == 0 ? 0 : static_cast<double>(out.shared_bytes) / static_cast<double>(content_b);
  const bool a_high = out.share_a >= kCommonHighShare, b_high = out.share_b >= kCommonHighShare;
  if (out.shared_bytes == 0) {
    out.relation = CommonRelation::kNone;
  } else if (a_high && b_high) {
    out.relation = CommonRelation::kNearIdentical;
  } else if (b_high) {
    out.relation = CommonRelation::kAContainsB;
  } else if (a_high) {
    out.relation = CommonRelation::kBContainsA;
  } else {
    out.relation = CommonRelation::kOverlap;
  }
  return out;
}

namespace internal {

namespace {

Status WriteChunks(TxnOps& ops, DocId doc, std::span<const dedup::Chunk> chunks, unsigned flags,
                   BatchChunkDocs& batch) {
  const Dbis& d = ops.dbis();
  SHINGLED_RETURN_IF_ERROR(
      ops.Put(d.doc_chunks, Key64(doc).view(), EncodeDocChunks(chunks), flags, "doc_chunks"));
  std::vector<uint64_t> distinct;
  distinct.reserve(chunks.size());
  for (const dedup::Chunk& c : chunks) distinct.push_back(c.hash);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (uint64_t hash : distinct) batch.File(hash, doc);
  return OkStatus();
}

}  // namespace

void BatchChunkDocs::File(uint64_t hash, DocId doc) {
  entries_.push_back(Entry{hash, doc, 0});
  const auto index = static_cast<uint32_t>(entries_.size());
  auto [it, added] = chains_.try_emplace(hash, Chain{index, index, 1});
  if (!added) {
    entries_[it->second.tail - 1].next = index;
    it->second.tail = index;
    ++it->second.count;
  }
}

size_t BatchChunkDocs::Count(uint64_t hash) const {
  auto it = chains_.find(hash);
  return it == chains_.end() ? 0 : it->second.count;
}

void BatchChunkDocs::Read(uint64_t hash, std::vector<DocId>* out) const {
  auto it = chains_.find(hash);
  if (it == chains_.end()) return;
  for (uint32_t i = it->second.head; i != 0; i = entries_[i - 1].next) {
    out->push_back(entries_[i - 1].doc);
  }
}

void BatchChunkDocs::Take(std::vector<BufferEntry>* buffered, std::vector<BufferEntry>* direct) {
  buffered->clear();
  direct->clear();
  buffered->reserve(entries_.size());
  for (const Entry& e : entries_) {
    const bool above = marks_ != nullptr && e.doc > marks_->doc[BufferSlice(e.hash)];
    (above ? buffered : direct)->emplace_back(e.hash, e.doc);
  }
  std::sort(buffered->begin(), buffered->end());
  std::sort(direct->begin(), direct->end());
  entries_.clear();
  chains_.clear();
}

Status PutChunkPostings(TxnOps& ops, const std::vector<BufferEntry>& sorted) {
  // (hash, document) order is the B-tree's: the key is the hash's top bits, the entry its low
  // bits then the document, both big-endian.
  if (sorted.empty()) return OkStatus();
  Cursor cursor;
  if (int rc = cursor.Open(ops.txn(), ops.dbis().chunk_docs); rc != 0)
    return ops.Fail(rc, "chunk_docs cursor");
  for (const auto& [hash, doc] : sorted) {
    PostingKey key(hash);
    Posting posting(hash, doc);
    MDB_val k = Val(key.view()), v = Val(posting.view());
    int rc = mdb_cursor_put(cursor.get(), &k, &v, MDB_NODUPDATA);
    if (rc != 0 && rc != MDB_KEYEXIST) return ops.Fail(rc, "chunk_docs");
  }
  return OkStatus();
}

Status PutChunks(TxnOps& ops, DocId doc, std::span<const dedup::Chunk> chunks,
                 BatchChunkDocs& batch) {
  if (chunks.empty()) return OkStatus();
  return WriteChunks(ops, doc, chunks, MDB_APPEND, batch);
}

Status BackfillChunks(TxnOps& ops, DocId doc, std::span<const dedup::Chunk> chunks,
                      BatchChunkDocs& batch) {
  if (chunks.empty()) return OkStatus();
  std::string_view bytes;
  Status s = ops.Get(ops.dbis().doc_chunks, Key64(doc).view(), &bytes, "doc_chunks");
  if (s.ok()) return OkStatus();  // recorded already: an identical copy adds nothing
  if (s.code() != StatusCode::kNotFound) return s;
  return WriteChunks(ops, doc, chunks, MDB_NOOVERWRITE, batch);
}

Status ReadChunks(TxnOps& ops, DocId doc, std::vector<dedup::Chunk>* out, bool* known) {
  out->clear();
  *known = false;
  std::string_view bytes;
  Status s = ops.Get(ops.dbis().doc_chunks, Key64(doc).view(), &bytes,
                     "doc_chunks of document " + std::to_string(doc));
  if (s.code() == StatusCode::kNotFound) return OkStatus();
  SHINGLED_RETURN_IF_ERROR(s);
  Status decoded = DecodeDocChunks(bytes, out);
  if (!decoded.ok()) {
    return DataLossError("document " + std::to_string(doc) + ": " + std::string(decoded.message()));
  }
  *known = true;
  return OkStatus();
}

Status FillMatchCommon(TemplateJudge& judge, std::string_view url,
                       std::span<const dedup::Chunk> chunks, PageResult* result) {
  result->match_common.assign(result->matches.size(), CommonBytes{});
  if (chunks.empty()) return OkStatus();  // every match's common stays unknown
  std::vector<dedup::Chunk> other;
  bool known = false;
  std::vector<DocId> docs;
  for (const Match& m : result->matches) docs.push_back(m.doc);
  if (!docs.empty()) {
    SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskChunksOf(docs));
    SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskUrls(docs));
  }
  for (size_t i = 0; i < result->matches.size(); ++i) {
    SHINGLED_RETURN_IF_ERROR(judge.reads().Chunks(result->matches[i].doc, &other, &known));
    StatusOr<std::string> host = judge.HostOfDocument(result->matches[i].doc);
    if (!host.ok()) return host.status();
    StatusOr<CommonBytes> common = judge.Common(chunks, other, UrlHost(url), *host, 0);
    if (!common.ok()) return common.status();
    result->match_common[i] = std::move(*common);
  }
  return OkStatus();
}

Status FillSimilarCommon(TemplateJudge& judge, DocId query_doc, std::span<const dedup::Chunk> query,
                         std::vector<SimilarDoc>* results) {
  if (query.empty()) return OkStatus();
  std::vector<DocId> docs;
  for (const SimilarDoc& r : *results) docs.push_back(r.doc);
  if (query_doc != 0) docs.push_back(query_doc);
  if (!docs.empty()) {
    SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskChunksOf(docs));
    SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskUrls(docs));
  }
  std::string query_host;
  if (query_doc != 0) {
    StatusOr<std::string> host = judge.HostOfDocument(query_doc);
    if (!host.ok()) return host.status();
    query_host = std::move(*host);
  }
  std::vector<dedup::Chunk> other;
  bool known = false;
  for (SimilarDoc& r : *results) {
    SHINGLED_RETURN_IF_ERROR(judge.reads().Chunks(r.doc, &other, &known));
    StatusOr<std::string> host = judge.HostOfDocument(r.doc);
    if (!host.ok()) return host.status();
    StatusOr<CommonBytes> common = judge.Common(query, other, query_host, *host, 0);
    if (!common.ok()) return common.status();
    r.common = std::move(*common);
  }
  return OkStatus();
}

Status CheckChunks(TxnOps& ops, const WriteBuffer& buffer,
                   const std::function<void(std::string)>& problem) {
  const Dbis& d = ops.dbis();
  auto hex = [](uint64_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 0xf];
    return s;
  };
  Cursor postings;
  if (int rc = postings.Open(ops.txn(), d.chunk_docs); rc != 0)
    return ops.Fail(rc, "chunk_docs cursor");
  // doc_chunks -> chunk_docs: every distinct chunk of a record has its posting, in chunk_docs up to
  // its slice's watermark and in the write buffer above it.
  const Watermarks& marks = buffer.chunk_marks;
  uint64_t found = 0;  // (chunk, document) pairs of doc_chunks found in chunk_docs
  std::vector<DocId> buffered;
  {
    Cursor records;
    if (int rc = records.Open(ops.txn(), d.doc_chunks); rc != 0)
      return ops.Fail(rc, "doc_chunks cursor");
    MDB_val k, v;
    std::vector<dedup::Chunk> chunks;
    std::vector<uint64_t> distinct;
    int rc = mdb_cursor_get(records.get(), &k, &v, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(records.get(), &k, &v, MDB_NEXT)) {
      if (k.mv_size != 8) {
        problem("doc_chunks has a key of " + std::to_string(k.mv_size) + " bytes, not 8");
        continue;
      }
      const DocId doc = GetBE64(static_cast<const char*>(k.mv_data));
      const std::string where = "doc_chunks of document " + std::to_string(doc);
      if (Status s = DecodeDocChunks(View(v), &chunks); !s.ok()) {
        problem(where + ": " + std::string(s.message()));
        continue;
      }
      if (chunks.empty()) problem(where + ": no chunks (a document without chunks has no record)");
      std::string_view doc_record;
      Status s = ops.Get(d.documents, Key64(doc).view(), &doc_record, "document");
      if (s.code() == StatusCode::kNotFound) {
        problem(where + ": no such document");
      } else if (!s.ok()) {
        return s;
      }
      distinct.clear();
      for (const dedup::Chunk& c : chunks) distinct.push_back(c.hash);
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      for (uint64_t hash : distinct) {
        if (doc > marks.doc[BufferSlice(hash)]) {
          buffered.clear();
          size_t count = 0;
          bool more = false;
          buffer.ReadChunk(hash, SIZE_MAX, &buffered, &count, &more);
          if (std::find(buffered.begin(), buffered.end(), doc) == buffered.end())
            problem(where + ": chunk " + hex(hash) + " is not in the write buffer under it");
          continue;
        }
        PostingKey pk(hash);
        Posting entry(hash, doc);
        MDB_val pkv = Val(pk.view()), pv = Val(entry.view());
        int prc = mdb_cursor_get(postings.get(), &pkv, &pv, MDB_GET_BOTH);
        if (prc == 0) {
          ++found;
        } else if (prc == MDB_NOTFOUND) {
          problem(where + ": chunk " + hex(hash) + " is not in chunk_docs under it");
        } else {
          return ops.Fail(prc, "chunk_docs");
        }
      }
    }
    if (rc != MDB_NOTFOUND) return ops.Fail(rc, "doc_chunks");
  }
  // chunk_docs -> doc_chunks: every posting names a document whose record holds the chunk. Once
  // the postings number `found`, the first pass has shown every one of them backed; otherwise each
  // posting's record is read to name the ones that are not.
  MDB_stat st;
  if (int rc = mdb_stat(ops.txn(), d.chunk_docs, &st); rc != 0)
    return ops.Fail(rc, "chunk_docs stat");
  const bool read_each = st.ms_entries != found;
  MDB_val k, v;
  std::vector<dedup::Chunk> chunks;
  int rc = mdb_cursor_get(postings.get(), &k, &v, MDB_FIRST);
  for (; rc == 0; rc = mdb_cursor_get(postings.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != kPostingKeySize || v.mv_size != kPostingSize) {
      problem("chunk_docs has an entry of " + std::to_string(k.mv_size) + " + " +
              std::to_string(v.mv_size) + " bytes, not 3 + 12");
      continue;
    }
    const uint64_t hash = PostingValue(View(k), View(v));
    const DocId doc = PostingDoc(View(v));
    const int slice = BufferSlice(hash);
    if (doc > marks.doc[slice]) {
      problem("chunk_docs lists chunk " + hex(hash) + " under document " + std::to_string(doc) +
              ", above the chunk watermark of its slice (slice " + std::to_string(slice) +
              ", document " + std::to_string(marks.doc[slice]) + ")");
      continue;
    }
    if (!read_each) continue;
    bool known = false;
    Status s = ReadChunks(ops, doc, &chunks, &known);
    if (!s.ok() && s.code() != StatusCode::kDataLoss) return s;
    if (!s.ok()) continue;  // reported by the first pass
    if (!known) {
      problem("chunk_docs lists chunk " + hex(hash) + " under document " + std::to_string(doc) +
              ", which has no doc_chunks record");
    } else if (std::none_of(chunks.begin(), chunks.end(),
                            [&](const dedup::Chunk& c) { return c.hash == hash; })) {
      problem("chunk_docs lists chunk " + hex(hash) + " under document " + std::to_string(doc) +
              ", whose doc_chunks record lacks it");
    }
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "chunk_docs");
  return OkStatus();
}

}  // namespace internal

StatusOr<CommonBytes> LmdbStore::BytesInCommon(DocId a, DocId b, size_t max_spans) const {
  StatusOr<internal::ReadTxn> txn = impl_->BeginRead();
  if (!txn.ok()) return txn.status();
  TxnOps ops(txn->txn.get(), impl_->dbis_);
  StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl_->BufferFor(ops);
  if (!buffer.ok()) return buffer.status();
  internal::TemplateJudge judge(ops, impl_->options_, buffer->get());
  for (DocId doc : {a, b}) {
    std::string_view record;
    SHINGLED_RETURN_IF_ERROR(ops.Get(impl_->dbis_.documents, Key64(doc).view(), &record,
                                     "document " + std::to_string(doc)));
  }
  return internal::DocumentsInCommon(judge, a, b, max_spans);
}

}  // namespace shingled::store
