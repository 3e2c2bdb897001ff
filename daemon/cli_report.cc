// `shingled report changes`: the change report of a store, as JSON, CSV or one HTML page
// (docs/REPORTS.md). The store is opened read-only, as `history` opens it.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>

#include "daemon/cli.h"
#include "daemon/cli_progress.h"
#include "daemon/json_codec.h"
#include "daemon/store_setup.h"
#include "report/changes.h"
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
  bool quiet = false;
};

int Fail(const Status& status, int code = kExitFailure) {
  std::cerr << "shingled report changes: " << status.message() << "\n";
  return code;
}

// A usage error (exit 2) for what the caller got wrong (a bad or unknown sweep); else a failure
// of the work (exit 1).
int FailFor(const Status& status) {
  const bool usage =
      status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kNotFound;
  return Fail(status, usage ? kExitUsage : kExitFailure);
}

int RunChanges(const ReportFlags& flags) {
  std::optional<store::ChangeKind> kind;
  if (!flags.list.empty()) {
    kind = store::ChangeKindFromName(flags.list);
    if (!kind) return Fail(InvalidArgumentError("--list: no such list: " + flags.list), kExitUsage);
    if (flags.format != "csv" && flags.format != "json") {
      return Fail(InvalidArgumentError("--list goes with --format csv or json"), kExitUsage);
    }
  }
  config::Config config;
  if (!flags.config_file.empty()) {
    StatusOr<config::Config> loaded = config::LoadConfigFile(flags.config_file);
    if (!loaded.ok()) return Fail(loaded.status(), kExitUsage);
    config = std::move(*loaded);
  }
  if (!flags.store_dir.empty()) config.store.path = flags.store_dir;
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(config, /*create=*/false);
  if (!opened.ok()) return Fail(opened.status());
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
    if (!file) return Fail(InvalidArgumentError("cannot write " + partial), kExitUsage);
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
      StatusOr<std::string> html = report::BuildChangeHtml(store, from, to, progress);
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
    return Fail(status);
  }
  out.flush();
  if (!out) return Fail(InternalError("write failed"));
  if (!flags.output.empty()) {
    file.close();
    if (std::rename(partial.c_str(), flags.output.c_str()) != 0) {
      return Fail(InternalError("cannot rename " + partial + " to " + flags.output));
    }
  }
  return kExitOk;
}

struct PageFlags {
  std::string store_dir;
  std::string config_file;
  std::string url;
  size_t limit = report::kHtmlClusters;
  std::string output;
};

// `report clusters` and `report url`: one HTML page, from a store opened read-only, to --output
// (written beside it and renamed, so a failure leaves no half file) or standard output.
int RunPage(const std::string& command, const PageFlags& flags,
            const std::function<StatusOr<std::string>(const store::Store&)>& render) {
  auto fail = [&](const Status& status, int code) {
    std::cerr << "shingled report " << command << ": " << status.message() << "\n";
    return code;
  };
  config::Config config;
  if (!flags.config_file.empty()) {
    StatusOr<config::Config> loaded = config::LoadConfigFile(flags.config_file);
    if (!loaded.ok()) return fail(loaded.status(), kExitUsage);
    config = std::move(*loaded);
  }
  if (!flags.store_dir.empty()) config.store.path = flags.store_dir;
  StatusOr<daemon::OpenedStore> opened = daemon::OpenStore(config, /*create=*/false);
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
  cmd->add_option("--output", flags->output,
                  "Write the HTML page to FILE (default: standard output)");
}

}  // namespace

void AddReportCommands(CLI::App* app, int* exit_code) {
  CLI::App* report =
      app->add_subcommand("report", "Reports over the store (changes between sweeps)");
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
  cmd->add_flag("--quiet", flags->quiet, "No progress line on a terminal");
  cmd->callback([=] { *exit_code = RunChanges(*flags); });

  auto page = std::make_shared<PageFlags>();
  CLI::App* clusters = report->add_subcommand(
      "clusters", "An HTML page of the largest clusters and the identical sets");
  AddPageOptions(clusters, page.get());
  clusters->add_option("--limit", page->limit, "Clusters and identical sets listed (1..1000)")
      ->check(CLI::Range(1, 1000));
  clusters->callback([=] {
    *exit_code = RunPage("clusters", *page, [page](const store::Store& store) {
      return report::ClustersHtml(store, page->limit);
    });
  });
  CLI::App* url = report->add_subcommand(
      "url", "An HTML page of one URL's versions and where its content is now");
  AddPageOptions(url, page.get());
  url->add_option("url", page->url, "The URL")->required();
  url->callback([=] {
    *exit_code = RunPage("url", *page, [page](const store::Store& store) {
      return report::UrlTimelineHtml(store, page->url);
    });
  });
}

}  // namespace shingled::cli
