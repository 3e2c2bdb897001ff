// `shingled list urls|clusters|identical`: the store's listings (docs/API.md, "Listings") on the
// command line, page by page from a store opened read-only, printed as each page arrives.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/cli_common.h"
#include "daemon/process/store_setup.h"
#include "daemon/wire/json_codec.h"
#include "daemon/wire/listings.h"

namespace shingled::cli {
namespace {

using daemon::Json;
using daemon::ListParams;

struct ListFlags {
  std::string store_dir, config_file;
  std::string format = "text";
  // The filters and the cursor given, under the names the API takes, so that both are checked
  // by the same parser (daemon/wire/listings.h).
  ListParams params;
  // Items in all, over as many pages as that takes; 0: every item.
  uint64_t limit = 0;
};

// An option --FLAG whose value goes to flags->params[name].
void AddParam(CLI::App* cmd, const std::string& flag, const std::string& name,
              const std::shared_ptr<ListFlags>& flags, const std::string& help) {
  cmd->add_option_function<std::string>(
      flag, [flags, name](const std::string& value) { flags->params[name] = value; }, help);
}

const ListParams& ParamsOf(const ListFlags& f) { return f.params; }

// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
std::string Csv(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string Joined(const std::vector<std::string>& items, char sep) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out.push_back(sep);
    out.append(s);
  }
  return out;
}

// Prints the rows of one listing in the chosen format: JSON lines (one object per item), CSV
// with a header row, or text (one line per item, fields separated by spaces).
class Printer {
 public:
  Printer(std::string format, const std::vector<std::string>& header) : format_(std::move(format)) {
    if (format_ == "csv") {
      std::vector<std::string> quoted;
      for (const std::string& h : header) quoted.push_back(Csv(h));
      std::cout << Joined(quoted, ',') << "\n";
    }
  }
  void Row(const Json& item, const std::vector<std::string>& fields) {
    if (format_ == "json") {
      std::cout << daemon::DumpJson(item) << "\n";
      return;
    }
    std::vector<std::string> out;
    for (const std::string& f : fields) out.push_back(format_ == "csv" ? Csv(f) : f);
    std::cout << Joined(out, format_ == "csv" ? ',' : ' ') << "\n";
  }

 private:
  const std::string format_;
};

// Opens the store read-only (a missing store is an error, not a new one).
StatusOr<daemon::OpenedStore> OpenForReading(const ListFlags& flags) {
  StatusOr<config::Config> config = LoadConfig(flags.config_file, flags.store_dir);
  if (!config.ok()) return config.status();
  return daemon::OpenStore(*config, /*create=*/false);
}

int Fail(const Status& status) {
  return cli::Fail("list", status,
                   status.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure);
}

// The page size for the next page when `printed` items are out of `flags.limit`.
size_t PageSize(const ListFlags& flags, uint64_t printed) {
  if (flags.limit == 0) return daemon::kMaxListLimit;
  return static_cast<size_t>(std::min<uint64_t>(daemon::kMaxListLimit, flags.limit - printed));
}

// Says on stderr how to go on when --limit ended the listing before its end.
void MaybeSayMore(const std::optional<std::string>& next_cursor) {
  if (!next_cursor) return;
  std::cout.flush();  // the items first, where both streams go to one place
  std::cerr << "shingled list: more after --after " << *next_cursor << "\n";
}

int ListUrls(const ListFlags& flags) {
  StatusOr<daemon::OpenedStore> opened = OpenForReading(flags);
  if (!opened.ok()) return Fail(opened.status());
  StatusOr<store::UrlListOptions> options =
      daemon::ParseUrlListing(ParamsOf(flags), *opened->store);
  if (!options.ok()) return Fail(options.status());
  Printer printer(flags.format, {"url", "status", "first_seen", "versions", "seq", "sweep", "date",
                                 "doc", "http_status", "verdict", "location"});
  uint64_t printed = 0;
  while (true) {
    options->limit = PageSize(flags, printed);
    StatusOr<store::UrlPage> page = opened->store->ListUrls(*options);
    if (!page.ok()) return Fail(page.status());
    for (const store::UrlListItem& item : page->urls) {
      const store::UrlVersion& v = item.version;
      printer.Row(daemon::UrlItemJson(item),
                  {item.url, std::string(store::UrlStatusName(item.status)),
                   daemon::FormatIsoTime(item.first_seen), std::to_string(item.versions),
                   std::to_string(v.seq), std::to_string(v.sweep), daemon::FormatIsoTime(v.date),
                   std::to_string(v.doc), std::to_string(v.http_status),
                   std::string(store::VerdictName(v.verdict)), v.redirect_target});
    }
    printed += page->urls.size();
    if (!page->next) break;
    if (flags.limit != 0 && printed >= flags.limit) {
      MaybeSayMore(daemon::UrlCursor(*page->next));
      break;
    }
    options->after = *page->next;
  }
  return kExitOk;
}

int ListClusters(const ListFlags& flags) {
  StatusOr<store::ClusterListOptions> options = daemon::ParseClusterListing(ParamsOf(flags));
  if (!options.ok()) return Fail(options.status());
  StatusOr<daemon::OpenedStore> opened = OpenForReading(flags);
  if (!opened.ok()) return Fail(opened.status());
  Printer printer(flags.format,
                  {"id", "size", "live_urls", "first_seen", "last_seen", "sample_urls"});
  uint64_t printed = 0;
  while (true) {
    options->limit = PageSize(flags, printed);
    StatusOr<store::ClusterListPage> page = opened->store->ListClusters(*options);
    if (!page.ok()) return Fail(page.status());
    for (const store::ClusterSummary& c : page->clusters) {
      printer.Row(daemon::ClusterSummaryJson(c),
                  {std::to_string(c.id), std::to_string(c.size), std::to_string(c.live_urls),
                   daemon::FormatIsoTime(c.first_seen), daemon::FormatIsoTime(c.last_seen),
                   Joined(c.sample_urls, ' ')});
    }
    printed += page->clusters.size();
    if (!page->next) break;
    if (flags.limit != 0 && printed >= flags.limit) {
      MaybeSayMore(daemon::ClusterCursorText(*page->next));
      break;
    }
    options->after = page->next;
  }
  return kExitOk;
}

int ListIdentical(const ListFlags& flags) {
  StatusOr<store::IdenticalSetOptions> options = daemon::ParseIdenticalListing(ParamsOf(flags));
  if (!options.ok()) return Fail(options.status());
  StatusOr<daemon::OpenedStore> opened = OpenForReading(flags);
  if (!opened.ok()) return Fail(opened.status());
  Printer printer(flags.format, {"representative", "url_count", "bytes", "documents", "urls"});
  uint64_t printed = 0;
  while (true) {
    options->limit = PageSize(flags, printed);
    StatusOr<store::IdenticalSetPage> page = opened->store->ListIdenticalSets(*options);
    if (!page.ok()) return Fail(page.status());
    for (const store::IdenticalSet& s : page->sets) {
      std::vector<std::string> docs;
      for (const store::IdenticalDocument& d : s.documents) docs.push_back(std::to_string(d.doc));
      printer.Row(daemon::IdenticalSetJson(s),
                  {std::to_string(s.representative), std::to_string(s.url_count),
                   std::to_string(s.bytes), Joined(docs, ' '), Joined(s.urls, ' ')});
    }
    printed += page->sets.size();
    if (!page->next) break;
    if (flags.limit != 0 && printed >= flags.limit) {
      MaybeSayMore(daemon::IdenticalCursorText(*page->next));
      break;
    }
    options->after = page->next;
  }
  return kExitOk;
}

void AddCommonFlags(CLI::App* cmd, const std::shared_ptr<ListFlags>& flags) {
  cmd->add_option("--store", flags->store_dir, "Store directory (overrides store.path)");
  cmd->add_option("--config", flags->config_file, "TOML config (store options)");
  cmd->add_option("--format", flags->format,
                  "text (a line per item), json (JSON lines: one object per item) or csv (with "
                  "a header row)")
      ->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--limit", flags->limit, "At most this many items (default: all)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 62));
  AddParam(cmd, "--after", "after", flags,
           "Go on after this cursor (printed on stderr when --limit ends a listing)");
}

}  // namespace

void AddListCommand(CLI::App* app, int* exit_code) {
  CLI::App* list = app->add_subcommand("list", "List the store's URLs, clusters or identical sets");
  list->require_subcommand(1);

  auto urls = std::make_shared<ListFlags>();
  CLI::App* cmd = list->add_subcommand(
      "urls", "URLs in key order (URL id order on a redis-cluster), with their last version");
  AddParam(cmd, "--host", "host", urls, "Only URLs of this host (or host:port), http and https");
  AddParam(cmd, "--prefix", "prefix", urls, "Only URLs that start with this prefix");
  AddParam(cmd, "--sweep", "sweep", urls,
           "Only URLs with a version in this sweep (listing that version)");
  AddParam(cmd, "--status", "status", urls,
           "Only URLs whose last version is live, dead, gone, redirect or failed");
  AddParam(cmd, "--verdict", "verdict", urls, "Only versions listed with this verdict");
  AddCommonFlags(cmd, urls);
  cmd->callback([=] { *exit_code = ListUrls(*urls); });

  auto clusters = std::make_shared<ListFlags>();
  cmd = list->add_subcommand("clusters", "Clusters, largest first");
  AddParam(cmd, "--min-size", "min_size", clusters, "Least documents (default 2)");
  AddCommonFlags(cmd, clusters);
  cmd->callback([=] { *exit_code = ListClusters(*clusters); });

  auto identical = std::make_shared<ListFlags>();
  cmd = list->add_subcommand("identical",
                             "Sets of live URLs showing the same content, largest first");
  AddParam(cmd, "--min-urls", "min_urls", identical, "Least URLs (default 2)");
  AddCommonFlags(cmd, identical);
  cmd->callback([=] { *exit_code = ListIdentical(*identical); });
}

}  // namespace shingled::cli
