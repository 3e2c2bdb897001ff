// Documentation-like text for lost-and-found tests: a page is a list of sentence seeds, each
// seed one sentence of English words, so that a test edits a page by replacing sentences and
// knows roughly what resemblance it made (w = 8: one replaced sentence of 14 words costs ~21
// shingles of the old page). Deterministic: the same seeds give the same text everywhere.
#ifndef SHINGLED_TESTS_STORE_DOC_TEXT_H_
#define SHINGLED_TESTS_STORE_DOC_TEXT_H_

#include <cctype>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace shingled::testing {

inline std::string DocSentence(uint64_t seed) {
  static const char* const kWords[] = {"the",
                                       "server",
                                       "reads",
                                       "its",
                                       "configuration",
                                       "file",
                                       "when",
                                       "it",
                                       "starts",
                                       "and",
                                       "every",
                                       "option",
                                       "has",
                                       "a",
                                       "default",
                                       "value",
                                       "that",
                                       "most",
                                       "deployments",
                                       "keep",
                                       "install",
                                       "package",
                                       "from",
                                       "repository",
                                       "run",
                                       "command",
                                       "with",
                                       "root",
                                       "privileges",
                                       "store",
                                       "directory",
                                       "holds",
                                       "data",
                                       "index",
                                       "which",
                                       "grows",
                                       "as",
                                       "pages",
                                       "arrive",
                                       "client",
                                       "sends",
                                       "request",
                                       "over",
                                       "HTTP",
                                       "answer",
                                       "contains",
                                       "JSON",
                                       "object",
                                       "fields",
                                       "describe",
                                       "result",
                                       "error",
                                       "message",
                                       "explains",
                                       "what",
                                       "went",
                                       "wrong",
                                       "crawler",
                                       "fetches",
                                       "links",
                                       "politely",
                                       "one",
                                       "host",
                                       "at",
                                       "time",
                                       "delay",
                                       "between",
                                       "requests",
                                       "robots",
                                       "rules",
                                       "are",
                                       "obeyed",
                                       "by",
                                       "sweep",
                                       "opens",
                                       "closes",
                                       "marks",
                                       "missing",
                                       "URLs",
                                       "gone",
                                       "backup",
                                       "writes",
                                       "compacted",
                                       "copy",
                                       "while",
                                       "daemon",
                                       "keeps",
                                       "serving",
                                       "queries",
                                       "metrics",
                                       "endpoint",
                                       "exposes",
                                       "counters",
                                       "gauges",
                                       "histograms",
                                       "for",
                                       "Prometheus",
                                       "scrape",
                                       "dashboard",
                                       "shows",
                                       "latency",
                                       "queue",
                                       "depth",
                                       "commit",
                                       "size",
                                       "memory",
                                       "use",
                                       "alert",
                                       "fires",
                                       "if",
                                       "writer",
                                       "stalls",
                                       "disk",
                                       "fills",
                                       "map",
                                       "limit",
                                       "reached",
                                       "operator",
                                       "restarts",
                                       "service",
                                       "systemd",
                                       "unit",
                                       "stops",
                                       "gracefully",
                                       "on",
                                       "signal",
                                       "after",
                                       "deadline",
                                       "cancels",
                                       "work",
                                       "shingle",
                                       "sketch",
                                       "feature",
                                       "sample",
                                       "resemblance",
                                       "containment",
                                       "cluster",
                                       "document",
                                       "version",
                                       "history",
                                       "redirect",
                                       "target",
                                       "status",
                                       "code",
                                       "dead",
                                       "live",
                                       "token",
                                       "canonical",
                                       "text",
                                       "markup",
                                       "removed",
                                       "before",
                                       "hashing",
                                       "words",
                                       "lower",
                                       "case",
                                       "punctuation",
                                       "ignored",
                                       "numbers",
                                       "kept",
                                       "tables",
                                       "lists",
                                       "headings",
                                       "paragraphs",
                                       "links",
                                       "images",
                                       "scripts",
                                       "styles",
                                       "dropped",
                                       "entirely",
                                       "tutorial",
                                       "guide",
                                       "reference",
                                       "chapter",
                                       "section",
                                       "example",
                                       "shows",
                                       "how",
                                       "to",
                                       "configure",
                                       "listener",
                                       "port",
                                       "address",
                                       "token",
                                       "secret",
                                       "header",
                                       "authorization",
                                       "bearer",
                                       "read",
                                       "write",
                                       "access",
                                       "refused",
                                       "without",
                                       "valid",
                                       "credentials",
                                       "returns",
                                       "forbidden",
                                       "unauthorized",
                                       "retry",
                                       "later",
                                       "too",
                                       "many",
                                       "busy",
                                       "unavailable"};
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 12345);
  std::string out;
  for (int i = 0; i < 14; ++i) {
    std::string word = kWords[rng() % std::size(kWords)];
    if (i == 0) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
    out.append(word).append(i == 13 ? ". " : " ");
  }
  return out;
}

// A page: `sentences` seeds from `topic` * 1000.
inline std::vector<uint64_t> DocPage(uint64_t topic, int sentences = 60) {
  std::vector<uint64_t> seeds;
  for (int i = 0; i < sentences; ++i) seeds.push_back(topic * 1000 + static_cast<uint64_t>(i));
  return seeds;
}

// `page` with about `fraction` of its sentences, spread evenly, replaced by fresh ones (seeds
// from `salt`). Resemblance to `page` is about (1 - 1.5 f) / (1 + 1.5 f): 0.12 gives ~0.7.
inline std::vector<uint64_t> DocEdit(const std::vector<uint64_t>& page, double fraction,
                                     uint64_t salt) {
  std::vector<uint64_t> out = page;
  for (size_t i = 0; i < out.size(); ++i) {
    if (static_cast<int>((i + 1) * fraction) > static_cast<int>(i * fraction)) {
      out[i] = 900000000 + salt * 1000 + i;
    }
  }
  return out;
}

inline std::string DocText(const std::vector<uint64_t>& page) {
  std::string out;
  for (uint64_t seed : page) out += DocSentence(seed);
  return out;
}

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_STORE_DOC_TEXT_H_
