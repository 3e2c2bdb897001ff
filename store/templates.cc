// Store: templates (format 10; FORMAT.md, "Templates"). A template chunk (a shared
// header, footer or navigation) stops counting toward bytes in common: it is over a limit
// (documents, or a share of one host's pages), or an operator marked a cluster whose shared
// chunks are template.
#include "store/internal/templates.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "store/internal/chunks.h"
#include "store/internal/clusters.h"
#include "store/internal/codec.h"
#include "store/internal/store_impl.h"
#include "store/lmdb_store.h"
#include "store/store.h"

namespace shingled::store {

using internal::Cursor;
using internal::Key64;
using internal::TxnOps;
using internal::Val;
using internal::View;

namespace internal {

std::string_view UrlHost(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  return rest;
}

// The reads of a judge on an LMDB transaction: its cursors, as the judge read them before
// (same calls, same costs).
class LmdbChunkReads final : public ChunkReads {
 public:
  LmdbChunkReads(TxnOps& ops, const WriteBuffer* buffer) : ops_(ops), buffer_(buffer) {}
  void set_buffer(const WriteBuffer* buffer) { buffer_ = buffer; }
  void set_work(WriterWork* work) { work_ = work; }

  StatusOr<bool> Marked(uint64_t hash) override {
    std::string_view unused;
    char key[8];
    PutBE64(key, hash);
    Status s =
        ops_.Get(ops_.dbis().template_chunks, std::string_view(key, 8), &unused, "template_chunks");
    if (s.ok()) return true;
    if (s.code() != StatusCode::kNotFound) return s;
    return false;
  }

  Status ChunkDocs(uint64_t hash, size_t limit, std::vector<DocId>* docs, bool* over) override {
    if (chunk_docs_.get() == nullptr) {
      if (int rc = chunk_docs_.Open(ops_.txn(), ops_.dbis().chunk_docs); rc != 0)
        return ops_.Fail(rc, "chunk_docs cursor");
    }
    size_t count = 0;
    const size_t had = docs->size();
    if (int rc = ReadValuePostings(chunk_docs_.get(), hash, limit, docs, &count, over); rc != 0) {
      return ops_.Fail(rc, "chunk_docs");
    }
    // A slice's buffered postings are of documents above its watermark, the B-tree's at or below:
    // they follow the B-tree's in document order.
    if (buffer_ != nullptr && !*over) {
      size_t buffered = 0;
      buffer_->ReadChunk(hash, limit - count, docs, &buffered, over);
    }
    if (work_ != nullptr) work_->chunk_postings_read += docs->size() - had;
    return OkStatus();
  }

  StatusOr<std::string> FirstUrl(DocId doc) override {
    if (work_ != nullptr) ++work_->url_reads;
    if (doc_urls_.get() == nullptr) {
      if (int rc = doc_urls_.Open(ops_.txn(), ops_.dbis().doc_urls); rc != 0)
        return ops_.Fail(rc, "doc_urls cursor");
    }
    const auto doc_key = Key64(doc);  // named: MDB_val points into it
    MDB_val k = Val(doc_key.view()), v;
    int rc = mdb_cursor_get(doc_urls_.get(), &k, &v, MDB_SET_KEY);
    if (rc == MDB_NOTFOUND) return std::string();
    if (rc != 0) return ops_.Fail(rc, "doc_urls");
    if (v.mv_size != 8)
      return DataLossError("doc_urls of document " + std::to_string(doc) + ": not 8 bytes");
    std::string_view name;
    SHINGLED_RETURN_IF_ERROR(ops_.Get(ops_.dbis().url_names,
                                      std::string_view(static_cast<const char*>(v.mv_data), 8),
                                      &name, "url_names of document " + std::to_string(doc)));
    return std::string(name);
  }

  StatusOr<uint64_t> HostUrls(std::string_view host, uint64_t limit) override {
    Cursor urls;
    if (int rc = urls.Open(ops_.txn(), ops_.dbis().urls); rc != 0)
      return ops_.Fail(rc, "urls cursor");
    uint64_t pages = 0;
    for (std::string_view scheme : {"http://", "https://"}) {
      std::string prefix(scheme);
      prefix.append(host).push_back('/');
      MDB_val k = Val(prefix), v;
      int rc = mdb_cursor_get(urls.get(), &k, &v, MDB_SET_RANGE);
      for (; rc == 0 && pages < limit; rc = mdb_cursor_get(urls.get(), &k, &v, MDB_NEXT)) {
        if (!View(k).starts_with(prefix)) break;
        ++pages;
      }
      if (rc != 0 && rc != MDB_NOTFOUND) return ops_.Fail(rc, "urls");
    }
    if (work_ != nullptr) work_->url_reads += pages;
    return pages;
  }

  Status Chunks(DocId doc, std::vector<dedup::Chunk>* out, bool* known) override {
    if (work_ != nullptr) ++work_->chunk_records_read;
    return ReadChunks(ops_, doc, out, known);
  }

 private:
  TxnOps& ops_;
  const WriteBuffer* buffer_;
  WriterWork* work_ = nullptr;  // counted when set (the writer's judge)
  Cursor chunk_docs_, doc_urls_;
};

TemplateJudge::TemplateJudge(TxnOps& ops, const StoreOptions& options, const WriteBuffer* buffer,
                             const BatchChunkDocs* batch)
    : lmdb_(std::make_unique<LmdbChunkReads>(ops, buffer)),
      reads_(*lmdb_),
      options_(options),
      batch_(batch) {}

TemplateJudge::TemplateJudge(ChunkReads& reads, const StoreOptions& options)
    : reads_(reads), options_(options), batch_(nullptr) {}

TemplateJudge::~TemplateJudge() = default;

void TemplateJudge::set_buffer(const WriteBuffer* buffer) {
  if (lmdb_ != nullptr) lmdb_->set_buffer(buffer);
}

void TemplateJudge::set_work(WriterWork* work) {
  if (lmdb_ != nullptr) lmdb_->set_work(work);
}

StatusOr<std::string> TemplateJudge::HostOfDocument(DocId doc) {
  std::unordered_map<DocId, std::string>& hosts = memory_->hosts;
  if (auto it = hosts.find(doc); it != hosts.end()) return it->second;
  if (hosts.size() >= JudgeMemory::kMaxEntries) hosts.clear();
  StatusOr<std::string> name = reads_.FirstUrl(doc);
  if (!name.ok()) return name.status();
  std::string host(UrlHost(*name));
  hosts.emplace(doc, host);
  return host;
}

StatusOr<const TemplateJudge::ChunkState*> TemplateJudge::State(uint64_t hash) {
  // A judge that lives as long as a write batch caches what it read (the B-tree does not change
  // under it: the batch's postings are in `batch_`), up to a bound.
  if (chunks_.size() >= kMaxCachedChunks && !chunks_.contains(hash)) chunks_.clear();
  auto [it, added] = chunks_.try_emplace(hash);
  CachedChunk& cached = it->second;
  if (added) {
    std::unordered_set<uint64_t>& over_chunks = memory_->over_chunks;
    if (over_chunks.contains(hash)) {
      cached.stored.over = true;  // known from an earlier batch: its postings are not read
      return &cached.stored;
    }
    Status s = ReadStoredState(hash, &cached.stored);
    if (!s.ok()) {
      chunks_.erase(it);
      return s;
    }
    if (cached.stored.over) {
      if (over_chunks.size() >= JudgeMemory::kMaxEntries) over_chunks.clear();
      over_chunks.insert(hash);
    }
  }
  if (batch_ == nullptr || cached.stored.marked || cached.stored.over) return &cached.stored;
  // The batch's postings come after the B-tree's, then the first template_max_docs of them
  // all, as ReadValuePostings would read them had they been put. A batch only adds postings:
  // the merge is redone only when the chunk has more of them than when it was made.
  const size_t in_batch = batch_->Count(hash);
  if (in_batch == 0) return &cached.stored;
  if (in_batch == cached.merged_from) return &cached.merged;
  ChunkState& merged = cached.merged;
  merged.docs.clear();
  batch_->Read(hash, &merged.docs);
  merged.docs.insert(merged.docs.end(), cached.stored.docs.begin(), cached.stored.docs.end());
  std::sort(merged.docs.begin(), merged.docs.end());
  merged.marked = false;
  merged.over = merged.docs.size() > options_.template_max_docs;
  cached.merged_from = in_batch;
  if (!merged.over) return &merged;
  // Over the limit, it stays over for the rest of the batch (a site's footer is in every page of
  // a batch of its pages): no merge again.
  merged.docs.resize(options_.template_max_docs);
  cached.stored = std::move(merged);
  if (memory_->over_chunks.size() >= JudgeMemory::kMaxEntries) memory_->over_chunks.clear();
  memory_->over_chunks.insert(hash);
  return &cached.stored;
}

Status TemplateJudge::ReadStoredState(uint64_t hash, ChunkState* state) {
  StatusOr<bool> marked = reads_.Marked(hash);
  if (!marked.ok()) return marked.status();
  if (*marked) {
    state->marked = true;
    return OkStatus();
  }
  return reads_.ChunkDocs(hash, options_.template_max_docs, &state->docs, &state->over);
}

Status TemplateJudge::Prefetch(std::span<const uint64_t> hashes) {
  std::vector<uint64_t> missing;
  for (uint64_t h : hashes) {
    if (!chunks_.contains(h)) missing.push_back(h);
  }
  if (missing.empty()) return OkStatus();
  return reads_.WillAskChunks(missing);
}

StatusOr<const std::vector<DocId>*> TemplateJudge::DocumentsOf(uint64_t hash) {
  StatusOr<const ChunkState*> state = State(hash);
  if (!state.ok()) return state.status();
  const ChunkState& c = **state;
  if (c.marked || c.over) return nullptr;
  return &c.docs;
}

void TemplateJudge::UrlAdded(std::string_view url) {
  std::unordered_map<std::string, JudgeMemory::HostCount>& host_pages = memory_->host_pages;
  if (host_pages.empty()) return;
  const std::string_view host = UrlHost(url);
  auto it = host_pages.find(std::string(host));
  if (it == host_pages.end()) return;
  // One more key under the prefixes HostUrls counts (a URL with user info is under neither): the
  // count goes up by one instead of being read again, so that a writer adding pages to a host
  // does not count the host's URLs once per page.
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.starts_with(scheme) && url.substr(scheme.size()).starts_with(host) &&
        url.substr(scheme.size() + host.size()).starts_with('/')) {
      JudgeMemory::HostCount& count = it->second;
      if (count.pages < count.limit) ++count.pages;  // at the limit it means "at least"
      return;
    }
  }
}

void TemplateJudge::DocumentUrlAdded(DocId doc) { memory_->hosts.erase(doc); }

uint64_t TemplateJudge::HostPagesCap() const {
  // Past this many, no chunk under the document limit holds the share: stop counting.
  return static_cast<uint64_t>(std::ceil(static_cast<double>(options_.template_max_docs) /
                                         options_.template_host_share)) +
         1;
}

StatusOr<uint64_t> TemplateJudge::HostPages(std::string_view host, uint64_t limit) {
  limit = std::min(limit, HostPagesCap());
  std::unordered_map<std::string, JudgeMemory::HostCount>& host_pages = memory_->host_pages;
  auto it = host_pages.find(std::string(host));
  // Counted far enough already, or counted whole (below its limit the count is exact).
  if (it != host_pages.end() &&
      (it->second.limit >= limit || it->second.pages < it->second.limit)) {
    return std::min(it->second.pages, limit);
  }
  StatusOr<uint64_t> counted = reads_.HostUrls(host, limit);
  if (!counted.ok()) return counted.status();
  const uint64_t pages = std::min(*counted, limit);
  if (host_pages.size() >= JudgeMemory::kMaxEntries) host_pages.clear();
  host_pages.insert_or_assign(std::string(host), JudgeMemory::HostCount{pages, limit});
  return pages;
}

StatusOr<bool> TemplateJudge::IsTemplate(uint64_t hash, std::string_view host_a,
                                         std::string_view host_b) {
  StatusOr<const ChunkState*> state = State(hash);
  if (!state.ok()) return state.status();
  const ChunkState& c = **state;
  if (c.marked || c.over) return true;
  // With N >= min_pages pages on a host, the share needs more than share * min_pages documents.
  const double share = options_.template_host_share;
  if (static_cast<double>(c.docs.size()) <=
      share * static_cast<double>(options_.template_min_host_pages)) {
    return false;
  }
  const std::string_view hosts[2] = {host_a, host_b};
  for (int i = 0; i < 2; ++i) {
    if (hosts[i].empty() || (i == 1 && hosts[1] == hosts[0])) continue;
    StatusOr<bool> t = OverHostShare(c, hosts[i], nullptr);
    if (!t.ok() || *t) return t;
  }
  return false;
}

StatusOr<bool> TemplateJudge::OverHostShare(const ChunkState& c, std::string_view host,
                                            ChunkTemplate* explain) {
  const double share = options_.template_host_share;
  const uint64_t min_pages = options_.template_min_host_pages;
  // The least count of pages whose share `docs` documents do not exceed, at most the cap.
  const uint64_t cap = HostPagesCap();
  auto least_over = [&](uint64_t docs) {
    const double least = std::floor(static_cast<double>(docs) / share) + 1;
    uint64_t need = least >= static_cast<double>(cap) ? cap : static_cast<uint64_t>(least);
    while (need < cap && share * static_cast<double>(need) <= static_cast<double>(docs)) ++need;
    return std::max(min_pages, need);
  };
  // An explanation shows the count up to the cap; a verdict needs it only as far as it can
  // matter: at least min_pages, and past docs / share not even all the chunk's documents on the
  // host would hold the share. A host that large decides without reading any document's host,
  // so the work per chunk does not grow with its documents.
  StatusOr<uint64_t> pages = HostPages(host, explain != nullptr ? cap : least_over(c.docs.size()));
  if (!pages.ok()) return pages.status();
  if (explain != nullptr) explain->host_pages = *pages;
  if (*pages < min_pages) return false;
  if (explain == nullptr &&
      static_cast<double>(c.docs.size()) <= share * static_cast<double>(*pages)) {
    return false;
  }
  uint64_t on_host = 0;
  {
    std::vector<DocId> unknown;
    for (DocId d : c.docs) {
      if (!memory_->hosts.contains(d)) unknown.push_back(d);
    }
    if (!unknown.empty()) SHINGLED_RETURN_IF_ERROR(reads_.WillAskUrls(unknown));
  }
  for (DocId d : c.docs) {
    StatusOr<std::string> h = HostOfDocument(d);
    if (!h.ok()) return h.status();
    on_host += *h == host;
  }
  if (explain != nullptr) explain->host_documents = on_host;
  if (explain == nullptr) {
    // The least count whose share on_host does not exceed: counting to it (or to the cap, or
    // to min_pages, whichever is larger) decides as a count to the cap would.
    pages = HostPages(host, least_over(on_host));
    if (!pages.ok()) return pages.status();
  }
  return static_cast<double>(on_host) > share * static_cast<double>(*pages);
}

Status TemplateJudge::Explain(uint64_t hash, std::string_view host, ChunkTemplate* out) {
  StatusOr<const ChunkState*> state = State(hash);
  if (!state.ok()) return state.status();
  const ChunkState& c = **state;
  out->marked = c.marked;
  out->documents = c.over ? options_.template_max_docs + 1 : c.docs.size();
  out->over_documents = c.over;
  if (!c.marked && !c.over && !host.empty()) {
    StatusOr<bool> t = OverHostShare(c, host, out);
    if (!t.ok()) return t.status();
    out->over_host_share = *t;
  }
  out->is_template = c.marked || c.over || out->over_host_share;
  return OkStatus();
}

StatusOr<std::vector<ChunkTemplate>> TemplateJudge::ExplainAll(std::span<const dedup::Chunk> chunks,
                                                               std::string_view host) {
  std::vector<uint64_t> hashes;
  for (const dedup::Chunk& c : chunks) hashes.push_back(c.hash);
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  SHINGLED_RETURN_IF_ERROR(Prefetch(hashes));
  std::vector<ChunkTemplate> out;
  for (const dedup::Chunk& c : chunks) {
    ChunkTemplate t;
    t.chunk = c;
    SHINGLED_RETURN_IF_ERROR(Explain(c.hash, host, &t));
    out.push_back(t);
  }
  return out;
}

Status TemplateJudge::Templates(std::span<const dedup::Chunk> a, std::span<const dedup::Chunk> b,
                                std::string_view host_a, std::string_view host_b,
                                std::vector<uint64_t>* out) {
  std::vector<uint64_t> hashes;
  hashes.reserve(a.size() + b.size());
  for (const dedup::Chunk& c : a) hashes.push_back(c.hash);
  for (const dedup::Chunk& c : b) hashes.push_back(c.hash);
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  SHINGLED_RETURN_IF_ERROR(Prefetch(hashes));
  for (uint64_t h : hashes) {
    StatusOr<bool> t = IsTemplate(h, host_a, host_b);
    if (!t.ok()) return t.status();
    if (*t) out->push_back(h);
  }
  return OkStatus();
}

StatusOr<CommonBytes> TemplateJudge::Common(std::span<const dedup::Chunk> a,
                                            std::span<const dedup::Chunk> b,
                                            std::string_view host_a, std::string_view host_b,
                                            size_t max_spans) {
  std::vector<uint64_t> templates;
  if (!a.empty() && !b.empty()) {
    SHINGLED_RETURN_IF_ERROR(Templates(a, b, host_a, host_b, &templates));
  }
  return BytesInCommonOf(a, b, max_spans, templates);
}

StatusOr<CommonBytes> DocumentsInCommon(TemplateJudge& judge, DocId a, DocId b, size_t max_spans) {
  std::vector<dedup::Chunk> chunks[2];
  std::string hosts[2];
  const DocId docs[2] = {a, b};
  SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskChunksOf(docs));
  SHINGLED_RETURN_IF_ERROR(judge.reads().WillAskUrls(docs));
  for (int i = 0; i < 2; ++i) {
    bool known = false;
    SHINGLED_RETURN_IF_ERROR(judge.reads().Chunks(docs[i], &chunks[i], &known));
    StatusOr<std::string> host = judge.HostOfDocument(docs[i]);
    if (!host.ok()) return host.status();
    hosts[i] = std::move(*host);
  }
  // Template chunks are left out here, for every caller (the reports included).
  return judge.Common(chunks[0], chunks[1], hosts[0], hosts[1], max_spans);
}

StatusOr<TemplateMark> MarkOfCluster(ChunkReads& reads, ClusterId root,
                                     std::span<const DocId> members) {
  TemplateMark mark;
  if (members.size() < 2) {
    return FailedPreconditionError("cluster " + std::to_string(root) +
                                   " has one document: no chunk is shared to mark");
  }
  // Each chunk's number of members holding it, and its length.
  std::unordered_map<uint64_t, std::pair<uint64_t, uint32_t>> held;
  std::vector<dedup::Chunk> chunks;
  std::vector<uint64_t> distinct;
  constexpr size_t kBlock = 256;  // members whose chunks are asked for at once
  for (size_t i = 0; i < members.size(); ++i) {
    if (i % kBlock == 0) {
      SHINGLED_RETURN_IF_ERROR(
          reads.WillAskChunksOf(members.subspan(i, std::min(kBlock, members.size() - i))));
    }
    bool known = false;
    SHINGLED_RETURN_IF_ERROR(reads.Chunks(members[i], &chunks, &known));
    distinct.clear();
    for (const dedup::Chunk& c : chunks) {
      held.try_emplace(c.hash, std::pair<uint64_t, uint32_t>{0, c.length});
      distinct.push_back(c.hash);
    }
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (uint64_t h : distinct) ++held[h].first;
  }
  mark.cluster = root;
  mark.members = members.size();
  for (const auto& [hash, entry] : held) {
    if (entry.first >= 2) mark.chunks.push_back(dedup::Chunk{hash, entry.second});
  }
  std::sort(mark.chunks.begin(), mark.chunks.end(),
            [](const dedup::Chunk& x, const dedup::Chunk& y) { return x.hash < y.hash; });
  for (const dedup::Chunk& c : mark.chunks) mark.chunk_bytes += c.length;
  return mark;
}

Status UpgradeToFormat10Templates(TxnOps& ops) {
  // The two tables were created empty with the others; check that they are.
  for (MDB_dbi dbi : {ops.dbis().template_marks, ops.dbis().template_chunks}) {
    MDB_stat st;
    if (int rc = mdb_stat(ops.txn(), dbi, &st); rc != 0) return ops.Fail(rc, "templates stat");
    if (st.ms_entries != 0) return DataLossError("a store of format 9 holds template entries");
  }
  return OkStatus();
}

std::string EncodeTemplateMark(const TemplateMark& mark) {
  std::string out;
  out.reserve(4 + mark.chunks.size() * 10);
  AppendVarint(&out, mark.members);
  AppendVarint(&out, mark.chunks.size());
  for (const dedup::Chunk& c : mark.chunks) {
    char hash[8];
    PutBE64(hash, c.hash);
    out.append(hash, 8);
    AppendVarint(&out, c.length);
  }
  return out;
}

Status DecodeTemplateMark(std::string_view bytes, TemplateMark* out) {
  out->chunks.clear();
  out->chunk_bytes = 0;
  uint64_t count = 0;
  if (!ReadVarint(&bytes, &out->members) || !ReadVarint(&bytes, &count)) {
    return DataLossError("template mark: truncated header");
  }
  if (count > bytes.size() / 9) {
    return DataLossError("template mark: " + std::to_string(count) + " chunks in " +
                         std::to_string(bytes.size()) + " bytes");
  }
  out->chunks.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (bytes.size() < 8)
      return DataLossError("template mark: truncated hash of chunk " + std::to_string(i));
    dedup::Chunk c;
    c.hash = GetBE64(bytes.data());
    bytes.remove_prefix(8);
    uint64_t length = 0;
    if (!ReadVarint(&bytes, &length) || length == 0 || length > UINT32_MAX) {
      return DataLossError("template mark: bad length of chunk " + std::to_string(i));
    }
    if (!out->chunks.empty() && c.hash <= out->chunks.back().hash) {
      return DataLossError("template mark: chunk " + std::to_string(i) + " out of order");
    }
    c.length = static_cast<uint32_t>(length);
    out->chunk_bytes += c.length;
    out->chunks.push_back(c);
  }
  if (!bytes.empty()) {
    return DataLossError("template mark: " + std::to_string(bytes.size()) +
                         " bytes after the last chunk");
  }
  return OkStatus();
}

Status CheckTemplates(TxnOps& ops, const std::function<void(std::string)>& problem) {
  const Dbis& d = ops.dbis();
  Cursor entries;
  if (int rc = entries.Open(ops.txn(), d.template_chunks); rc != 0)
    return ops.Fail(rc, "template_chunks cursor");
  uint64_t backed = 0;  // entries of template_chunks found for the marks
  {
    Cursor marks;
    if (int rc = marks.Open(ops.txn(), d.template_marks); rc != 0)
      return ops.Fail(rc, "template_marks cursor");
    MDB_val k, v;
    TemplateMark mark;
    int rc = mdb_cursor_get(marks.get(), &k, &v, MDB_FIRST);
    for (; rc == 0; rc = mdb_cursor_get(marks.get(), &k, &v, MDB_NEXT)) {
      if (k.mv_size != 8) {
        problem("template_marks has a key of " + std::to_string(k.mv_size) + " bytes, not 8");
        continue;
      }
      const ClusterId cluster = GetBE64(static_cast<const char*>(k.mv_data));
      const std::string where = "template mark of cluster " + std::to_string(cluster);
      if (Status s = DecodeTemplateMark(View(v), &mark); !s.ok()) {
        problem(where + ": " + std::string(s.message()));
        continue;
      }
      for (const dedup::Chunk& c : mark.chunks) {
        char hash[8];
        PutBE64(hash, c.hash);
        const auto cluster_key = Key64(cluster);  // named: MDB_val points into it
        MDB_val ek = Val(std::string_view(hash, 8)), ev = Val(cluster_key.view());
        int erc = mdb_cursor_get(entries.get(), &ek, &ev, MDB_GET_BOTH);
        if (erc == 0) {
          ++backed;
        } else if (erc == MDB_NOTFOUND) {
          problem(where + ": its chunk " + std::to_string(c.hash) + " is not in template_chunks");
        } else {
          return ops.Fail(erc, "template_chunks");
        }
      }
    }
    if (rc != MDB_NOTFOUND) return ops.Fail(rc, "template_marks");
  }
  MDB_stat st;
  if (int rc = mdb_stat(ops.txn(), d.template_chunks, &st); rc != 0)
    return ops.Fail(rc, "template_chunks stat");
  if (st.ms_entries == backed) return OkStatus();
  // Some entries have no mark behind them: name them.
  MDB_val k, v;
  TemplateMark mark;
  int rc = mdb_cursor_get(entries.get(), &k, &v, MDB_FIRST);
  for (; rc == 0; rc = mdb_cursor_get(entries.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != 8 || v.mv_size != 8) {
      problem("template_chunks has an entry of " + std::to_string(k.mv_size) + " + " +
              std::to_string(v.mv_size) + " bytes, not 8 + 8");
      continue;
    }
    const uint64_t hash = GetBE64(static_cast<const char*>(k.mv_data));
    const ClusterId cluster = GetBE64(static_cast<const char*>(v.mv_data));
    std::string_view record;
    Status s = ops.Get(d.template_marks, Key64(cluster).view(), &record, "template_marks");
    if (s.code() == StatusCode::kNotFound) {
      problem("template_chunks lists chunk " + std::to_string(hash) + " under cluster " +
              std::to_string(cluster) + ", which has no mark");
      continue;
    }
    SHINGLED_RETURN_IF_ERROR(s);
    if (!DecodeTemplateMark(record, &mark).ok()) continue;  // reported above
    if (!std::binary_search(
            mark.chunks.begin(), mark.chunks.end(), dedup::Chunk{hash, 0},
            [](const dedup::Chunk& x, const dedup::Chunk& y) { return x.hash < y.hash; })) {
      problem("template_chunks lists chunk " + std::to_string(hash) + " under cluster " +
              std::to_string(cluster) + ", whose mark lacks it");
    }
  }
  if (rc != MDB_NOTFOUND) return ops.Fail(rc, "template_chunks");
  return OkStatus();
}

namespace {

// Deletes the mark of `cluster` and its entries; false when there was none.
StatusOr<bool> DeleteMark(TxnOps& ops, ClusterId cluster, TemplateMark* old) {
  std::string_view record;
  Status s = ops.Get(ops.dbis().template_marks, Key64(cluster).view(), &record, "template_marks");
  if (s.code() == StatusCode::kNotFound) return false;
  SHINGLED_RETURN_IF_ERROR(s);
  SHINGLED_RETURN_IF_ERROR(DecodeTemplateMark(record, old));
  old->cluster = cluster;
  for (const dedup::Chunk& c : old->chunks) {
    char hash[8];
    PutBE64(hash, c.hash);
    SHINGLED_RETURN_IF_ERROR(ops.Del(ops.dbis().template_chunks, std::string_view(hash, 8),
                                     Key64(cluster).view(), "template_chunks"));
  }
  SHINGLED_RETURN_IF_ERROR(
      ops.Del(ops.dbis().template_marks, Key64(cluster).view(), {}, "template_marks"));
  return true;
}

Status DocumentExists(TxnOps& ops, DocId doc) {
  std::string_view v;
  Status found = ops.Get(ops.dbis().documents, Key64(doc).view(), &v, "document");
  if (found.code() == StatusCode::kNotFound) {
    return NotFoundError("cluster " + std::to_string(doc) +
                         " not found (no such cluster or document)");
  }
  return found;
}

}  // namespace

}  // namespace internal

StatusOr<TemplateMark> LmdbStore::MarkTemplate(ClusterId cluster) {
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  TemplateMark mark;
  Status s = impl_->RunWrite([&](TxnOps& ops) -> Status {
    mark = TemplateMark{};
    SHINGLED_RETURN_IF_ERROR(internal::DocumentExists(ops, cluster));
    StatusOr<ClusterId> root = internal::FindCluster(ops, cluster);
    if (!root.ok()) return root.status();
    StatusOr<std::vector<DocId>> members = internal::ClusterMembers(ops, *root);
    if (!members.ok()) return members.status();
    internal::LmdbChunkReads reads(ops, nullptr);
    StatusOr<TemplateMark> made = internal::MarkOfCluster(reads, *root, *members);
    if (!made.ok()) return made.status();
    mark = std::move(*made);
    TemplateMark old;
    StatusOr<bool> had = internal::DeleteMark(ops, *root, &old);
    if (!had.ok()) return had.status();
    SHINGLED_RETURN_IF_ERROR(ops.Put(ops.dbis().template_marks, Key64(*root).view(),
                                     internal::EncodeTemplateMark(mark), 0, "template_marks"));
    for (const dedup::Chunk& c : mark.chunks) {
      char hash[8];
      internal::PutBE64(hash, c.hash);
      SHINGLED_RETURN_IF_ERROR(ops.Put(ops.dbis().template_chunks, std::string_view(hash, 8),
                                       Key64(*root).view(), MDB_NODUPDATA, "template_chunks"));
    }
    return OkStatus();
  });
  if (!s.ok()) return s;
  return mark;
}

StatusOr<std::optional<TemplateMark>> LmdbStore::UnmarkTemplate(ClusterId cluster) {
  std::lock_guard<std::mutex> lock(impl_->write_mu_);
  std::optional<TemplateMark> removed;
  Status s = impl_->RunWrite([&](TxnOps& ops) -> Status {
    removed.reset();
    TemplateMark old;
    // The id the mark was made under, else the cluster the document is in now.
    StatusOr<bool> had = internal::DeleteMark(ops, cluster, &old);
    if (!had.ok()) return had.status();
    if (!*had) {
      SHINGLED_RETURN_IF_ERROR(internal::DocumentExists(ops, cluster));
      StatusOr<ClusterId> root = internal::FindCluster(ops, cluster);
      if (!root.ok()) return root.status();
      had = internal::DeleteMark(ops, *root, &old);
      if (!had.ok()) return had.status();
    }
    if (*had) removed = std::move(old);
    return OkStatus();
  });
  if (!s.ok()) return s;
  return removed;
}

StatusOr<std::vector<TemplateMark>> LmdbStore::TemplateMarks(ClusterId after, size_t limit) const {
  StatusOr<internal::ReadTxn> txn = impl_->BeginRead();
  if (!txn.ok()) return txn.status();
  TxnOps ops(txn->txn.get(), impl_->dbis_);
  Cursor marks;
  if (int rc = marks.Open(ops.txn(), ops.dbis().template_marks); rc != 0)
    return ops.Fail(rc, "template_marks cursor");
  std::vector<TemplateMark> out;
  if (after == UINT64_MAX) return out;
  const Key64 from(after + 1);
  MDB_val k = Val(from.view()), v;
  int rc = mdb_cursor_get(marks.get(), &k, &v, MDB_SET_RANGE);
  for (; rc == 0 && out.size() < limit; rc = mdb_cursor_get(marks.get(), &k, &v, MDB_NEXT)) {
    if (k.mv_size != 8)
      return DataLossError("template_marks has a key that is not 8 bytes; run shingled check");
    TemplateMark mark;
    mark.cluster = internal::GetBE64(static_cast<const char*>(k.mv_data));
    SHINGLED_RETURN_IF_ERROR(internal::DecodeTemplateMark(View(v), &mark));
    out.push_back(std::move(mark));
  }
  if (rc != 0 && rc != MDB_NOTFOUND) return ops.Fail(rc, "template_marks");
  return out;
}

StatusOr<std::vector<ChunkTemplate>> LmdbStore::ChunkTemplates(DocId doc) const {
  StatusOr<internal::ReadTxn> txn = impl_->BeginRead();
  if (!txn.ok()) return txn.status();
  TxnOps ops(txn->txn.get(), impl_->dbis_);
  std::string_view record;
  SHINGLED_RETURN_IF_ERROR(
      ops.Get(ops.dbis().documents, Key64(doc).view(), &record, "document " + std::to_string(doc)));
  std::vector<dedup::Chunk> chunks;
  bool known = false;
  SHINGLED_RETURN_IF_ERROR(internal::ReadChunks(ops, doc, &chunks, &known));
  StatusOr<std::shared_ptr<const internal::WriteBuffer>> buffer = impl_->BufferFor(ops);
  if (!buffer.ok()) return buffer.status();
  internal::TemplateJudge judge(ops, impl_->options_, buffer->get());
  StatusOr<std::string> host = judge.HostOfDocument(doc);
  if (!host.ok()) return host.status();
  return judge.ExplainAll(chunks, *host);
}

}  // namespace shingled::store
