// The HTML toolkit of the report pages.
#include "report/html.h"

#include <algorithm>
#include <cstdio>

namespace shingled::report::html {
namespace {

// The Okabe-Ito palette (distinguishable with the common colour-vision deficiencies); text on
// the page never relies on it alone.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                    "#CC79A7", "#56B4E9", "#7F7F7F"};
constexpr int kColours = 7;

const char* Colour(int index) { return kPalette[((index % kColours) + kColours) % kColours]; }

constexpr std::string_view kCss = R"css(
:root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#1a1a1a;background:#fff}
main{max-width:1100px;margin:0 auto;padding:1rem 1.25rem 3rem}
h1{font-size:1.7rem;line-height:1.25;margin:.5rem 0 .75rem}
h2{font-size:1.35rem;margin:2.25rem 0 .5rem;padding-bottom:.2rem;border-bottom:2px solid #d0d0d0}
h3{font-size:1.1rem;margin:1.5rem 0 .4rem}
p{max-width:75ch}
a{color:#0b57a4}
.figures{list-style:none;padding:0;margin:.75rem 0;display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.6rem}
.figures li{border:1px solid #c8c8c8;border-radius:6px;padding:.5rem .75rem;background:#fafafa}
.figures .label{display:block;font-weight:600}
.figures .value{display:block;font-size:1.5rem;font-weight:700;font-variant-numeric:tabular-nums}
.figures .hint{display:block;font-size:.85rem;color:#4a4a4a}
.table-wrap{overflow-x:auto;max-width:100%;border:1px solid #d6d6d6;border-radius:4px;margin:.5rem 0 1.25rem}
table{border-collapse:collapse;width:100%}
caption{text-align:left;font-weight:600;padding:.45rem .6rem;background:#f7f7f7}
th,td{padding:.35rem .6rem;border-top:1px solid #e3e3e3;text-align:left;vertical-align:top}
thead th{background:#eef1f4;white-space:nowrap}
th[scope=row]{font-weight:600}
th[scope=row]:not(.long){white-space:nowrap}
dl{max-width:75ch}
dt{font-weight:600;margin-top:.5rem}
dd{margin:0 0 0 1.25rem}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.nowrap{white-space:nowrap}
.long{overflow-wrap:anywhere;word-break:break-word;min-width:12rem;max-width:36rem}
figure{margin:1rem 0 1.5rem;max-width:480px}
figure svg{display:block;width:100%;height:auto}
figcaption{font-size:.9rem;color:#404040;margin-top:.25rem}
.chart-title{font-weight:600;margin:0 0 .25rem}
.legend{list-style:none;padding:0;margin:.25rem 0 .5rem;display:flex;flex-wrap:wrap;gap:.2rem 1rem;font-size:.95rem}
.swatch{display:inline-block;width:.95em;height:.95em;border:1px solid #222;vertical-align:-.12em;margin-right:.35em}
.note{background:#fff6dc;border-left:4px solid #a15c00;padding:.5rem .75rem;max-width:75ch}
@media (max-width:640px){
 main{padding:.75rem .75rem 2rem}
 h1{font-size:1.35rem}
 h2{font-size:1.2rem}
 .figures{grid-template-columns:repeat(2,minmax(0,1fr))}
 .figures .value{font-size:1.25rem}
 th,td{padding:.3rem .45rem}
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

void AppendText(std::string* out, double x, double y, std::string_view text, bool bold = false) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\"%s>", x, y,
                bold ? " font-weight=\"600\"" : "");
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

void Page::AddTable(const Table& table) {
  body_.append("<div class=\"table-wrap\" tabindex=\"0\" role=\"region\" aria-label=\"")
      .append(Escape(table.caption))
      .append("\"><table>\n");
  if (!table.caption.empty())
    body_.append("<caption>").append(Escape(table.caption)).append("</caption>\n");
  body_.append("<thead><tr>");
  for (size_t i = 0; i < table.header.size(); ++i) {
    const bool numeric = i < table.numeric.size() && table.numeric[i];
    body_.append(numeric ? "<th scope=\"col\" class=\"num\">" : "<th scope=\"col\">")
        .append(Escape(table.header[i]))
        .append("</th>");
  }
  body_.append("</tr></thead>\n<tbody>\n");
  for (const std::vector<Cell>& row : table.rows) {
    body_.append("<tr>");
    for (size_t i = 0; i < row.size(); ++i) {
      const Cell& cell = row[i];
      const char* cls = cell.numeric ? " class=\"num\"" : cell.long_text ? " class=\"long\"" : "";
      if (i == 0) {
        body_.append("<th scope=\"row\"").append(cls).append(">").append(cell.html).append("</th>");
      } else {
        body_.append("<td").append(cls).append(">").append(cell.html).append("</td>");
      }
    }
    body_.append("</tr>\n");
  }
  body_.append("</tbody></table></div>\n");
}

void Page::AddChart(const BarChart& chart) {
  // Each bar on its own row under its label, so that the chart reads at phone width: a
  // 420-unit wide drawing scales down to ~360 px without shrinking its text much.
  constexpr double kWidth = 420, kRow = 46, kBar = 16, kValueRoom = 150;
  const int id = ++charts_;
  const double height = kRow * static_cast<double>(chart.bars.size()) + 6;
  double max = 0;
  for (const Bar& b : chart.bars) max = std::max(max, b.value);
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
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = kRow * static_cast<double>(i);
    AppendText(&svg, 0, y + 16, b.label, true);
    const double room = kWidth - kValueRoom;
    double w = max > 0 ? room * b.value / max : 0;
    if (b.value > 0) w = std::max(w, 2.0);
    AppendRect(&svg, 0, y + 22, w, kBar, b.colour, b.label + ": " + b.value_text);
    AppendText(&svg, w + 6, y + 35, b.value_text);
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

void Page::AddStacked(const StackedChart& chart) {
  constexpr double kWidth = 420, kRow = 46, kBar = 18;
  const int id = ++charts_;
  const double height = kRow * static_cast<double>(chart.rows.size()) + 6;
  std::string html = "<figure><p class=\"chart-title\">" + Escape(chart.title) + "</p>";
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
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-labelledby=\"chart%d-t chart%d-d\" "
      "font-size=\"14\" font-family=\"system-ui,sans-serif\" fill=\"#1a1a1a\">",
      kWidth, height, id, id);
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
  for (size_t r = 0; r < chart.rows.size(); ++r) {
    const auto& [label, segments] = chart.rows[r];
    const double y = kRow * static_cast<double>(r);
    AppendText(&html, 0, y + 16, label, true);
    uint64_t total = 0;
    for (const Segment& s : segments) total += s.value;
    double x = 0;
    for (const Segment& s : segments) {
      if (s.value == 0 || total == 0) continue;
      const double w = kWidth * static_cast<double>(s.value) / static_cast<double>(total);
      AppendRect(
          &html, x, y + 22, w, kBar, s.colour,
          label + ": " + s.name + " " + Count(s.value) + " (" + Percent(s.value, total) + ")");
      x += w;
    }
    if (total == 0) AppendText(&html, 0, y + 36, "no URLs");
  }
  html.append("</svg><figcaption>")
      .append(Escape(chart.description))
      .append("</figcaption></figure>\n");
  body_.append(html);
}

void Page::Raw(std::string_view html) { body_.append(html); }

std::string Page::Finish() const {
  std::string out;
  out.reserve(body_.size() + kCss.size() + 512);
  out.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
      .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
      .append("<title>")
      .append(Escape(title_))
      .append("</title>\n<style>")
      .append(kCss)
      .append("</style>\n</head>\n<body>\n<main>\n")
      .append(body_)
      .append("</main>\n</body>\n</html>\n");
  return out;
}

}  // namespace shingled::report::html
