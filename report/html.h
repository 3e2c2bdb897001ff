// A small toolkit for self-contained HTML report pages: escaping, number formatting, a page
// skeleton with inline CSS, headings, tables and SVG bar charts. No JavaScript, no network:
// a page opens from a file.
//
// Accessibility: real headings (h1..h3), tables with a caption and <th scope>, charts with a
// text title and description, every bar labelled with its name and value in text (colour is
// never the only carrier), and a layout that reads at 1280 px and at phone width (~390 px:
// tables scroll sideways in their own box, charts scale down).
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

struct Bar {
  std::string label;       // text, drawn left of the bar
  double value = 0;        // bar length against the chart's largest value
  std::string value_text;  // text, drawn after the bar ("1,234 (12.5%)")
  int colour = 0;          // index into the palette (0..5)
};

// A horizontal bar chart: one row per bar, labels and values written beside the bars.
struct BarChart {
  std::string title;        // text; the chart's heading and <title>
  std::string description;  // text; <desc> and a caption under the chart
  std::vector<Bar> bars;
};

// One segment of a stacked bar.
struct Segment {
  std::string name;  // text: the legend entry and the segment's <title>
  uint64_t value = 0;
  int colour = 0;
};

// Horizontal stacked bars (one per row, e.g. per sweep interval), each segment's share of its
// row; a legend names the colours in text, and every segment has a <title> with its count.
struct StackedChart {
  std::string title;
  std::string description;
  std::vector<std::string> legend;                                 // names, in colour order
  std::vector<int> legend_colours;                                 // the same length
  std::vector<std::pair<std::string, std::vector<Segment>>> rows;  // label, segments
};

// An HTML page under construction.
class Page {
 public:
  explicit Page(std::string_view title);  // text; <title> and the <h1>

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
  void AddStacked(const StackedChart& chart);
  void Raw(std::string_view html);

  // The whole document.
  std::string Finish() const;

 private:
  std::string title_;
  std::string body_;
  int charts_ = 0;  // for unique ids
};

}  // namespace shingled::report::html

#endif  // SHINGLED_REPORT_HTML_H_
