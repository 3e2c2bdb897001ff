// The HTML toolkit of the report pages.
#include "report/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shingled::report::html {
namespace {

// The Okabe-Ito palette (distinguishable with the common colour-vision deficiencies), then a
// dark and a pale blue for shades of one quantity beside its blue and sky blue (the bands of
// changed pages); text on the page never relies on colour alone.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
                                    "#56B4E9", "#7F7F7F", "#003F6B", "#B8DDF5"};
constexpr int kColours = 9;

const char* Colour(int index) { return kPalette[((index % kColours) + kColours) % kColours]; }

constexpr std::string_view kCss = R"css(
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#1a1a1a;background:#fff}
main{max-width:1180px;margin:0 auto;padding:1rem 1.25rem 3rem}
h1{font-size:1.7rem;line-height:1.25;margin:.5rem 0 .75rem}
h2{font-size:1.35rem;margin:2.25rem 0 .5rem;padding-bottom:.2rem;border-bottom:2px solid #d0d0d0}
h3{font-size:1.1rem;margin:1.5rem 0 .4rem}
p{max-width:75ch}
a{color:#0b57a4}
.figures{list-style:none;padding:0;margin:.75rem 0;display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.6rem}
.figures li{border:1px solid #c8c8c8;border-radius:6px;padding:.5rem .75rem;background:#fafafa}
.figures .label{display:block;font-weight:600}
.figures .value{display:block;font-size:1.5rem;font-weight:700;font-variant-numeric:tabular-nums;white-space:nowrap}
.figures .hint{display:block;font-size:.85rem;color:#4a4a4a}
.table-wrap{overflow-x:auto;max-width:100%;border:1px solid #d6d6d6;border-radius:4px;margin:.5rem 0 1.25rem}
table{border-collapse:collapse;width:100%}
caption{text-align:left;font-weight:600;padding:.45rem .6rem;background:#f7f7f7}
th,td{padding:.35rem .5rem;border-top:1px solid #e3e3e3;text-align:left;vertical-align:top}
thead th{background:#eef1f4;vertical-align:bottom}
thead th.num{white-space:normal}
th[scope=row]{font-weight:600}
th[scope=row]:not(.long){white-space:nowrap}
dl{max-width:75ch}
dt{font-weight:600;margin-top:.5rem}
dd{margin:0 0 0 1.25rem}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.nowrap{white-space:nowrap}
.long{overflow-wrap:anywhere;word-break:break-word;min-width:12rem;max-width:36rem}
figure{margin:1rem 0 1.5rem;max-width:480px}
figure.wide{max-width:900px}
figure svg{display:block;width:100%;height:auto}
figcaption{font-size:.9rem;color:#404040;margin-top:.25rem}
.chart-title{font-weight:600;margin:0 0 .25rem}
.legend{list-style:none;padding:0;margin:.25rem 0 .5rem;display:flex;flex-wrap:wrap;gap:.2rem 1rem;font-size:.95rem}
.swatch{display:inline-block;width:.95em;height:.95em;border:1px solid #222;vertical-align:-.12em;margin-right:.35em}
nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem .5rem;padding:.4rem 0;margin:0;border-bottom:1px solid #d0d0d0;font-size:.95rem}
nav li{margin:0}
nav a,nav span{display:inline-block;padding:.2rem .5rem;border-radius:4px}
nav span[aria-current]{background:#0b57a4;color:#fff;font-weight:600}
.note{background:#fff6dc;border-left:4px solid #a15c00;padding:.5rem .75rem;max-width:75ch}
@media (max-width:640px){
 main{padding:.75rem .75rem 2rem}
 h1{font-size:1.35rem}
 h2{font-size:1.2rem}
 .figures{grid-template-columns:repeat(2,minmax(0,1fr))}
 .figures .value{font-size:1.25rem}
 th,td{padding:.3rem .45rem}
 .cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 .cards,.cards caption,.cards tbody,.cards tr,.cards th,.cards td{display:block}
 .cards tr{border-top:1px solid #c8c8c8;padding:.35rem 0}
 .cards th,.cards td{border:0;padding:.1rem .6rem;text-align:left;white-space:normal}
 .cards .long{max-width:none;min-width:0}
 .cards [data-label]::before{content:attr(data-label) ": ";font-weight:600}
 .cards th[scope=row]{font-size:1.05rem}
}
)css";

void AppendRect(std::string* out, double x, double y, double w, double h, int colour,
                std::string_view title) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", x, y, w,
                h, Colour(colour));
  out->append(buf);
  out->append("<title>").append(Escape(title)).append("</title></rect>");
}

// `halo`: a white outline under the glyphs, so that a grid line behind the text does not cut it.
void AppendText(std::string* out, double x, double y, std::string_view text, bool bold = false,
                bool halo = false) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\"%s%s>", x, y,
                bold ? " font-weight=\"600\"" : "",
                halo ? " paint-order=\"stroke\" stroke=\"#fff\" stroke-width=\"4\"" : "");
  out->append(buf).append(Escape(text)).append("</text>");
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&':
          out.append("&amp;");
          break;
        case '<':
          out.append("&lt;");
          break;
        case '>':
          out.append("&gt;");
          break;
        case '"':
          out.append("&quot;");
          break;
        case '\'':
          out.append("&#39;");
          break;
        default:
          // Control characters other than tab and newline are not allowed in HTML text.
          if (c < 0x20 && c != '\t' && c != '\n') {
            out.append("\xEF\xBF\xBD");
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: kept when well formed, else one U+FFFD per bad byte.
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (c >= 0xF5) n = 0;
    bool ok = n > 0 && i + n <= text.size();
    for (size_t j = 1; ok && j < n; ++j) {
      ok = (static_cast<unsigned char>(text[i + j]) & 0xC0) == 0x80;
    }
    if (ok && n == 3) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && n == 4) {
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

std::string Count(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');  // before each group of 3
    out.push_back(digits[i]);
  }
  return out;
}

std::string Fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "\xE2\x80\x93";
  return Fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1).append("%");
}

Page::Page(std::string_view title) : title_(title) {
  body_.append("<h1>").append(Escape(title)).append("</h1>\n");
}

void Page::Heading(int level, std::string_view text, std::string_view id) {
  level = std::clamp(level, 2, 3);
  const std::string tag = "h" + std::to_string(level);
  body_.append("<").append(tag);
  if (!id.empty()) body_.append(" id=\"").append(Escape(id)).append("\"");
  body_.append(">").append(Escape(text)).append("</").append(tag).append(">\n");
}

void Page::Paragraph(std::string_view text) {
  body_.append("<p>").append(Escape(text)).append("</p>\n");
}

void Page::ParagraphHtml(std::string_view html) {
  body_.append("<p>").append(html).append("</p>\n");
}

void Page::Note(std::string_view text) {
  body_.append("<p class=\"note\" role=\"note\">").append(Escape(text)).append("</p>\n");
}

void Page::Figures(const std::vector<Figure>& figures) {
  body_.append("<ul class=\"figures\">\n");
  for (const Figure& f : figures) {
    body_.append("<li><span class=\"label\">")
        .append(Escape(f.label))
        .append("</span><span class=\"value\">")
        .append(Escape(f.value))
        .append("</span>");
    if (!f.hint.empty())
      body_.append("<span class=\"hint\">").append(Escape(f.hint)).append("</span>");
    body_.append("</li>\n");
  }
  body_.append("</ul>\n");
}

std::string TableStart(const Table& table) {
  std::string out = "<div class=\"table-wrap\" tabindex=\"0\" role=\"region\" aria-label=\"";
  out.append(Escape(table.caption)).append("\"><table class=\"cards\">\n");
  if (!table.caption.empty())
    out.append("<caption>").append(Escape(table.caption)).append("</caption>\n");
  out.append("<thead><tr>");
  for (size_t i = 0; i < table.header.size(); ++i) {
    const bool numeric = i < table.numeric.size() && table.numeric[i];
    out.append(numeric ? "<th scope=\"col\" class=\"num\">" : "<th scope=\"col\">")
        .append(Escape(table.header[i]))
        .append("</th>");
  }
  out.append("</tr></thead>\n<tbody>\n");
  return out;
}

std::string TableRow(const std::vector<Cell>& row, const std::vector<std::string>& header,
                     std::string_view row_id) {
  std::string out = "<tr";
  if (!row_id.empty()) out.append(" id=\"").append(Escape(row_id)).append("\"");
  out.append(">");
  for (size_t i = 0; i < row.size(); ++i) {
    const Cell& cell = row[i];
    const char* cls = cell.numeric ? " class=\"num\"" : cell.long_text ? " class=\"long\"" : "";
    std::string label;
    if (i < header.size()) label = " data-label=\"" + Escape(header[i]) + "\"";
    if (i == 0) {
      out.append("<th scope=\"row\"").append(cls).append(label).append(">");
      out.append(cell.html).append("</th>");
    } else {
      out.append("<td").append(cls).append(label).append(">").append(cell.html).append("</td>");
    }
  }
  out.append("</tr>\n");
  return out;
}

std::string TableEnd() { return "</tbody></table></div>\n"; }

void Page::AddTable(const Table& table) {
  body_.append(TableStart(table));
  for (const std::vector<Cell>& row : table.rows) body_.append(TableRow(row, table.header));
  body_.append(TableEnd());
}

namespace {

// A round step for about four intervals up to `max`: 1, 2 or 5 times a power of ten.
double NiceStep(double max) {
  const double raw = max / 4;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// A tick's label: a whole number with its thousands grouped, or two decimals.
std::string TickText(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9 && v >= 0) {
    return Count(static_cast<uint64_t>(std::llround(v)));
  }
  return Fixed(v, 2);
}

}  // namespace

void Page::AddChart(const BarChart& chart) {
  // Each bar on its own row under its label, so that the chart reads at phone width: a
  // 420-unit wide drawing scales down to ~360 px without shrinking its text much. The bars end
  // short of the right edge to leave room for the value written after the longest one.
  constexpr double kWidth = 420, kRow = 46, kBar = 16, kLeft = 6, kRoom = 290, kAxis = 44;
  const int id = ++charts_;
  double max = 0;
  for (const Bar& b : chart.bars) max = std::max(max, b.value);
  double scale = chart.scale_max;
  double step = 0;
  if (scale <= 0) {
    // A count axis: the first round tick at or above the largest value (1 for an empty chart).
    step = max > 0 ? NiceStep(max) : 0.25;
    if (max > 0 && max < 4 && std::round(max) == max) step = 1;  // whole-number ticks
    scale = max > 0 ? step * std::ceil(max / step - 1e-9) : 1;
  } else {
    step = NiceStep(scale);
  }
  const double bars_height = kRow * static_cast<double>(chart.bars.size());
  const double height = bars_height + kAxis;
  std::string svg;
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-labelledby=\"chart%d-t chart%d-d\" "
      "font-size=\"14\" font-family=\"system-ui,sans-serif\" fill=\"#1a1a1a\">",
      kWidth, height, id, id);
  svg.append(buf);
  svg.append("<title id=\"chart")
      .append(std::to_string(id))
      .append("-t\">")
      .append(Escape(chart.title))
      .append("</title>");
  svg.append("<desc id=\"chart")
      .append(std::to_string(id))
      .append("-d\">")
      .append(Escape(chart.description))
      .append("</desc>");
  // Grid lines in each bar's stripe only (a line through the labels would cross their text),
  // then the axis under the bars with its ticks and their labels.
  const int ticks = static_cast<int>(std::floor(scale / step + 1e-9));
  for (int t = 0; t <= ticks; ++t) {
    const double x = kLeft + kRoom * step * t / scale;
    for (size_t i = 0; i < chart.bars.size(); ++i) {
      const double y = kRow * static_cast<double>(i);
      std::snprintf(buf, sizeof buf,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", x,
                    y + 20, x, y + 40, t == 0 ? "#555" : "#dcdcdc");
      svg.append(buf);
    }
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>", x,
                  bars_height, x, bars_height + 5);
    svg.append(buf);
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">", x,
                  bars_height + 19);
    svg.append(buf).append(Escape(TickText(step * t))).append("</text>");
  }
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>", kLeft,
                bars_height, kLeft + kRoom, bars_height);
  svg.append(buf);
  if (!chart.axis.empty()) {
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                  "font-size=\"13\" fill=\"#404040\">",
                  kLeft + kRoom / 2, bars_height + 37);
    svg.append(buf).append(Escape(chart.axis)).append("</text>");
  }
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = kRow * static_cast<double>(i);
    AppendText(&svg, kLeft, y + 16, b.label, true);
    double w = kRoom * std::min(b.value, scale) / scale;
    if (b.value > 0) w = std::max(w, 2.0);
    AppendRect(&svg, kLeft, y + 22, w, kBar, b.colour, b.label + ": " + b.value_text);
    AppendText(&svg, kLeft + w + 6, y + 35, b.value_text, false, /*halo=*/true);
  }
  svg.append("</svg>");
  body_.append("<figure><p class=\"chart-title\">")
      .append(Escape(chart.title))
      .append("</p>")
      .append(svg)
      .append("<figcaption>")
      .append(Escape(chart.description))
      .append("</figcaption></figure>\n");
}

void Page::AddColumns(const ColumnChart& chart) {
  constexpr double kLeft = 58, kTop = 10, kPlot = 240, kBottom = 70, kMinWidth = 420;
  const int id = ++charts_;
  // A drawing unit is a CSS pixel at most (the figure is no wider than the drawing), so that a
  // short series does not blow its text up; a long one scales down to the page's width.
  const double n = static_cast<double>(chart.columns.size());
  const double slot = std::clamp(800.0 / std::max(n, 1.0), 16.0, 56.0);
  const double width = std::max(kMinWidth, kLeft + slot * n + 10);
  const double height = kTop + kPlot + kBottom;
  double max = 0;
  for (const ColumnChart::Column& c : chart.columns) {
    uint64_t total = 0;
    for (const Segment& s : c.segments) total += s.value;
    max = std::max(max, static_cast<double>(total));
  }
  double step = max > 0 ? NiceStep(max) : 1;
  if (max > 0 && max < 4) step = 1;
  const double scale = max > 0 ? step * std::ceil(max / step - 1e-9) : 4;
  std::string html = "<figure class=\"wide\" style=\"max-width:" + Fixed(width, 0) +
                     "px\"><p "
                     "class=\"chart-title\">" +
                     Escape(chart.title) + "</p>";
  html.append("<ul class=\"legend\">");
  for (size_t i = 0; i < chart.legend.size(); ++i) {
    const int colour = i < chart.legend_colours.size() ? chart.legend_colours[i] : 0;
    html.append("<li><span class=\"swatch\" style=\"background:")
        .append(Colour(colour))
        .append("\"></span>")
        .append(Escape(chart.legend[i]))
        .append("</li>");
  }
  html.append("</ul>");
  char buf[320];
  std::snprintf(
      buf, sizeof buf,
      "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-labelledby=\"chart%d-t chart%d-d\" "
      "font-size=\"13\" font-family=\"system-ui,sans-serif\" fill=\"#1a1a1a\">",
      width, height, id, id);
  html.append(buf);
  html.append("<title id=\"chart")
      .append(std::to_string(id))
      .append("-t\">")
      .append(Escape(chart.title))
      .append("</title><desc id=\"chart")
      .append(std::to_string(id))
      .append("-d\">")
      .append(Escape(chart.description))
      .append("</desc>");
  const int ticks = static_cast<int>(std::floor(scale / step + 1e-9));
  for (int t = 0; t <= ticks; ++t) {
    const double v = step * t;
    const double y = kTop + kPlot - kPlot * v / scale;
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">",
                  kLeft, y, width - 4, y, t == 0 ? "#555" : "#dcdcdc", kLeft - 6, y + 4);
    html.append(buf).append(Escape(TickText(v))).append("</text>");
  }
  std::snprintf(buf, sizeof buf,
                "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\" "
                "font-size=\"12\" fill=\"#404040\">",
                kTop + kPlot / 2);
  html.append(buf).append(Escape(chart.axis)).append("</text>");
  for (size_t i = 0; i < chart.columns.size(); ++i) {
    const ColumnChart::Column& c = chart.columns[i];
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.15;
    const double w = slot * 0.7;
    if (!c.href.empty()) html.append("<a href=\"").append(Escape(c.href)).append("\">");
    double y = kTop + kPlot;
    for (const Segment& s : c.segments) {
      if (s.value == 0) continue;
      const double h = kPlot * static_cast<double>(s.value) / scale;
      y -= h;
      AppendRect(&html, x, y, w, std::max(h, 1.0), s.colour,
                 c.label + ": " + s.name + " " + Count(s.value));
    }
    // The label under the column, slanted so that long sweep names fit.
    std::snprintf(buf, sizeof buf,
                  "<text transform=\"translate(%.1f %.1f) rotate(-45)\" text-anchor=\"end\" "
                  "font-size=\"12\">",
                  x + w / 2 + 4, kTop + kPlot + 14);
    html.append(buf).append(Escape(c.label)).append("</text>");
    if (!c.href.empty()) html.append("</a>");
  }
  html.append("</svg><figcaption>")
      .append(Escape(chart.description))
      .append("</figcaption></figure>\n");
  body_.append(html);
}

void Page::Raw(std::string_view html) { body_.append(html); }

std::string Page::Start() const {
  std::string out;
  out.reserve(kCss.size() + 512);
  out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
      .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
      .append("<title>")
      .append(Escape(title_))
      .append("</title>\n<style>")
      .append(kCss)
      .append("</style>\n</head>\n<body>\n<main>\n");
  return out;
}

std::string Page::End() { return "</main>\n</body>\n</html>\n"; }

std::string Page::Finish() const { return Start() + body_ + End(); }

std::string QueryValue(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string Links::Page(std::string_view page) const {
  if (!enabled) return {};
  return pages + std::string(page);
}

std::string Links::A(std::string_view page, std::string_view text) const {
  if (!enabled) return Escape(text);
  std::string a = "<a href=\"";
  a.append(Escape(Page(page))).append("\">").append(Escape(text)).append("</a>");
  return a;
}

std::string Links::Timeline(std::string_view url) const {
  return A("url?url=" + QueryValue(url), url);
}

void Page::Nav(const Links& links, PageName current) {
  if (!links.enabled) return;
  struct Entry {
    PageName name;
    const char* page;
    const char* text;
  };
  static constexpr Entry kEntries[] = {
      // "./", not "": an empty href is the page itself.
      {PageName::kIndex, "./", "All reports"},
      {PageName::kChanges, "changes", "Changes between two sweeps"},
      {PageName::kHistory, "history", "Changes over all sweeps"},
      {PageName::kIdentical, "identical", "Identical content"},
      {PageName::kClusters, "clusters", "Clusters"},
      {PageName::kUrl, "./#url", "One URL's timeline"},
  };
  std::string nav = "<nav aria-label=\"Reports\"><ul>";
  for (const Entry& e : kEntries) {
    nav.append("<li>");
    if (e.name == current) {
      nav.append("<span aria-current=\"page\">").append(Escape(e.text)).append("</span>");
    } else {
      nav.append(links.A(e.page, e.text));
    }
    nav.append("</li>");
  }
  nav.append("</ul></nav>\n");
  body_.insert(0, nav);
}

}  // namespace shingled::report::html
