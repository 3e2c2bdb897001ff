// Template statistics of a store, to choose the template limits
// (store.template_max_docs, template_host_share, template_min_host_pages): how many documents
// each chunk is in, what share of each host's text the limits call template, and the chunks that
// recur most, template or not, with their text.
//
//   build/tests/bench/template_stats STORE [MAX_DOCS SHARE MIN_PAGES] [DIR...]
//
// STORE was made with the default [sketch] (e.g. by `shingled ingest`). The DIRs, the HTML trees
// that were ingested, are only read to show each listed chunk's text (canonical text, chunked as
// the store chunked it). A plain program: it measures no time.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "dedup/canonicalize.h"
#include "dedup/chunker.h"
#include "dedup/sketch.h"
#include "dedup/tokenizer.h"
#include "store/store.h"

namespace shingled {
namespace {

std::string HostOf(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  const size_t end = url.find('/', scheme + 3);
  return url.substr(scheme + 3, end == std::string::npos ? std::string::npos : end - scheme - 3);
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: template_stats STORE [MAX_DOCS SHARE MIN_PAGES] [DIR...]\n");
    return 2;
  }
  store::StoreOptions options;
  options.create = false;
  int next = 2;
  if (argc >= 5 && std::isdigit(static_cast<unsigned char>(argv[2][0]))) {
    options.template_max_docs = std::strtoull(argv[2], nullptr, 10);
    options.template_host_share = std::strtod(argv[3], nullptr);
    options.template_min_host_pages = std::strtoull(argv[4], nullptr, 10);
    next = 5;
  }
  dedup::SketchParams params;
  auto context = dedup::SketchContext::Create(params);
  if (!context.ok()) return 1;
  auto opened = store::Store::Open(argv[1], options, **context);
  if (!opened.ok()) {
    std::fprintf(stderr, "%s\n", std::string(opened.status().message()).c_str());
    return 1;
  }
  store::Store& s = **opened;
  // The text of each chunk, from the trees given.
  std::unordered_map<uint64_t, std::string> text;
  for (int i = next; i < argc; ++i) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i])) {
      const std::string path = e.path().string();
      if (!e.is_regular_file() || (!path.ends_with(".html") && !path.ends_with(".htm"))) continue;
      std::ifstream in(path, std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      dedup::TokenCollector tokens;
      dedup::CanonicalizePage(bytes.str(), "text/html", &tokens);
      std::string t;
      for (const std::string& tok : tokens.tokens) t.append(tok).append(" ");
      size_t at = 0;
      for (const dedup::Chunk& c : dedup::ChunkBytes(params.chunking, t)) {
        text.try_emplace(c.hash, t.substr(at, std::min<size_t>(c.length, 70)));
        at += c.length;
      }
    }
  }
  const uint64_t documents = s.Stats()->documents;
  struct Host {
    uint64_t docs = 0, bytes = 0, by_docs = 0, by_share = 0, marked = 0;
  };
  std::map<std::string, Host> hosts;
  struct Seen {
    uint64_t docs = 0, occurrences = 0;
    uint32_t length = 0;
    bool is_template = false;
    std::string why;
  };
  std::unordered_map<uint64_t, Seen> chunks;
  uint64_t chunk_count = 0;
  using Clock = std::chrono::steady_clock;
  Clock::duration judging{};
  for (store::DocId d = 1; d <= documents; ++d) {
    const Clock::time_point t0 = Clock::now();
    auto verdicts = s.ChunkTemplates(d);
    judging += Clock::now() - t0;
    if (!verdicts.ok()) continue;
    auto cluster = s.Cluster(d);
    std::string host;
    if (cluster.ok()) {
      for (const store::ClusterMember& m : cluster->members) {
        if (m.doc == d && !m.urls.empty()) host = HostOf(m.urls[0]);
      }
    }
    Host& h = hosts[host];
    ++h.docs;
    for (const store::ChunkTemplate& t : *verdicts) {
      ++chunk_count;
      h.bytes += t.chunk.length;
      if (t.marked)
        h.marked += t.chunk.length;
      else if (t.over_documents)
        h.by_docs += t.chunk.length;
      else if (t.over_host_share)
        h.by_share += t.chunk.length;
      Seen& seen = chunks[t.chunk.hash];
      seen.docs = t.documents;
      ++seen.occurrences;
      seen.length = t.chunk.length;
      seen.is_template = t.is_template;
      if (t.over_host_share) {
        seen.why = "share " + std::to_string(t.host_documents) + "/" + std::to_string(t.host_pages);
      } else if (t.over_documents) {
        seen.why = "documents";
      } else if (t.host_pages > 0) {
        seen.why =
            "under share " + std::to_string(t.host_documents) + "/" + std::to_string(t.host_pages);
      }
    }
  }
  std::printf(
      "%llu documents, %llu chunks, %zu distinct; limits: max_docs %llu, host share %.2f "
      "from %llu pages\n",
      static_cast<unsigned long long>(documents), static_cast<unsigned long long>(chunk_count),
      chunks.size(), static_cast<unsigned long long>(options.template_max_docs),
      options.template_host_share,
      static_cast<unsigned long long>(options.template_min_host_pages));
  const uint64_t edges[] = {1, 2, 3, 5, 10, 20, 50, 100, 200, 500, UINT64_MAX};
  std::printf("\ndocuments per chunk: distinct chunks, and their bytes in all documents\n");
  for (size_t i = 0; i + 1 < std::size(edges); ++i) {
    uint64_t n = 0, bytes = 0;
    for (const auto& [hash, c] : chunks) {
      if (c.docs >= edges[i] && c.docs < edges[i + 1]) ++n, bytes += c.occurrences * c.length;
    }
    std::printf("  %4llu..%-6s %7llu chunks %10llu bytes\n",
                static_cast<unsigned long long>(edges[i]),
                edges[i + 1] == UINT64_MAX ? "" : std::to_string(edges[i + 1] - 1).c_str(),
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(bytes));
  }
  std::printf(
      "\nper host: documents, text bytes, template share (by documents + by host share + "
      "marked)\n");
  for (const auto& [name, h] : hosts) {
    std::printf("  %-28s %5llu docs %9llu bytes  template %5.1f%% (%4.1f%% + %4.1f%% + %4.1f%%)\n",
                name.empty() ? "(none)" : name.c_str(), static_cast<unsigned long long>(h.docs),
                static_cast<unsigned long long>(h.bytes),
                100.0 * static_cast<double>(h.by_docs + h.by_share + h.marked) /
                    static_cast<double>(h.bytes),
                100.0 * static_cast<double>(h.by_docs) / static_cast<double>(h.bytes),
                100.0 * static_cast<double>(h.by_share) / static_cast<double>(h.bytes),
                100.0 * static_cast<double>(h.marked) / static_cast<double>(h.bytes));
  }
  std::vector<std::pair<uint64_t, const Seen*>> ranked;
  for (const auto& [hash, c] : chunks) ranked.emplace_back(hash, &c);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second->docs != b.second->docs ? a.second->docs > b.second->docs : a.first < b.first;
  });
  for (bool is_template : {true, false}) {
    std::printf("\nthe %s chunks in the most documents: documents, length, why, text\n",
                is_template ? "template" : "other");
    int shown = 0;
    for (const auto& [hash, c] : ranked) {
      if (c->is_template != is_template || c->docs < 2) continue;
      auto t = text.find(hash);
      std::string snippet = t == text.end() ? "?" : t->second;
      for (char& ch : snippet) ch = ch == '\n' ? ' ' : ch;
      std::printf("  %4llu %5u %-18s %s\n", static_cast<unsigned long long>(c->docs), c->length,
                  c->why.c_str(), snippet.c_str());
      if (++shown == 25) break;
    }
  }
  // The cost: every chunk of a document judged (ChunkTemplates), and bytes in common of
  // neighbouring documents with and without the judge's reads (BytesInCommonOf on the same lists).
  Clock::duration common{};
  uint64_t pairs = 0, shared = 0, left_out = 0;
  for (store::DocId d = 1; d < documents; ++d) {
    const Clock::time_point t0 = Clock::now();
    auto c = s.BytesInCommon(d, d + 1, 0);
    common += Clock::now() - t0;
    if (!c.ok()) continue;
    ++pairs;
    shared += c->shared_bytes;
    left_out += c->template_bytes;
  }
  auto us = [](Clock::duration d, uint64_t n) {
    return std::chrono::duration<double, std::micro>(d).count() /
           static_cast<double>(n == 0 ? 1 : n);
  };
  std::printf(
      "\ncost: judging every chunk of a document %.1f us a document; BytesInCommon of "
      "neighbours %.1f us a pair (%llu pairs: %llu bytes shared, %llu left out as template)\n",
      us(judging, documents), us(common, pairs), static_cast<unsigned long long>(pairs),
      static_cast<unsigned long long>(shared), static_cast<unsigned long long>(left_out));
  return 0;
}

}  // namespace
}  // namespace shingled

int main(int argc, char** argv) { return shingled::Main(argc, argv); }
