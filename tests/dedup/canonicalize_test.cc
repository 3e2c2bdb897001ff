#include "dedup/canonicalize.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/charset.h"
#include "dedup/tokenizer.h"

namespace shingled::dedup {
namespace {

using namespace std::literals;
using Tokens = std::vector<std::string>;

std::string ReadPage(const std::string& name) {
  const std::string path = std::string(SHINGLED_TEST_DATA_DIR) + "/pages/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

struct PageResult {
  CanonicalizeInfo info;
  Tokens tokens;
};

PageResult Canonicalize(std::string_view bytes, std::string_view content_type) {
  TokenCollector collector;
  PageResult r;
  r.info = CanonicalizePage(bytes, content_type, &collector);
  r.tokens = std::move(collector.tokens);
  EXPECT_EQ(r.info.tokens, r.tokens.size());
  return r;
}

// Tokens of an HTML fragment (UTF-8) through the Gumbo canonicalizer alone.
Tokens Html(std::string_view html) {
  TokenCollector collector;
  Tokenizer tokenizer(&collector);
  CanonicalizeHtmlGumbo(html, &tokenizer);
  tokenizer.Finish();
  return collector.tokens;
}

// ----------------------------------------------------------------------------------------------
// Sample pages (tests/data/pages): exact token lists.

TEST(CanonicalizePageTest, Markup) {
  PageResult r = Canonicalize(ReadPage("markup.html"), "text/html");
  EXPECT_EQ(r.info.kind, ContentKind::kHtml);
  EXPECT_EQ(r.info.charset, "UTF-8");
  EXPECT_EQ(r.info.charset_source, CharsetSource::kMeta);
  // Title kept; head style/script, comment, template, noscript and iframe fallback dropped;
  // <em>, <span> and <wbr> join words, <br>, <li>, <td>, <div> and <option> separate them;
  // textarea and option text kept.
  EXPECT_EQ(r.tokens,
            (Tokens{"shingles",    "sketches", "nearduplicate", "detection", "two",    "documents",
                    "are",         "roughly",  "the",           "same",      "when",   "their",
                    "resemblance", "is",       "high",          "first",     "second", "third",
                    "cell1",       "cell2",    "line",          "break",     "and",    "hardware",
                    "one",         "two",      "café",          "naïve",     "été",    "split",
                    "name",        "typed",    "text",          "red",       "green"}));
}

TEST(CanonicalizePageTest, Entities) {
  PageResult r = Canonicalize(ReadPage("entities.html"), "text/html; charset=utf-8");
  EXPECT_EQ(r.info.charset_source, CharsetSource::kHeader);
  // Named, decimal and hex references; legacy names without ';' (&eacute, &copy, &amp);
  // "&notit;" is "¬it;" (the longest legacy prefix); unknown names and empty references stay
  // literal; &#xD800; and &#0; are U+FFFD.
  EXPECT_EQ(r.tokens,
            (Tokens{"entities", "named", "été",   "tag",  "fish",   "chips", "cafés", "numeric",
                    "été",      "abc",   "hex",   "été",  "legacy", "été",   "2024",  "x",
                    "it",       "space", "bogus", "zzzz", "x",      "x",     "y"}));
}

TEST(CanonicalizePageTest, Windows1252DeclaredOnlyByMeta) {
  PageResult r = Canonicalize(ReadPage("windows1252_meta.html"), "text/html");
  EXPECT_EQ(r.info.charset, "windows-1252");
  EXPECT_EQ(r.info.charset_source, CharsetSource::kMeta);
  // 0x93/0x94 are curly quotes and 0x80 the euro sign in windows-1252: separators.
  EXPECT_EQ(r.tokens, (Tokens{"café", "quoted", "été", "naïve", "100", "à", "bientôt"}));
}

TEST(CanonicalizePageTest, ShiftJisDeclaredByHeader) {
  PageResult r = Canonicalize(ReadPage("shift_jis.html"), "text/html; charset=Shift_JIS");
  EXPECT_EQ(r.info.charset, "Shift_JIS");
  EXPECT_EQ(r.info.charset_source, CharsetSource::kHeader);
  // Ideographs and kana are a token each; full-width Latin is case-folded, not normalized.
  EXPECT_EQ(r.tokens,
            (Tokens{"日", "本", "日", "本", "語", "の", "テ", "キ", "ス", "ト", "test", "ａｂ"}));
}

TEST(CanonicalizePageTest, ShiftJisWithoutHeaderIsMisread) {
  // Nothing declares it: not valid UTF-8, so windows-1252, as a browser would do too.
  PageResult r = Canonicalize(ReadPage("shift_jis.html"), "text/html");
  EXPECT_EQ(r.info.charset, "windows-1252");
  EXPECT_EQ(r.info.charset_source, CharsetSource::kDefault);
}

TEST(CanonicalizePageTest, UndeclaredLatin1) {
  PageResult r = Canonicalize(ReadPage("latin1_undeclared.html"), "");
  EXPECT_EQ(r.info.kind, ContentKind::kHtml);
  EXPECT_EQ(r.info.charset, "windows-1252");
  EXPECT_EQ(r.info.charset_source, CharsetSource::kDefault);
  EXPECT_EQ(r.tokens, (Tokens{"grüsse", "aus", "münchen", "élève"}));  // ß folds to "ss"
}

TEST(CanonicalizePageTest, BrokenHtml) {
  PageResult r = Canonicalize(ReadPage("broken.html"), "text/html");
  // Misnested <b><i>, a table inside <p> whose stray "row" text is foster-parented before the
  // table (so it joins "next"), unclosed <a>s, an alt attribute (not text), a tag cut by the end
  // of the file.
  EXPECT_EQ(r.tokens,
            (Tokens{"unclosed", "paragraph", "bold", "both", "italic", "div", "in", "p", "nextrow",
                    "cell", "after", "no", "end", "link", "second", "attr", "x", "one", "two"}));
}

TEST(CanonicalizePageTest, InvalidUtf8BecomesSeparators) {
  PageResult r = Canonicalize(ReadPage("invalid_utf8.html"), "text/html");
  EXPECT_EQ(r.info.charset, "UTF-8");
  EXPECT_EQ(r.tokens, (Tokens{"ok", "bad", "caf", "x", "y", "z", "end", "q"}));
}

TEST(CanonicalizePageTest, EmptyPage) {
  PageResult r = Canonicalize(ReadPage("empty.html"), "text/html");
  EXPECT_EQ(r.info.kind, ContentKind::kHtml);
  EXPECT_EQ(r.info.charset, "UTF-8");
  EXPECT_EQ(r.info.tokens, 0u);
  r = Canonicalize("", "");
  EXPECT_EQ(r.info.kind, ContentKind::kText);
  EXPECT_EQ(r.info.tokens, 0u);
}

TEST(CanonicalizePageTest, Utf16WithBom) {
  for (const char* name : {"utf16le_bom.html", "utf16be_bom.html"}) {
    SCOPED_TRACE(name);
    PageResult r = Canonicalize(ReadPage(name), "");  // sniffed as HTML through the BOM
    EXPECT_EQ(r.info.kind, ContentKind::kHtml);
    EXPECT_EQ(r.info.charset_source, CharsetSource::kBom);
    EXPECT_EQ(r.tokens, (Tokens{"hello", "été", "日", "本"}));
  }
  EXPECT_EQ(Canonicalize(ReadPage("utf16be_bom.html"), "text/html").info.charset, "UTF-16BE");
}

TEST(CanonicalizePageTest, PlainTextSkipsTheParser) {
  PageResult r = Canonicalize(ReadPage("plain.txt"), "text/plain");
  EXPECT_EQ(r.info.kind, ContentKind::kText);
  EXPECT_EQ(r.tokens, (Tokens{"plain", "text", "not", "b", "html", "b", "tokens", "amp",
                              "punctuation", "café", "42", "x2"}));
}

TEST(CanonicalizePageTest, PlainTextLongerThanOneChunkIsNotCutAtChunkEdges) {
  // Multi-byte characters straddle the 64 KiB chunks the text path converts in.
  std::string text;
  Tokens want;
  for (int i = 0; text.size() < 300000; ++i) {
    text += "é" + std::to_string(i) + " ";
    want.push_back("é" + std::to_string(i));
  }
  EXPECT_EQ(Canonicalize(text, "text/plain; charset=utf-8").tokens, want);
}

TEST(CanonicalizePageTest, BinaryHasNoTokens) {
  // The first bytes of a PNG file: signature, then the IHDR chunk of a 1x1 image.
  const std::string png =
      "\x89PNG\r\n\x1A\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1F\x15\xC4\x89"
      "\0\0\0\rIDATx\x9C"
      "c\xF8\x0F\0\0\x01\x01\0\x05\x18\xD8N\0\0\0\0IEND\xAE\x42\x60\x82"s;
  for (std::string_view type : {""sv, "application/octet-stream"sv, "image/png"sv}) {
    PageResult r = Canonicalize(png, type);
    EXPECT_EQ(r.info.kind, ContentKind::kBinary) << type;
    EXPECT_EQ(r.info.charset, "");
    EXPECT_TRUE(r.tokens.empty());
  }
  // A binary media type wins over text-looking bytes.
  EXPECT_EQ(Canonicalize("<html>words</html>", "application/pdf").info.kind, ContentKind::kBinary);
}

// ----------------------------------------------------------------------------------------------
// Word breaks and dropped elements.

TEST(CanonicalizeHtmlGumboTest, PhrasingJoinsAndBlocksBreak) {
  struct Case {
    std::string_view html;
    Tokens want;
  };
  const Case cases[] = {
      {"foo<b>bar</b>", {"foobar"}},
      {"foo<a href=x>bar</a>baz", {"foobarbaz"}},
      {"foo<span><i><em>bar</em></i></span>", {"foobar"}},
      {"super<wbr>man", {"superman"}},
      {"foo<x-custom>bar</x-custom>", {"foobar"}},  // unknown elements are inline
      {"foo<ruby>bar<rt>baz</rt></ruby>", {"foobar", "baz"}},
      {"foo<div>bar</div>baz", {"foo", "bar", "baz"}},
      {"foo<br>bar", {"foo", "bar"}},
      {"foo<p>bar", {"foo", "bar"}},
      {"foo<img src=x>bar", {"foo", "bar"}},
      {"foo<input value=v>bar", {"foo", "bar"}},
      {"<h1>foo</h1><h2>bar</h2>", {"foo", "bar"}},
      {"<table><tr><td>a</td><td>b</td></tr></table>", {"a", "b"}},
      {"<ul><li>a<li>b</ul>", {"a", "b"}},
      {"<select><option>a<option>b</select>", {"a", "b"}},
      {"a<textarea>b</textarea>c", {"a", "b", "c"}},
      {"<svg><text>a</text><text>b</text></svg>", {"a", "b"}},
      {"<math><mi>x</mi><mo>+</mo><mi>y</mi></math>", {"x", "y"}},
      {"<title>T</title>body", {"t", "body"}},
  };
  for (const Case& c : cases) EXPECT_EQ(Html(c.html), c.want) << c.html;
}

TEST(CanonicalizeHtmlGumboTest, DroppedElements) {
  EXPECT_EQ(Html("a<script>b</script>c"), (Tokens{"ac"}));  // script is no word break
  EXPECT_EQ(Html("a <style>b</style> c"), (Tokens{"a", "c"}));
  EXPECT_EQ(Html("a <template><p>b</p></template> c"), (Tokens{"a", "c"}));
  EXPECT_EQ(Html("a <noscript>b</noscript> c"), (Tokens{"a", "c"}));
  EXPECT_EQ(Html("a <noembed>b</noembed> c"), (Tokens{"a", "c"}));
  EXPECT_EQ(Html("<frameset><noframes>b</noframes></frameset>"), (Tokens{}));
  EXPECT_EQ(Html("a <iframe>b</iframe> c"), (Tokens{"a", "c"}));
  EXPECT_EQ(Html("a <!-- b --> c"), (Tokens{"a", "c"}));
  EXPECT_EQ(Html("<!DOCTYPE html><?php echo 1 ?>a"), (Tokens{"a"}));
  EXPECT_EQ(Html("<svg><script>b</script><style>c</style></svg>a"), (Tokens{"a"}));
  EXPECT_EQ(Html("<head><title>t</title><meta name=x content=y><base href=z></head>"),
            (Tokens{"t"}));
}

TEST(CanonicalizeHtmlGumboTest, DocumentsThroughOneTokenizerStayApart) {
  // The implied <html> and <body> of each document break words at its edges.
  TokenCollector collector;
  Tokenizer tokenizer(&collector);
  CanonicalizeHtmlGumbo("abc<b>def", &tokenizer);
  CanonicalizeHtmlGumbo("ghi", &tokenizer);
  tokenizer.Finish();
  EXPECT_EQ(collector.tokens, (Tokens{"abcdef", "ghi"}));
}

// ----------------------------------------------------------------------------------------------
// Hostile input: no crash, bounded time, and (where the nesting limit applies) the same tokens
// as the structure would give.

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out.append(s);
  return out;
}

TEST(CanonicalizeHostileTest, HundredThousandNestedDivs) {
  const size_t n = 100000;
  PageResult r = Canonicalize(Repeat("<div>a", n) + "end", "text/html");
  ASSERT_EQ(r.tokens.size(), n);
  EXPECT_EQ(r.tokens.front(), "a");
  EXPECT_EQ(r.tokens[n - 2], "a");
  EXPECT_EQ(r.tokens.back(), "aend");  // one text node
}

TEST(CanonicalizeHostileTest, DeepNestingKeepsTokensExact) {
  const size_t n = 20000;
  // Closed properly: past the nesting limit the tags are removed, phrasing ones without a
  // trace and the others as a break, so the tokens do not change.
  EXPECT_EQ(Html(Repeat("<span>", n) + "word" + Repeat("</span>", n) + " next"),
            (Tokens{"word", "next"}));
  EXPECT_EQ(Html(Repeat("<div>", n) + "x" + Repeat("</div>", n) + "y"), (Tokens{"x", "y"}));
  const Tokens deep = Html(Repeat("<span>ab", 1000) + Repeat("</span>", 1000));
  // One 2000-byte word, cut by the Tokenizer into kMaxTokenBytes pieces.
  ASSERT_EQ(deep.size(), (2000 + kMaxTokenBytes - 1) / kMaxTokenBytes);
  EXPECT_EQ(deep.front(), Repeat("ab", kMaxTokenBytes / 2));
  // Mixed: each level is a block holding a phrasing element and, after the inner blocks, an
  // "x". Only the innermost "x" follows its <b> directly and joins it.
  std::string html;
  for (size_t i = 0; i < 2000; ++i) html += "<div><b>w" + std::to_string(i) + "</b>";
  for (size_t i = 0; i < 2000; ++i) html += "x</div>";
  Tokens structural;
  for (size_t i = 0; i + 1 < 2000; ++i) structural.push_back("w" + std::to_string(i));
  structural.push_back("w1999x");
  for (size_t i = 0; i + 1 < 2000; ++i) structural.push_back("x");
  EXPECT_EQ(Html(html), structural);
}

TEST(CanonicalizeHostileTest, ManyUnclosedFormattingElements) {
  // Each <p> would reconstruct every open formatting element: 1000 x 1000 nodes unbounded.
  std::string html;
  for (int i = 0; i < 1000; ++i) html += "<b id=" + std::to_string(i) + ">";
  for (int i = 0; i < 1000; ++i) html += "<p>x</p>";
  EXPECT_EQ(Html(html), Tokens(1000, "x"));
}

TEST(CanonicalizeHostileTest, UnterminatedComment) {
  EXPECT_EQ(Html("<p>before<!-- " + Repeat("a <p> b ", 200000)), (Tokens{"before"}));
}

TEST(CanonicalizeHostileTest, HugeAttribute) {
  EXPECT_EQ(Html("<div title=\"" + std::string(2000000, 'x') + "\">after</div>"),
            (Tokens{"after"}));
  // Unterminated: the rest of the page is inside the attribute value.
  EXPECT_EQ(Html("<p>before<div title=\"" + Repeat("x <b>y</b> ", 200000)), (Tokens{"before"}));
}

TEST(CanonicalizeHostileTest, UnterminatedScriptAndRawText) {
  EXPECT_EQ(Html("a<script>" + Repeat("<div>x", 100000)), (Tokens{"a"}));
  Tokens want(100001, "div");  // textarea content is text, markup included
  want.front() = "a";
  EXPECT_EQ(Html("a <textarea>" + Repeat("<div>", 100000)), want);
}

TEST(CanonicalizeHostileTest, DeepNoscriptAndForeignContent) {
  // Gumbo parses <noscript> content as markup, and <style>/<title> inside <svg> too: these
  // nest as deep as any <div> (they once escaped the nesting limit).
  EXPECT_EQ(Html("a " + Repeat("<noscript><div>", 100000) + "end"), (Tokens{"a"}));
  EXPECT_EQ(Html("a " + Repeat("<svg><style>", 100000) + "end"), (Tokens{"a"}));
  EXPECT_EQ(Html("a " + Repeat("<svg><title>", 100000) + "end"), (Tokens{"a", "end"}));
}

TEST(CanonicalizeHostileTest, DroppedElementPastTheLimitStaysHidden) {
  const std::string open = Repeat("<div>", 1000);
  const std::string close = Repeat("</div>", 1000);
  // As at the top: the dropped element vanishes without a word break.
  EXPECT_EQ(Html("x<template>hidden</template>y"), (Tokens{"xy"}));
  EXPECT_EQ(Html(open + "x<template>hid<template>den</template>den</template>y" + close),
            (Tokens{"xy"}));
  EXPECT_EQ(Html(open + "x<noscript><p>hidden</noscript>y" + close), (Tokens{"xy"}));
  EXPECT_EQ(Html(open + "x<template>never closed" + close), (Tokens{"x"}));
  EXPECT_EQ(Html(open + "x<svg><script>hidden</script></svg>y" + close), (Tokens{"x", "y"}));
}

TEST(CanonicalizeHostileTest, NulAndControlBytes) {
  PageResult r = Canonicalize(
      "<p>a\0b\x01"
      "c</p>"s,
      "text/html");
  EXPECT_EQ(r.tokens, (Tokens{"ab", "c"}));  // NUL in text is dropped by the HTML parser
}

}  // namespace
}  // namespace shingled::dedup
