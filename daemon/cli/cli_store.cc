// The store's command line: ingest, check, backup, and the queries.
#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "crawler/warc.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"
#include "daemon/cli/cli_progress.h"
#include "daemon/ingest/ingest.h"
#include "daemon/ingest/task_pool.h"
#include "daemon/ingest/warc_ingest.h"
#include "daemon/process/store_setup.h"
#include "daemon/wire/http_query.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/unix_time.h"
#include "store/mapped_file.h"

namespace shingled::cli {
namespace {

namespace fs = std::filesystem;
using daemon::Json;

struct StoreFlags {
  std::string store_dir;
  std::string config_file;
  bool json = false;
};

using daemon::UnixNow;

// The store of a command that reads or checks it: one that is not there is an error, not a new
// empty store ("consistent" for a mistyped --store).
StatusOr<daemon::OpenedStore> Open(const StoreFlags& flags, bool create = false) {
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return config.status();
  return daemon::OpenStore(*config, create);
}

// A document or cluster id argument: 1..2^64-1 (CLI11 alone took 0, and made any larger number
// 2^64-1).
CLI::Validator IdArgument(const char* what) {
  return CLI::Validator(
      [what](const std::string& text) {
        StatusOr<uint64_t> id = daemon::ParseId(text, what);
        return id.ok() ? std::string() : std::string(id.status().message());
      },
      "ID");
}

void Print(const StoreFlags& flags, const Json& j) {
  std::cout << daemon::DumpJson(j, flags.json ? -1 : 2) << "\n";
}

// Characters kept as they are in a file: URL path; the rest is percent-encoded.
std::string EncodePath(const std::string& path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~!$&'()*+,;=:@", c) != nullptr) {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

// ---- ingest ----

// A sweep's scope as --scope-host and --scope-prefix name it (Store::OpenSweep).
struct ScopeFlags {
  std::vector<std::string> hosts, prefixes;
};

void AddScopeFlags(CLI::App* cmd, ScopeFlags* scope) {
  cmd->add_option("--scope-host", scope->hosts,
                  "A host (or host:port) whose URLs the sweep covers: closing it records gone "
                  "only URLs in its scope (repeatable)");
  cmd->add_option("--scope-prefix", scope->prefixes,
                  "A URL prefix the sweep covers, e.g. https://example.com/docs/ (repeatable)");
}

struct IngestFlags {
  std::vector<std::string> paths;
  std::string sweep, date, base_url, content_type;
  ScopeFlags scope;
  bool quiet = false;
  // fnmatch(3) patterns choosing among the files found in directories (IsSelected).
  std::vector<std::string> include, exclude;
};

// Whether a file found in a directory is ingested: it matches an --include pattern (or none was
// given) and no --exclude pattern. A pattern with a '/' is matched against the file's path
// relative to the directory given, one without against its name, as rsync and .gitignore read
// them. fnmatch(3) without FNM_PATHNAME: '*' matches '/' too, so "assets/*" is everything under
// assets/ (fnmatch has no "**"). A file named as a PATH is read as given: naming it chose it.
bool IsSelected(const std::string& relative, const IngestFlags& in) {
  const size_t slash = relative.rfind('/');
  const std::string name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  auto matches = [&](const std::string& pattern) {
    const std::string& subject = pattern.find('/') != std::string::npos ? relative : name;
    return fnmatch(pattern.c_str(), subject.c_str(), 0) == 0;
  };
  if (!in.include.empty() && std::none_of(in.include.begin(), in.include.end(), matches)) {
    return false;
  }
  return std::none_of(in.exclude.begin(), in.exclude.end(), matches);
}

struct FileRef {
  fs::path file;
  std::string relative;  // to the PATH argument it came from
};

// The files to ingest, in order; those of directories that --include and --exclude leave out are
// counted in *excluded.
std::vector<FileRef> ListFiles(const IngestFlags& in, std::vector<std::string>* errors,
                               uint64_t* excluded) {
  std::vector<FileRef> files;
  for (const std::string& p : in.paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<FileRef> found;
      for (auto it = fs::recursive_directory_iterator(p, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec)) {
          // lexically_relative, not fs::relative: that one resolves symlinks, which gave a
          // symlinked file its target's URL.
          std::string relative = it->path().lexically_relative(p).generic_string();
          if (IsSelected(relative, in)) {
            found.push_back({it->path(), std::move(relative)});
          } else {
            ++*excluded;
          }
        }
      }
      if (ec) errors->push_back(p + ": " + ec.message());
      std::sort(found.begin(), found.end(),
                [](const FileRef& a, const FileRef& b) { return a.relative < b.relative; });
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back({fs::path(p), fs::path(p).filename().generic_string()});
    } else {
      errors->push_back(p + ": not a file or directory");
    }
  }
  return files;
}

bool IsWarcPath(const std::string& path) {
  return path.ends_with(".warc") || path.ends_with(".warc.gz");
}

// Reads a WARC file into the pipeline through `submit`, record by record, each page with its
// WARC-Target-URI and WARC-Date (daemon::JobFromWarcRecord: responses, resources, revisits as
// unchanged versions, 404/410 as dead versions). Bad records are reported in `errors` with their
// offsets and skipped; so are records of other statuses or of non-http(s) targets, counted in
// *skipped.
Status IngestWarc(const std::string& path, store::SweepId sweep,
                  const std::function<Status(const daemon::PageJob&, const std::string&)>& submit,
                  std::vector<std::string>* errors, std::mutex* mu, uint64_t* skipped,
                  const CommandInterrupt& interrupt) {
  StatusOr<std::unique_ptr<crawler::ByteSource>> source = crawler::OpenFileSource(path);
  if (!source.ok()) {
    std::lock_guard<std::mutex> lock(*mu);
    errors->push_back(path + ": " + source.status().message());
    return OkStatus();
  }
  crawler::WarcReader reader(std::move(*source));
  crawler::WarcRecord record;
  size_t problems_reported = 0;
  auto report_problems = [&] {
    std::lock_guard<std::mutex> lock(*mu);
    for (; problems_reported < reader.problems().size(); ++problems_reported) {
      const crawler::WarcProblem& p = reader.problems()[problems_reported];
      errors->push_back(path + ": offset " + std::to_string(p.offset) + ": " + p.status.message());
    }
  };
  while (!interrupt.requested() && reader.Next(&record)) {
    report_problems();
    const std::string where = path + ": offset " + std::to_string(record.member_offset);
    bool skip = false;
    StatusOr<std::optional<daemon::PageJob>> job =
        daemon::JobFromWarcRecord(record, sweep, &skip, &reader.targets());
    if (!job.ok()) {
      std::lock_guard<std::mutex> lock(*mu);
      errors->push_back(where + ": " + job.status().message());
      continue;
    }
    if (!job->has_value()) {
      if (skip) ++*skipped;
      continue;
    }
    SHINGLED_RETURN_IF_ERROR(submit(**job, where + ": " + (*job)->url));
  }
  report_problems();
  if (!reader.status().ok()) {
    std::lock_guard<std::mutex> lock(*mu);
    errors->push_back(path + ": " + reader.status().message());
  }
  return OkStatus();
}

int RunIngest(const StoreFlags& flags, const IngestFlags& in) {
  // Set by the first Ctrl-C while files are read (below); declared before `interrupt`, whose
  // watcher thread may set it until `interrupt` is destroyed.
  std::atomic<bool> announced{false};
  // Before any thread: Ctrl-C stops reading files, and what was accepted is committed and
  // summed up.
  CommandInterrupt interrupt;
  int64_t date = UnixNow();
  if (!in.date.empty()) {
    StatusOr<int64_t> parsed = daemon::ParseIsoTime(in.date);
    if (!parsed.ok()) return Fail("ingest", parsed.status(), kExitUsage);
    date = *parsed;
  }
  // A path that is not there is a usage error, found before the store is opened: a mistyped
  // path must not leave a new, empty store directory behind.
  std::string missing;
  for (const std::string& p : in.paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec) && !fs::is_regular_file(p, ec)) {
      missing += (missing.empty() ? "" : ", ") + p;
    }
  }
  if (!missing.empty()) {
    return Fail("ingest", InvalidArgumentError(missing + ": not a file or directory"), kExitUsage);
  }
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return Fail("ingest", config.status(), kExitUsage);
  // [ingest]'s bounds and canonicalizer: files are stored as `serve` would store them.
  StatusOr<daemon::PipelineOptions> options = daemon::IngestPipelineOptions(config->ingest);
  if (!options.ok()) return Fail("ingest", options.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/true);
  if (!opened.ok()) return Fail("ingest", opened.status());
  StatusOr<std::vector<std::string>> scope = daemon::SweepScope(in.scope.hosts, in.scope.prefixes);
  if (!scope.ok()) return Fail("ingest", scope.status(), kExitUsage);
  StatusOr<store::SweepInfo> sweep = opened->store->OpenSweep(in.sweep, date, std::move(*scope));
  if (!sweep.ok()) return Fail("ingest", sweep.status());

  std::vector<std::string> errors;
  uint64_t excluded = 0;
  const std::vector<FileRef> files = ListFiles(in, &errors, &excluded);
  daemon::TaskPool pool(std::max(1u, std::thread::hardware_concurrency()), 1);
  daemon::IngestPipeline pipeline(opened->store.get(), opened->context, &pool, nullptr, *options);

  std::mutex mu;
  uint64_t counts[8] = {};  // by Verdict value
  std::set<store::ClusterId> clusters;
  // The URLs the sweep recorded (two files can name one URL, and a replayed page is one URL).
  std::unordered_set<store::UrlId> urls;
  uint64_t pages = 0;
  uint64_t pages_cut = 0, candidates_left_out = 0;
  daemon::PageFeeder feeder(&pipeline, options->queue_pages);
  // Submits one page, waiting while the pipeline's queue is full; `label` names it in errors.
  // Errors other than a full queue end the ingest.
  auto submit = [&](const daemon::PageJob& job, const std::string& label) -> Status {
    return feeder.Submit(job, [&, label](const daemon::PageOutcome& out) {
      std::lock_guard<std::mutex> lock(mu);
      if (out.status.ok()) {
        ++pages;
        urls.insert(out.result.url);
        ++counts[static_cast<int>(out.result.verdict)];
        if (out.result.cluster != 0) clusters.insert(out.result.cluster);
        // Pages whose candidates were cut at store.max_candidates, and how many.
        if (out.result.candidates_left_out > 0) {
          ++pages_cut;
          candidates_left_out += out.result.candidates_left_out;
        }
      } else {
        errors.push_back(label + ": " + out.status.message());
      }
    });
  };
  uint64_t warc_skipped = 0;
  // The loops below see interrupt.requested(); this says at once, and once, that the command
  // heard and what it does now, since committing the pages in flight can take a while. A
  // second Ctrl-C ends the process (CommandInterrupt). On a terminal the progress line is
  // erased first and goes on below the message.
  const bool show_progress = ShowProgress(in.quiet);
  interrupt.OnRequest([&announced, show_progress] {
    announced = true;
    AnnounceStop("ingest",
                 "reading no more files, finishing the pages in flight and committing them",
                 show_progress);
  });
  std::optional<ProgressLine> progress;
  progress.emplace(show_progress, [&](double elapsed) {
    std::lock_guard<std::mutex> lock(mu);
    return "ingest " + in.sweep + ": " + GroupDigits(pages) + " pages, " +
           OneDecimal(elapsed > 0 ? pages / elapsed : 0) + " pages/s, " +
           GroupDigits(errors.size()) + " errors, " + GroupDigits(static_cast<uint64_t>(elapsed)) +
           " s";
  });
  for (const FileRef& f : files) {
    if (interrupt.requested()) break;
    if (IsWarcPath(f.file.string())) {
      // A WARC file streams in record by record; each page keeps its own URL and date.
      Status s =
          IngestWarc(f.file.string(), sweep->id, submit, &errors, &mu, &warc_skipped, interrupt);
      if (!s.ok()) return Fail("ingest", s);
      continue;
    }
    // A page file is read whole, so it has the daemon's limit for a posted page (a WARC file
    // streams, above, and has none).
    std::error_code size_error;
    const uintmax_t size = fs::file_size(f.file, size_error);
    if (!size_error && size > static_cast<uintmax_t>(config->limits.max_body_bytes)) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(f.file.string() + ": " + std::to_string(size) +
                       " bytes, over the limit of " +
                       std::to_string(config->limits.max_body_bytes) + " (limits.max_body_bytes)");
      continue;
    }
    std::ifstream file(f.file, std::ios::binary);
    std::stringstream data;
    data << file.rdbuf();
    if (!file) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(f.file.string() + ": cannot read");
      continue;
    }
    daemon::PageJob job;
    // The base URL plus the relative path, else the file's file: URL; normalized either way.
    const std::string given =
        !in.base_url.empty()
            ? in.base_url + (in.base_url.back() == '/' ? "" : "/") + EncodePath(f.relative)
            : "file://" + EncodePath(fs::absolute(f.file).lexically_normal().generic_string());
    StatusOr<std::string> url = daemon::PageUrl(given, kNoUrlLimit);
    if (!url.ok()) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(f.file.string() + ": " + std::string(url.status().message()));
      continue;
    }
    job.url = std::move(*url);
    job.sweep = sweep->id;
    job.date = date;
    job.content_type = ContentTypeForPath(f.file.string(), in.content_type);
    job.body = data.str();
    if (Status s = submit(job, job.url); !s.ok()) return Fail("ingest", s);
  }
  feeder.Wait();
  pipeline.Stop();
  pool.Stop();
  progress.reset();
  // A page's cluster is its root when the page was stored; clusters merged later in the run
  // have another root now. Count the clusters the pages are in at the end.
  std::set<store::ClusterId> final_clusters;
  for (store::ClusterId id : clusters) {
    StatusOr<store::DocumentInfo> doc = opened->store->Document(id);
    if (!doc.ok()) return Fail("ingest", doc.status());
    final_clusters.insert(doc->cluster);
  }
  clusters = std::move(final_clusters);
  // Interrupted when the message was printed: a signal after this is too late to stop anything.
  interrupt.OnRequest(nullptr);
  const bool interrupted = announced;
  using store::Verdict;
  auto count = [&](Verdict v) { return counts[static_cast<int>(v)]; };
  for (const std::string& e : errors) std::cerr << "shingled ingest: " << e << "\n";
  if (flags.json) {
    const Json summary{{"pages", pages},
                       {"urls", urls.size()},
                       {"new", count(Verdict::kNew)},
                       {"unchanged", count(Verdict::kUnchanged)},
                       {"duplicate", count(Verdict::kDuplicate)},
                       {"near_duplicate", count(Verdict::kNearDuplicate)},
                       {"gone", count(Verdict::kGone)},
                       {"failed", count(Verdict::kFailed)},
                       {"redirect", count(Verdict::kRedirect)},
                       {"clusters", clusters.size()},
                       {"pages_with_candidates_left_out", pages_cut},
                       {"candidates_left_out", candidates_left_out},
                       {"warc_records_skipped", warc_skipped},
                       {"files_excluded", excluded},
                       {"errors", errors.size()},
                       {"interrupted", interrupted}};
    std::cout << daemon::DumpJson(summary) << "\n";
  } else {
    if (interrupted)
      std::cout << "interrupted: the pages below were stored, the rest were not read\n";
    std::cout << "ingested " << pages << " pages (" << urls.size() << " URLs) into sweep "
              << in.sweep << ": " << count(Verdict::kNew) << " new, " << count(Verdict::kUnchanged)
              << " unchanged, " << count(Verdict::kDuplicate) << " duplicate, "
              << count(Verdict::kNearDuplicate) << " near-duplicate, in " << clusters.size()
              << " clusters; " << count(Verdict::kGone) << " gone, " << count(Verdict::kFailed)
              << " failed, " << count(Verdict::kRedirect) << " redirect; " << errors.size()
              << " errors\n";
    if (excluded > 0) std::cout << excluded << " files left out by --include and --exclude\n";
    if (pages_cut > 0) {
      std::cout << pages_cut
                << " pages had more candidates than store.max_candidates: " << candidates_left_out
                << " candidates were left out unscored\n";
    }
  }
  if (interrupted) return kExitInterrupted;
  return errors.empty() ? kExitOk : kExitFailure;
}

// ---- check, backup ----

int RunCheck(const StoreFlags& flags) {
  StatusOr<daemon::OpenedStore> opened = Open(flags);
  if (!opened.ok()) return Fail("check", opened.status());
  auto problems = opened->store->Check();
  if (!problems.ok()) return Fail("check", problems.status());
  if (flags.json) {
    std::cout << daemon::DumpJson(Json{{"ok", problems->empty()}, {"problems", *problems}}) << "\n";
  } else {
    for (const std::string& p : *problems) std::cout << p << "\n";
    if (problems->empty()) std::cout << "store " << opened->name << ": consistent\n";
  }
  return problems->empty() ? kExitOk : kExitFailure;
}

int RunBackup(const StoreFlags& flags, const std::string& dest) {
  StatusOr<daemon::OpenedStore> opened = Open(flags);
  if (!opened.ok()) return Fail("backup", opened.status());
  // A backup copies the store's file; the cluster has none (back it up with Redis's own tools:
  // docs/OPERATIONS.md). Asked before `dest` is made, so a refusal leaves nothing behind.
  const store::MappedFile* mapped_file = opened->store->mapped_file();
  if (mapped_file == nullptr) {
    return Fail("backup", FailedPreconditionError(
                              "Backup is not supported by the redis-cluster backend: LMDB only"));
  }
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) return Fail("backup", InvalidArgumentError(dest + ": " + ec.message()));
  if (Status s = mapped_file->Backup(dest); !s.ok()) return Fail("backup", s);
  if (!flags.json) std::cout << "backup written to " << dest << "\n";
  return kExitOk;
}

// ---- queries ----

struct QueryFlags {
  std::string url, file;
  uint64_t id = 0;
  double threshold = 0.5;
  size_t limit = 20;
  std::string name, date;
  ScopeFlags scope;      // sweep open
  bool dry_run = false;  // sweep close
};

int RunSimilar(const StoreFlags& flags, const QueryFlags& q) {
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return Fail("similar", config.status(), kExitUsage);
  // A --file is sketched with [ingest]'s canonicalizer, as the stored pages were.
  StatusOr<daemon::PipelineOptions> ingest = daemon::IngestPipelineOptions(config->ingest);
  if (!ingest.ok()) return Fail("similar", ingest.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) return Fail("similar", opened.status());
  uint64_t left_out = 0;
  store::QueryOptions options{q.threshold, q.limit, &left_out};
  StatusOr<std::vector<store::SimilarDoc>> result = NotFoundError("");
  if (!q.file.empty()) {
    std::ifstream file(q.file, std::ios::binary);
    std::stringstream data;
    data << file.rdbuf();
    if (!file) return Fail("similar", NotFoundError(q.file + ": cannot read"), kExitUsage);
    const dedup::Sketch sketch = dedup::SketchPage(
        *opened->context, data.str(), ContentTypeForPath(q.file, ""), ingest->canonicalizer);
    result = opened->store->SimilarToSketch(sketch, options);
  } else if (!q.url.empty()) {
    result = opened->store->SimilarToUrl(q.url, options);
  } else if (q.id != 0) {
    result = opened->store->SimilarToDocument(q.id, options);
  } else {
    return Fail("similar", InvalidArgumentError("give --url, --doc or --file"), kExitUsage);
  }
  if (!result.ok()) return Fail("similar", result.status());
  if (flags.json) {
    Print(flags, daemon::SimilarJson(*result, left_out));
  } else {
    if (left_out > 0) {
      std::cout << "candidates left out: " << left_out
                << " (more than store.max_candidates; the fewest shared values were not scored)\n";
    }
    for (const store::SimilarDoc& d : *result) {
      std::cout << "doc " << d.doc << " cluster " << d.cluster << " resemblance " << d.resemblance
                << " (" << store::ResemblanceSourceName(d.resemblance_from) << ")"
                << " containment " << d.containment_of_query << "/" << d.containment_in_query;
      if (d.containment_from == store::ContainmentSource::kChunks)
        std::cout << " (chunks)";
      // Bytes in common with the query.
      if (d.common.known) {
        std::cout << " common " << d.common.shared_bytes << " bytes "
                  << store::CommonRelationName(d.common.relation);
        if (d.common.template_bytes > 0) {
          std::cout << " (" << d.common.template_bytes << " template bytes left out)";
        }
      } else {
        std::cout << " common unknown";
      }
      std::cout << " " << d.url << "\n";
    }
  }
  return kExitOk;
}

// Runs a query that answers one JSON document, on a store that must exist unless `create`.
int RunJsonQuery(const char* command, const StoreFlags& flags,
                 const std::function<StatusOr<Json>(store::Store&)>& query, bool create = false) {
  StatusOr<daemon::OpenedStore> opened = Open(flags, create);
  if (!opened.ok()) return Fail(command, opened.status());
  StatusOr<Json> j = query(*opened->store);
  if (!j.ok()) return Fail(command, j.status());
  Print(flags, *j);
  return kExitOk;
}

template <typename T, typename F>
StatusOr<Json> ToJson(StatusOr<T> value, F encode) {
  if (!value.ok()) return value.status();
  return encode(*value);
}

int RunSweep(const StoreFlags& flags, const std::string& action, const QueryFlags& q) {
  int64_t date = UnixNow();
  if (!q.date.empty()) {
    StatusOr<int64_t> parsed = daemon::ParseIsoTime(q.date);
    if (!parsed.ok()) return Fail("sweep", parsed.status(), kExitUsage);
    date = *parsed;
  }
  StatusOr<std::vector<std::string>> scope = daemon::SweepScope(q.scope.hosts, q.scope.prefixes);
  if (!scope.ok()) return Fail("sweep", scope.status(), kExitUsage);
  if (action != "open" && !scope->empty()) {
    return Fail("sweep", InvalidArgumentError("a scope is given when a sweep is opened"),
                kExitUsage);
  }
  return RunJsonQuery(
      "sweep", flags,
      [&](store::Store& store) -> StatusOr<Json> {
        if (action == "open")
          return ToJson(store.OpenSweep(q.name, date, *scope), daemon::SweepJson);
        if (action == "close" || action == "reopen") {
          StatusOr<store::SweepInfo> found = store.FindSweep(q.name);
          if (!found.ok()) return found.status();
          if (action == "reopen") {
            StatusOr<store::SweepReopening> reopened = store.ReopenSweep(found->id);
            if (!reopened.ok()) return reopened.status();
            Json j = daemon::SweepJson(reopened->sweep);
            j["removed_gone"] = reopened->removed;
            return j;
          }
          store::Store::CloseSweepOptions close;
          close.dry_run = q.dry_run;
          close.list_limit = q.limit;
          return ToJson(store.CloseSweep(found->id, date, close),
                        [&](const auto& c) { return daemon::SweepClosingJson(c, q.dry_run); });
        }
        StatusOr<std::vector<store::SweepInfo>> sweeps = store.Sweeps();
        if (!sweeps.ok()) return sweeps.status();
        Json out = Json::array();
        for (const store::SweepInfo& s : *sweeps) out.push_back(daemon::SweepJson(s));
        return Json{{"sweeps", std::move(out)}};
      },
      /*create=*/action == "open");
}

void AddStoreFlags(CLI::App* cmd, StoreFlags* flags) {
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file,
                  "TOML config (store options, [sketch], [ingest])");
  cmd->add_flag("--json", flags->json, "One compact JSON object");
}

}  // namespace

void AddStoreCommands(CLI::App* app, int* exit_code) {
  auto flags = std::make_shared<StoreFlags>();
  auto ingest = std::make_shared<IngestFlags>();
  auto query = std::make_shared<QueryFlags>();
  auto dest = std::make_shared<std::string>();
  auto action = std::make_shared<std::string>("list");

  CLI::App* cmd = app->add_subcommand(
      "ingest", "Ingest files, directories and WARC files (.warc, .warc.gz) into a sweep");
  cmd->add_option("paths", ingest->paths, "Files and directories")->required();
  cmd->add_option("--sweep", ingest->sweep, "Sweep name (opened if needed)")->required();
  cmd->add_option("--date", ingest->date, "Date of the pages, ISO-8601 (default: now)");
  cmd->add_option("--base-url", ingest->base_url,
                  "URL prefix for relative paths (default: file: URLs)")
      ->transform(UrlArgument());
  cmd->add_option("--content-type", ingest->content_type, "Content-Type of every file");
  AddScopeFlags(cmd, &ingest->scope);
  cmd->add_option("--include", ingest->include,
                  "Of the files in directories, read only those matching this fnmatch(3) "
                  "pattern: with a '/' against the path below the directory, else the file name "
                  "(repeatable; default: every file)")
      // One pattern an occurrence: `--include '*.html' site` must not take site for a pattern.
      ->allow_extra_args(false);
  cmd->add_option("--exclude", ingest->exclude,
                  "Leave out the files in directories matching this pattern, read as --include's "
                  "(repeatable; wins over --include)")
      ->allow_extra_args(false);
  cmd->add_flag("--quiet", ingest->quiet, "No progress line on a terminal");
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] { *exit_code = RunIngest(*flags, *ingest); });

  cmd = app->add_subcommand("check", "Verify the store's invariants; exit 1 naming problems");
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] { *exit_code = RunCheck(*flags); });

  cmd = app->add_subcommand("backup", "Write a compacted, consistent copy of the store to DEST");
  cmd->add_option("dest", *dest, "Destination directory (created; must hold no store)")->required();
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] { *exit_code = RunBackup(*flags, *dest); });

  cmd = app->add_subcommand("similar", "Documents resembling a stored URL, a document or a file");
  CLI::Option* url = cmd->add_option("--url", query->url, "A stored URL")->transform(UrlArgument());
  CLI::Option* doc =
      cmd->add_option("--doc", query->id, "A document id")->check(IdArgument("document"));
  cmd->add_option("--file", query->file, "A page on disk")->excludes(url)->excludes(doc);
  url->excludes(doc);
  cmd->add_option("--threshold", query->threshold, "Least resemblance or containment")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--limit", query->limit, "Most results")->check(CLI::Range(1, 1000));
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] { *exit_code = RunSimilar(*flags, *query); });

  cmd = app->add_subcommand("history", "The dated versions of a URL");
  cmd->add_option("url", query->url, "URL")->required()->transform(UrlArgument());
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] {
    *exit_code = RunJsonQuery("history", *flags, [=](store::Store& s) {
      return ToJson(s.History(query->url),
                    [&](const auto& v) { return daemon::HistoryJson(query->url, v); });
    });
  });

  cmd = app->add_subcommand("cluster", "A cluster's members, by cluster or document id");
  cmd->add_option("id", query->id, "Cluster or member document id")
      ->required()
      ->check(IdArgument("cluster or document"));
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] {
    *exit_code = RunJsonQuery("cluster", *flags, [=](store::Store& s) {
      return ToJson(s.Cluster(query->id), daemon::ClusterJson);
    });
  });

  // An operator's template marks (store/FORMAT.md, "Templates").
  auto template_action = std::make_shared<std::string>();
  cmd = app->add_subcommand("template", "Mark a cluster as template, unmark it, or list the marks");
  cmd->add_option("action", *template_action, "mark, unmark or list")
      ->required()
      ->check(CLI::IsMember({"mark", "unmark", "list"}));
  cmd->add_option("id", query->id, "mark, unmark: a cluster or member document id")
      ->check(IdArgument("cluster or document"));
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] {
    if (*template_action != "list" && query->id == 0) {
      *exit_code = Fail("template", InvalidArgumentError(*template_action + " needs a cluster ID"),
                        kExitUsage);
      return;
    }
    if (*template_action == "list" && query->id != 0) {
      *exit_code = Fail("template", InvalidArgumentError("list takes no ID"), kExitUsage);
      return;
    }
    *exit_code = RunJsonQuery("template", *flags, [=](store::Store& s) -> StatusOr<Json> {
      if (*template_action == "mark")
        return ToJson(s.MarkTemplate(query->id), daemon::TemplateMarkJson);
      if (*template_action == "unmark") {
        StatusOr<std::optional<store::TemplateMark>> removed = s.UnmarkTemplate(query->id);
        if (!removed.ok()) return removed.status();
        Json j = removed->has_value() ? daemon::TemplateMarkJson(**removed)
                                      : Json{{"cluster", query->id}};
        j["removed"] = removed->has_value();
        return j;
      }
      StatusOr<std::vector<store::TemplateMark>> marks = s.TemplateMarks();
      if (!marks.ok()) return marks.status();
      Json list = Json::array();
      for (const store::TemplateMark& m : *marks) list.push_back(daemon::TemplateMarkJson(m));
      return Json{{"templates", std::move(list)}};
    });
  });

  cmd = app->add_subcommand("lost", "Lost and found: where a URL's content lives now");
  cmd->add_option("url", query->url, "URL")->required()->transform(UrlArgument());
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] {
    *exit_code = RunJsonQuery("lost", *flags, [=](store::Store& s) {
      return ToJson(s.Lost(query->url), daemon::LostJson);
    });
  });

  cmd = app->add_subcommand("sweep", "List, open, close or reopen sweeps");
  cmd->add_option("action", *action, "list, open, close or reopen")
      ->check(CLI::IsMember({"list", "open", "close", "reopen"}));
  cmd->add_option("name", query->name, "Sweep name (open, close, reopen)");
  cmd->add_option("--date", query->date, "Start or end date, ISO-8601 (default: now)");
  AddScopeFlags(cmd, &query->scope);
  cmd->add_flag("--dry-run", query->dry_run,
                "close: list what would become gone, and change nothing");
  cmd->add_option("--limit", query->limit, "close: how many gone URLs to list (default 20)")
      ->check(CLI::Range(0, 100000));
  AddStoreFlags(cmd, flags.get());
  cmd->callback([=] {
    if (*action != "list" && query->name.empty()) {
      *exit_code = Fail("sweep", InvalidArgumentError(*action + " needs a NAME"), kExitUsage);
      return;
    }
    *exit_code = RunSweep(*flags, *action, *query);
  });
}

}  // namespace shingled::cli
