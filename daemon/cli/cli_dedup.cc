// `shingled sketch` and `shingled compare`: the sketching engine on files, with no store.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"
#include "daemon/process/store_setup.h"
#include "daemon/wire/json_codec.h"
#include "dedup/canonicalize.h"
#include "dedup/estimate.h"
#include "dedup/page.h"
#include "dedup/sketch.h"
#include "store/store.h"

namespace shingled::cli {
namespace {

using dedup::Sketch;
using json = nlohmann::ordered_json;

// Files larger than this are refused rather than read into memory whole.
constexpr uint64_t kDefaultMaxFileBytes = 256ull << 20;

struct DedupOptions {
  std::string content_type;
  std::string canonicalizer = "streaming";
  int shingle_size = dedup::SketchParams{}.shingle_size;
  uint64_t max_file_bytes = kDefaultMaxFileBytes;
};

StatusOr<std::string> ReadFile(const std::string& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return InvalidArgumentError(path + ": not a regular file");
  if (static_cast<uint64_t>(size) > max_bytes) {
    return ResourceExhaustedError(path + ": " + std::to_string(size) +
                                  " bytes is over the limit of " + std::to_string(max_bytes) +
                                  " (--max-file-bytes)");
  }
  std::string data(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(data.data(), size)) return InvalidArgumentError(path + ": read failed");
  return data;
}

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

json HexArray(const std::vector<uint64_t>& values) {
  json out = json::array();
  for (uint64_t v : values) out.push_back(Hex64(v));
  return out;
}

class ShingleRecorder final : public dedup::ShingleObserver {
 public:
  void OnShingle(uint64_t fp) override { shingles.push_back(fp); }
  std::vector<uint64_t> shingles;
};

// Sketches one file; with `shingles`, also records its whole shingle sequence.
StatusOr<Sketch> SketchFile(const dedup::SketchContext& ctx, const std::string& path,
                            const DedupOptions& options, std::vector<uint64_t>* shingles) {
  StatusOr<std::string> data = ReadFile(path, options.max_file_bytes);
  if (!data.ok()) return data.status();
  StatusOr<dedup::CanonicalizerKind> kind = dedup::ParseCanonicalizerKind(options.canonicalizer);
  if (!kind.ok()) return kind.status();
  dedup::PageSketcher page(ctx, ContentTypeForPath(path, options.content_type), *kind);
  ShingleRecorder recorder;
  if (shingles != nullptr) page.set_shingle_observer(&recorder);
  page.Feed(*data);
  Sketch sketch = page.Finish();
  if (shingles != nullptr) *shingles = std::move(recorder.shingles);
  return sketch;
}

StatusOr<std::shared_ptr<const dedup::SketchContext>> MakeContext(const DedupOptions& options) {
  dedup::SketchParams params;
  params.shingle_size = options.shingle_size;
  return dedup::SketchContext::Create(params);
}

json SketchJson(const std::string& file, const Sketch& s) {
  json j;
  j["file"] = file;
  j["tokens"] = s.tokens;
  j["shingles"] = s.shingles;
  j["minhashes"] = HexArray(s.minhashes);
  j["features"] = HexArray(s.features);
  j["supershingles"] = HexArray(s.supershingles);
  j["sample"] = {{"modulus", uint64_t{1} << s.sample.log2_modulus},
                 {"values", HexArray(s.sample.values)}};
  j["fingerprints"] = {{"identical", s.identical.ToHex()},
                       {"lexical", s.lexical.ToHex()},
                       {"shingle", s.shingle.ToHex()}};
  return j;
}

int RunSketch(const std::vector<std::string>& files, const DedupOptions& options) {
  auto ctx = MakeContext(options);
  if (!ctx.ok()) {
    std::cerr << "shingled sketch: " << ctx.status().message() << "\n";
    return kExitUsage;
  }
  int exit_code = kExitOk;
  for (const std::string& file : files) {
    StatusOr<Sketch> sketch = SketchFile(**ctx, file, options, nullptr);
    if (!sketch.ok()) {
      std::cerr << "shingled sketch: " << sketch.status().message() << "\n";
      exit_code = kExitUsage;
      continue;
    }
    std::cout << daemon::DumpJson(SketchJson(file, *sketch)) << "\n";
  }
  return exit_code;
}

int RunCompare(const std::string& a_path, const std::string& b_path, const DedupOptions& options,
               bool labelled, bool as_json) {
  auto ctx = MakeContext(options);
  if (!ctx.ok()) {
    std::cerr << "shingled compare: " << ctx.status().message() << "\n";
    return kExitUsage;
  }
  std::vector<uint64_t> a_shingles, b_shingles;
  StatusOr<Sketch> a = SketchFile(**ctx, a_path, options, &a_shingles);
  StatusOr<Sketch> b = SketchFile(**ctx, b_path, options, &b_shingles);
  for (const StatusOr<Sketch>* s : {&a, &b}) {
    if (!s->ok()) {
      std::cerr << "shingled compare: " << s->status().message() << "\n";
      return kExitUsage;
    }
  }
  const std::vector<uint64_t> sa = dedup::ShingleSet(a_shingles, labelled);
  const std::vector<uint64_t> sb = dedup::ShingleSet(b_shingles, labelled);
  const int r = (*ctx)->params().fungible_threshold;
  json j;
  j["a"] = a_path;
  j["b"] = b_path;
  j["shingle_size"] = options.shingle_size;
  j["labelled"] = labelled;
  j["resemblance"] = dedup::ExactResemblance(sa, sb);
  j["containment_a_in_b"] = dedup::ExactContainment(sa, sb);
  j["containment_b_in_a"] = dedup::ExactContainment(sb, sa);
  j["resemblance_estimate"] = dedup::ResemblanceFromMinhashes(*a, *b);
  j["containment_estimate_a_in_b"] = dedup::ContainmentFromModSample(a->sample, b->sample);
  j["containment_estimate_b_in_a"] = dedup::ContainmentFromModSample(b->sample, a->sample);
  j["features_in_common"] = dedup::FeaturesInCommon(*a, *b);
  j["fungible"] = dedup::Fungible(*a, *b, r);
  j["supershingles_in_common"] = dedup::SuperShinglesInCommon(*a, *b);
  // Bytes in common by the files' content-defined chunks (unknown with chunking off).
  j["common"] = daemon::CommonJson(store::BytesInCommonOf(a->chunks, b->chunks, 0), false);
  if (as_json) {
    std::cout << daemon::DumpJson(j) << "\n";
    return kExitOk;
  }
  for (const auto& [key, value] : j.items())
    std::cout << key << ": " << daemon::DumpJson(value) << "\n";
  return kExitOk;
}

// --- compare --docs A B: bytes in common of two stored documents ---

struct CompareDocsFlags {
  std::vector<uint64_t> docs;
  std::string store_dir, config_file;
};

int RunCompareDocs(const CompareDocsFlags& flags, bool as_json) {
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return Fail("compare", config.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) {
    std::cerr << "shingled compare: " << opened.status().message() << "\n";
    return kExitFailure;
  }
  const uint64_t a = flags.docs[0], b = flags.docs[1];
  StatusOr<store::CommonBytes> common = opened->store->BytesInCommon(a, b, store::kMaxCommonSpans);
  if (!common.ok()) {
    std::cerr << "shingled compare: " << common.status().message() << "\n";
    return common.status().code() == StatusCode::kNotFound ? kExitUsage : kExitFailure;
  }
  json j;
  j["a"] = a;
  j["b"] = b;
  j["common"] = daemon::CommonJson(*common, /*spans=*/as_json);
  if (as_json) {
    std::cout << daemon::DumpJson(j) << "\n";
    return kExitOk;
  }
  for (const auto& [key, value] : j.items()) {
    std::cout << key << ": " << daemon::DumpJson(value) << "\n";
  }
  return kExitOk;
}

void AddCommonOptions(CLI::App* cmd, DedupOptions* options) {
  cmd->add_option("--content-type", options->content_type,
                  "Content-Type of the files (default: from the extension, else sniffed)");
  cmd->add_option("--shingle-size", options->shingle_size, "Tokens per shingle (w)")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--canonicalizer", options->canonicalizer,
                  "HTML to tokens: streaming (default) or gumbo (the reference)")
      ->check(CLI::IsMember({"streaming", "gumbo"}));
  cmd->add_option("--max-file-bytes", options->max_file_bytes, "Largest file read")
      ->check(CLI::PositiveNumber);
}

}  // namespace

// The Content-Type to assume for a file: the one given, else one implied by the extension, else
// none (the canonicalizer then sniffs the bytes).
std::string ContentTypeForPath(const std::string& path, const std::string& given) {
  if (!given.empty()) return given;
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           std::equal(suffix.rbegin(), suffix.rend(), path.rbegin(), [](char a, char b) {
             return a == std::tolower(static_cast<unsigned char>(b));
           });
  };
  if (ends_with(".html") || ends_with(".htm") || ends_with(".xhtml")) return "text/html";
  // Text a document repository holds: prose markup and source code, read as plain text (a C
  // file's `#include <stdio.h>` is not a tag).
  static constexpr std::string_view kText[] = {
      ".txt", ".text", ".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".org", ".tex",
      ".c",   ".h",    ".cc", ".cpp",      ".hpp", ".cxx",  ".java",     ".py",  ".rs",
      ".go",  ".js",   ".ts", ".rb",       ".pl",  ".sh",   ".cs",       ".kt",  ".swift"};
  for (std::string_view ext : kText) {
    if (ends_with(ext)) return "text/plain";
  }
  return "";
}

void AddDedupCommands(CLI::App* app, int* exit_code) {
  auto sketch_options = std::make_shared<DedupOptions>();
  auto sketch_files = std::make_shared<std::vector<std::string>>();
  CLI::App* sketch =
      app->add_subcommand("sketch", "Print each file's sketch as one JSON object per line");
  sketch->add_option("files", *sketch_files, "Files to sketch")->required();
  AddCommonOptions(sketch, sketch_options.get());
  sketch->callback([=] { *exit_code = RunSketch(*sketch_files, *sketch_options); });

  auto compare_options = std::make_shared<DedupOptions>();
  auto files = std::make_shared<std::vector<std::string>>();
  auto labelled = std::make_shared<bool>(false);
  auto as_json = std::make_shared<bool>(false);
  auto docs = std::make_shared<CompareDocsFlags>();
  CLI::App* compare = app->add_subcommand(
      "compare",
      "Exact and estimated resemblance, containment and bytes in common of two files, or the "
      "bytes in common of two stored documents (--docs)");
  CLI::Option* files_option =
      compare->add_option("files", *files, "The two files A and B")->expected(2);
  compare->add_option("--docs", docs->docs, "Two stored documents A and B instead of files")
      ->expected(2)
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX))
      ->excludes(files_option);
  compare->add_option("--store", docs->store_dir,
                      "With --docs: the store directory (overrides store.path)");
  compare->add_option("--config", docs->config_file, "With --docs: a TOML config (the store)");
  compare->add_flag("--json", *as_json, "One JSON object instead of readable lines");
  compare->add_flag("--labelled", *labelled,
                    "Exact values over labelled shingles (option A) instead of sets (option B)");
  AddCommonOptions(compare, compare_options.get());
  compare->callback([=] {
    if (!docs->docs.empty()) {
      *exit_code = RunCompareDocs(*docs, *as_json);
      return;
    }
    if (files->size() != 2) {
      std::cerr << "shingled compare: give two files, or --docs A B\n";
      *exit_code = kExitUsage;
      return;
    }
    *exit_code = RunCompare((*files)[0], (*files)[1], *compare_options, *labelled, *as_json);
  });
}

}  // namespace shingled::cli
