// A small toolkit for self-contained HTML report pages: escaping, number formatting, a page
// skeleton with inline CSS, a navigation bar between the report pages, headings, tables and SVG
// bar charts drawn to scale on a labelled axis. No JavaScript, no network: a page opens from a
// file.
//
// Accessibility: real headings (h1..h3), tables with a caption and <th scope>, charts with a
// text title and description, every bar labelled with its name and value in text (colour is
// never the only carrier), and a layout that reads at 1280 px and at phone width (~390 px: each
// table row becomes a card of "column: value" lines, so that a long URL column is not scrolled
// out of sight; charts scale down).
//
// Thread-compatible: a Page is built by one thread.
#ifndef SHINGLED_REPORT_HTML_H_
#define SHINGLED_REPORT_HTML_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shingled::report::html {

// Text for an element or an attribute value: & < > " ' escaped. Bytes that are not UTF-8
// become U+FFFD, so that a hostile URL cannot break the page's encoding.
std::string Escape(std::string_view text);

// `text` percent-encoded for a query string value: everything but RFC 3986's unreserved bytes.
std::string QueryValue(std::string_view text);

// "1,234,567".
std::string Count(uint64_t n);
// `value` with `digits` decimals ("0.87").
std::string Fixed(double value, int digits);
// `part` of `whole` as a percentage with one decimal ("12.5%"); "–" when whole is 0.
std::string Percent(uint64_t part, uint64_t whole);

// A table cell: text (escaped when rendered) or prepared HTML.
struct Cell {
  std::string html;
  bool numeric = false;    // right-aligned, tabular digits
  bool long_text = false;  // a URL: may break anywhere, takes a readable width

  static Cell Text(std::string_view text) { return Cell{Escape(text), false, false}; }
  static Cell Url(std::string_view url) { return Cell{Escape(url), false, true}; }
  static Cell Number(uint64_t n) { return Cell{Count(n), true, false}; }
  static Cell Html(std::string html, bool numeric = false) {
    return Cell{std::move(html), numeric, false};
  }
};

struct Table {
  std::string caption;              // text
  std::vector<std::string> header;  // text; <th scope="col">
  std::vector<bool> numeric;        // per column (header alignment); may be shorter
  // The first cell of each row is its header (<th scope="row">).
  std::vector<std::vector<Cell>> rows;
};

// Where a page's links lead. The report pages link to each other, to each URL's timeline and to
// the API's CSV and JSON of the same report; a page written to a file by the command line has no
// server behind it, and then links nowhere (`enabled` false) unless given a base.
struct Links {
  bool enabled = false;
  // Put before a report page's name ("changes?from=..", "clusters", "identical", "history",
  // "url?url=..", and "./" for the index): "" for a page served under /reports/.
  std::string pages;
  // Put before an API path ("reports/changes?.."): "../v1/" for a page served under /reports/.
  std::string api;

  // The pages under /reports/ seen from a page at `/reports/NAME` ("" and "../v1/"), at
  // `/v1/reports/NAME` ("../../reports/" and "../"), or from `base` (an absolute URL or path
  // ending in "/reports/", the command line's --link-base).
  static Links FromReports() { return Links{true, "", "../v1/"}; }
  static Links FromApi() { return Links{true, "../../reports/", "../"}; }
  static Links FromBase(std::string_view base) {
    return Links{true, std::string(base), std::string(base) + "../v1/"};
  }

  // The link to `page` (e.g. "clusters"), or "" when links are off.
  std::string Page(std::string_view page) const;
  // An <a> to `page` with `text`; only the escaped text when links are off.
  std::string A(std::string_view page, std::string_view text) const;
  // The URL's timeline page ("url?url=..") as a link whose text is the URL; the escaped URL when
  // links are off. Never a link to the URL itself: a report's URLs are often dead, and a hostile
  // one must not be one click away.
  std::string Timeline(std::string_view url) const;
};

// The report pages the navigation bar names, in its order.
enum class PageName { kIndex, kChanges, kHistory, kIdentical, kClusters, kUrl };

struct Bar {
  std::string label;       // text, drawn above the bar
  double value = 0;        // bar length on the chart's scale
  std::string value_text;  // text, drawn after the bar ("1,234 (12.5%)")
  int colour = 0;          // index into the palette (0..5)
};

// A horizontal bar chart: one row per bar, labels and values written beside the bars, drawn to
// scale on an axis with ticks and a title.
struct BarChart {
  std::string title;        // text; the chart's heading and <title>
  std::string description;  // text; <desc> and a caption under the chart
  std::string axis;         // text; the axis title under the ticks ("URLs", "Resemblance")
  // The value at the axis's end: 0 picks a round number at or above the largest value (a count
  // axis); a measure with a fixed range gives it (1 for a resemblance), so that 0.33 is a third.
  double scale_max = 0;
  std::vector<Bar> bars;
};

// One segment of a stacked column.
struct Segment {
  std::string name;  // text: the legend entry and the segment's <title>
  uint64_t value = 0;
  int colour = 0;
};

// A table written in pieces, for a table whose rows stream: TableStart, rows, TableEnd.
// `row_id` (may be empty) is the row's id, a link target ("set-3"); `header` (the table's) names
// each cell for the phone-width layout.
std::string TableStart(const Table& table);
std::string TableRow(const std::vector<Cell>& row, const std::vector<std::string>& header,
                     std::string_view row_id = {});
std::string TableEnd();

// Vertical stacked columns on a count axis, one per point of a series (e.g. per sweep interval),
// each column a link; a legend names the colours in text, and every segment has a <title> with
// its count. The axis ends at a round number at or above the tallest column.
struct ColumnChart {
  std::string title;
  std::string description;
  std::string axis;  // the vertical axis's title ("URLs")
  std::vector<std::string> legend;
  std::vector<int> legend_colours;
  struct Column {
    std::string label;  // text under the column
    std::string href;   // the link (may be empty)
    std::vector<Segment> segments;
  };
  std::vector<Column> columns;
};

// An HTML page under construction.
class Page {
 public:
  explicit Page(std::string_view title);  // text; <title> and the <h1>

  // The navigation bar between the report pages (nothing when links are off); `current` is
  // marked, not linked.
  void Nav(const Links& links, PageName current);
  void Heading(int level, std::string_view text, std::string_view id = {});  // level 2 or 3
  void Paragraph(std::string_view text);
  // A paragraph of prepared HTML (the caller escaped what it holds).
  void ParagraphHtml(std::string_view html);
  // A highlighted note (role="note"): text.
  void Note(std::string_view text);
  // Key figures as a list of labelled numbers (label text, value text, and a short hint).
  struct Figure {
    std::string label, value, hint;
  };
  void Figures(const std::vector<Figure>& figures);
  void AddTable(const Table& table);
  void AddChart(const BarChart& chart);
  void AddColumns(const ColumnChart& chart);
  void Raw(std::string_view html);

  // The whole document.
  std::string Finish() const;
  // The body so far, and the page around a body: for a page written in pieces (Start, pieces,
  // End), whose content streams.
  const std::string& Body() const { return body_; }
  std::string Start() const;
  static std::string End();

 private:
  std::string title_;
  std::string body_;
  int charts_ = 0;  // for unique ids
};

}  // namespace shingled::report::html

#endif  // SHINGLED_REPORT_HTML_H_
