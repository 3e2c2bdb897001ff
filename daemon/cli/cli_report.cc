// `shingled report changes`: the change report of a store, as JSON, CSV or one HTML page;
// `report history`: the timeline over all sweeps, as JSON or HTML; `report identical` and
// `report clusters`: the repository reports as JSON, CSV or HTML, streamed; `report url`: one
// URL's timeline (docs/REPORTS.md). The store is opened read-only, as `history` opens it.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>

#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"
#include "daemon/cli/cli_progress.h"
#include "daemon/process/store_setup.h"
#include "daemon/wire/json_codec.h"
#include "report/changes.h"
#include "report/repo_reports.h"
#include "report/store_pages.h"

namespace shingled::cli {
namespace {

struct ReportFlags {
  std::string store_dir;
  std::string config_file;
  std::string from, to;
  std::string format = "json";
  std::string list;
  std::string output;
  std::string link_base;
  bool quiet = false;
};

// The links of a page the command line writes: none, unless --link-base names where the
// daemon's report pages are.
report::html::Links LinksFor(const std::string& link_base) {
  if (link_base.empty()) return report::html::Links{};
  // The pages' names go after it: "http://h/reports" means the folder.
  return report::html::Links::FromBase(link_base.back() == '/' ? link_base : link_base + "/");
}

// A usage error (exit 2) for what the caller got wrong (a bad or unknown sweep); else a failure
// of the work (exit 1).
int FailFor(const Status& status) {
  const bool usage =
      status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kNotFound;
  return Fail("report changes", status, usage ? kExitUsage : kExitFailure);
}

int RunChanges(const ReportFlags& flags) {
  std::optional<store::ChangeKind> kind;
  if (!flags.list.empty()) {
    kind = store::ChangeKindFromName(flags.list);
    if (!kind) {
      return Fail("report changes", InvalidArgumentError("--list: no such list: " + flags.list),
                  kExitUsage);
    }
    if (flags.format != "csv" && flags.format != "json") {
      return Fail("report changes", InvalidArgumentError("--list goes with --format csv or json"),
                  kExitUsage);
    }
  }
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return Fail("report changes", config.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) return Fail("report changes", opened.status());
  const store::Store& store = *opened->store;
  auto pair = report::ResolveSweeps(store, flags.from, flags.to);
  if (!pair.ok()) return FailFor(pair.status());
  const store::SweepId from = pair->first.id, to = pair->second.id;

  // Write to a temporary file beside --output, renamed at the end: a failed report leaves no
  // half file.
  std::ofstream file;
  const std::string partial = flags.output + ".partial";
  if (!flags.output.empty()) {
    file.open(partial, std::ios::binary | std::ios::trunc);
    if (!file) {
      return Fail("report changes", InvalidArgumentError("cannot write " + partial), kExitUsage);
    }
  }
  std::ostream& out = flags.output.empty() ? std::cout : file;

  std::atomic<uint64_t> walked{0};
  store::ReportProgress progress{&walked};
  Status status = OkStatus();
  {
    ProgressLine line(ShowProgress(flags.quiet), [&](double seconds) {
      return "report: " + GroupDigits(walked.load()) + " URLs walked, " +
             std::to_string(static_cast<int>(seconds)) + " s";
    });
    if (kind && flags.format == "csv") {
      out << report::ChangeCsvHeader();
      status = store.StreamChanges(
          from, to, *kind,
          [&](const store::ChangeRow& row) {
            out << report::ChangeCsvLine(row);
            return out ? OkStatus() : InternalError("write failed");
          },
          progress);
    } else if (kind) {
      // JSON of a whole list: every row, as one page.
      store::ChangeList all;
      status = store.StreamChanges(
          from, to, *kind,
          [&](const store::ChangeRow& row) {
            all.rows.push_back(row);
            return OkStatus();
          },
          progress);
      store::ChangeReport names;
      names.from = pair->first;
      names.to = pair->second;
      if (status.ok())
        out << daemon::DumpJson(report::ChangeListJson(names, *kind, all), 2) << "\n";
    } else if (flags.format == "csv") {
      StatusOr<store::ChangeReport> r = store.ChangesBetween(from, to, progress);
      status = r.status();
      if (r.ok()) out << report::HostsCsv(*r);
    } else if (flags.format == "html") {
      StatusOr<std::string> html =
          report::BuildChangeHtml(store, from, to, progress, LinksFor(flags.link_base));
      status = html.status();
      if (html.ok()) out << *html;
    } else {
      StatusOr<report::Json> j = report::BuildChangeJson(store, from, to, progress);
      status = j.status();
      if (j.ok()) out << daemon::DumpJson(*j, 2) << "\n";
    }
  }
  if (!status.ok()) {
    if (!flags.output.empty()) {
      file.close();
      std::remove(partial.c_str());
    }
    return Fail("report changes", status);
  }
  out.flush();
  if (!out) return Fail("report changes", InternalError("write failed"));
  if (!flags.output.empty()) {
    file.close();
    if (std::rename(partial.c_str(), flags.output.c_str()) != 0) {
      return Fail("report changes",
                  InternalError("cannot rename " + partial + " to " + flags.output));
    }
  }
  return kExitOk;
}

struct PageFlags {
  std::string store_dir;
  std::string config_file;
  std::string url;
  std::string host;  // report history --host
  std::string output;
  std::string link_base;
  std::string format = "html";
};

// `report url` and `report history`: one page, from a store opened read-only, to --output
// (written beside it and renamed, so a failure leaves no half file) or standard output.
int RunPage(const std::string& command, const PageFlags& flags,
            const std::function<StatusOr<std::string>(const store::Store&)>& render) {
  std::string name = "report ";
  name.append(command);
  auto fail = [&](const Status& status, int code) { return Fail(name, status, code); };
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return fail(config.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) return fail(opened.status(), kExitFailure);
  StatusOr<std::string> html = render(*opened->store);
  if (!html.ok()) {
    const bool usage = html.status().code() == StatusCode::kInvalidArgument ||
                       html.status().code() == StatusCode::kNotFound;
    return fail(html.status(), usage ? kExitUsage : kExitFailure);
  }
  if (flags.output.empty()) {
    std::cout << *html;
    std::cout.flush();
    return std::cout ? kExitOk : fail(InternalError("write failed"), kExitFailure);
  }
  const std::string partial = flags.output + ".partial";
  {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    if (!file) return fail(InvalidArgumentError("cannot write " + partial), kExitUsage);
    file << *html;
    file.flush();
    if (!file) {
      std::remove(partial.c_str());
      return fail(InternalError("write failed: " + partial), kExitFailure);
    }
  }
  if (std::rename(partial.c_str(), flags.output.c_str()) != 0) {
    return fail(InternalError("cannot rename " + partial + " to " + flags.output), kExitFailure);
  }
  return kExitOk;
}

void AddPageOptions(CLI::App* cmd, PageFlags* flags) {
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file, "TOML config (store options, [sketch])");
  cmd->add_option("--output", flags->output, "Write to FILE (default: standard output)");
  cmd->add_option("--link-base", flags->link_base,
                  "Where the daemon's report pages are (e.g. http://localhost:8080/reports/): "
                  "the page links to them; without it, a page links nowhere");
}

// --- the repository reports ---

struct RepoFlags {
  std::string format;
  bool quiet = false;
  uint64_t limit = UINT64_MAX;
  size_t max_urls = 0;  // 0: the report's default
  store::ClusterReportOptions clusters;
};

// `report identical` and `report clusters`: the report written to --output
// (beside it, then renamed, so a failure leaves no half file) or standard output as it comes,
// with a progress line on a terminal.
int RunRepoReport(const std::string& command, const PageFlags& page, const RepoFlags& flags,
                  const std::function<Status(
                      const store::Store&, report::RepoReportFormat, const report::ReportSink&,
                      const store::RepoReportProgress&, const report::html::Links&)>& write) {
  std::string name = "report ";
  name.append(command);
  auto fail = [&](const Status& status, int code) { return Fail(name, status, code); };
  const std::optional<report::RepoReportFormat> format =
      report::RepoReportFormatFromName(flags.format);
  if (!format) return fail(InvalidArgumentError("--format must be json, csv or html"), kExitUsage);
  StatusOr<config::Config> config = LoadConfig(page.config_file, page.store_dir);
  if (!config.ok()) return fail(config.status(), kExitUsage);
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(*config, /*create=*/false);
  if (!opened.ok()) return fail(opened.status(), kExitFailure);
  std::ofstream file;
  const std::string partial = page.output + ".partial";
  if (!page.output.empty()) {
    file.open(partial, std::ios::binary | std::ios::trunc);
    if (!file) return fail(InvalidArgumentError("cannot write " + partial), kExitUsage);
  }
  std::ostream& out = page.output.empty() ? std::cout : file;
  std::atomic<uint64_t> documents{0}, partitions{0};
  store::RepoReportProgress progress{&documents, &partitions};
  Status status = OkStatus();
  {
    ProgressLine line(ShowProgress(flags.quiet), [&](double seconds) {
      std::string text = "report: ";
      text.append(GroupDigits(documents.load())).append(" documents");
      if (command == "clusters") {
        text.append(", ").append(GroupDigits(partitions.load())).append(" partitions");
      }
      text.append(", ").append(std::to_string(static_cast<int>(seconds))).append(" s");
      return text;
    });
    status = write(
        *opened->store, *format,
        [&](std::string_view text) {
          out.write(text.data(), static_cast<std::streamsize>(text.size()));
          return out ? OkStatus() : InternalError("write failed");
        },
        progress, LinksFor(page.link_base));
  }
  if (status.ok()) {
    out.flush();
    if (!out) status = InternalError("write failed");
  }
  if (!status.ok()) {
    if (!page.output.empty()) {
      file.close();
      std::remove(partial.c_str());
    }
    return fail(status, status.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure);
  }
  if (!page.output.empty()) {
    file.close();
    if (std::rename(partial.c_str(), page.output.c_str()) != 0) {
      return fail(InternalError("cannot rename " + partial + " to " + page.output), kExitFailure);
    }
  }
  return kExitOk;
}

}  // namespace

void AddReportCommands(CLI::App* app, int* exit_code) {
  CLI::App* report =
      app->add_subcommand("report",
                          "Reports over the store (changes between sweeps, identical content, "
                          "clusters by bytes in common)");
  report->require_subcommand(1);
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd = report->add_subcommand(
      "changes", "What changed, moved, was born and died between two sweeps (docs/REPORTS.md)");
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file, "TOML config (store options, [sketch])");
  cmd->add_option("--from", flags->from,
                  "The earlier sweep's name (with --to; neither: the last two sweeps)");
  cmd->add_option("--to", flags->to, "The later sweep's name");
  cmd->add_option("--format", flags->format, "json (default), csv or html")
      ->check(CLI::IsMember({"json", "csv", "html"}));
  cmd->add_option("--list", flags->list,
                  "The URLs behind one count: unchanged, changed, moved, died, not_seen, born, "
                  "moved_in, not_live (with --format csv or json)");
  cmd->add_option("--output", flags->output, "Write to FILE (default: standard output)");
  cmd->add_option("--link-base", flags->link_base,
                  "With html: where the daemon's report pages are (e.g. "
                  "http://localhost:8080/reports/), for links to URL timelines and other reports");
  cmd->add_flag("--quiet", flags->quiet, "No progress line on a terminal");
  cmd->callback([=] { *exit_code = RunChanges(*flags); });

  auto history = std::make_shared<PageFlags>();
  CLI::App* history_cmd = report->add_subcommand(
      "history",
      "The timeline over all sweeps: per pair of consecutive sweeps with pages, what its URLs "
      "did (JSON, or one HTML page)");
  AddPageOptions(history_cmd, history.get());
  history_cmd->add_option("--format", history->format, "html (default) or json")
      ->check(CLI::IsMember({"html", "json"}));
  CLI::Option* host = history_cmd->add_option(
      "--host", history->host, "Only the URLs of this host (host[:port]), one report per interval");
  history_cmd->callback([=] {
    const bool one_host = host->count() > 0;
    *exit_code = RunPage("history", *history,
                         [history, one_host](const store::Store& store) -> StatusOr<std::string> {
                           StatusOr<store::ChangeHistory> h =
                               one_host ? report::HostHistoryOverSweeps(store, history->host)
                                        : report::HistoryOverSweeps(store);
                           if (!h.ok()) return h.status();
                           const std::string* name = one_host ? &history->host : nullptr;
                           if (history->format == "json") {
                             return daemon::DumpJson(report::HistoryJson(*h, name), 2) + "\n";
                           }
                           return report::HistoryHtml(*h, LinksFor(history->link_base), name);
                         });
  });

  auto page = std::make_shared<PageFlags>();
  auto repo = std::make_shared<RepoFlags>();
  CLI::App* clusters = report->add_subcommand(
      "clusters",
      "Clusters of documents by bytes in common, and which to keep (HTML page by default, JSON "
      "or CSV: the same report)");
  AddPageOptions(clusters, page.get());
  repo->format = "html";
  clusters->add_option("--format", repo->format, "html (default), json or csv")
      ->check(CLI::IsMember({"html", "json", "csv"}));
  clusters->add_option("--limit", repo->limit, "Clusters listed (default all)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  clusters
      ->add_option("--min-bytes", repo->clusters.min_bytes,
                   "Bytes in common that link two documents (default 1000)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  clusters
      ->add_option("--min-share", repo->clusters.min_share,
                   "Or the share of the shorter one's text that links them (0..1, default 0.5)")
      ->check(CLI::Range(0.0, 1.0));
  clusters
      ->add_option("--max-chunk-docs", repo->clusters.max_chunk_docs,
                   "Chunks in more documents join and pair none (2..1000000, default 100)")
      ->check(CLI::Range(uint64_t{2}, uint64_t{1000000}));
  clusters
      ->add_option("--max-pairs-per-doc", repo->clusters.max_pairs_per_doc,
                   "Pairs checked per partition: this times its documents / 2 (1..100000, "
                   "default 50)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000}));
  clusters->add_option("--max-urls", repo->max_urls, "URLs listed per document (default 10)")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  clusters->add_flag("--quiet", repo->quiet, "No progress line on a terminal");
  clusters->callback([=] {
    store::ClusterReportOptions options = repo->clusters;
    options.limit = repo->limit;
    if (repo->max_urls != 0) options.max_urls = repo->max_urls;
    *exit_code = RunRepoReport(
        "clusters", *page, *repo,
        [options](const store::Store& store, report::RepoReportFormat format,
                  const report::ReportSink& sink, const store::RepoReportProgress& progress,
                  const report::html::Links& links) {
          return report::WriteClusterReport(store, options, format, sink, progress, links);
        });
  });

  auto identical_page = std::make_shared<PageFlags>();
  auto identical_flags = std::make_shared<RepoFlags>();
  identical_flags->format = "json";
  CLI::App* identical = report->add_subcommand(
      "identical",
      "Sets of URLs (or ingested files) with the same content, largest waste first (JSON, CSV "
      "or an HTML page: the same report)");
  AddPageOptions(identical, identical_page.get());
  identical->add_option("--format", identical_flags->format, "json (default), csv or html")
      ->check(CLI::IsMember({"json", "csv", "html"}));
  identical->add_option("--limit", identical_flags->limit, "Sets listed (default all)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  identical
      ->add_option("--max-urls", identical_flags->max_urls, "URLs listed per set (default all)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30));
  identical->add_flag("--quiet", identical_flags->quiet, "No progress line on a terminal");
  identical->callback([=] {
    store::IdenticalReportOptions options;
    options.limit = identical_flags->limit;
    if (identical_flags->max_urls != 0) options.max_urls = identical_flags->max_urls;
    *exit_code = RunRepoReport(
        "identical", *identical_page, *identical_flags,
        [options](const store::Store& store, report::RepoReportFormat format,
                  const report::ReportSink& sink, const store::RepoReportProgress& progress,
                  const report::html::Links& links) {
          return report::WriteIdenticalReport(store, options, format, sink, progress, links);
        });
  });
  CLI::App* url = report->add_subcommand(
      "url", "An HTML page of one URL's versions and where its content is now");
  AddPageOptions(url, page.get());
  url->add_option("url", page->url, "The URL")->required();
  url->callback([=] {
    *exit_code = RunPage("url", *page, [page](const store::Store& store) {
      return report::UrlTimelineHtml(store, page->url, LinksFor(page->link_base));
    });
  });
}

}  // namespace shingled::cli
