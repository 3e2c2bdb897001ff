#include "dedup/streaming_canonicalizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "dedup/canonicalize.h"
#include "dedup/tokenizer.h"

namespace shingled::dedup {
namespace {

using Tokens = std::vector<std::string>;

// Tokens of a UTF-8 HTML document fed in the given pieces.
Tokens HtmlTokens(const std::vector<std::string_view>& pieces) {
  TokenCollector collector;
  Tokenizer tokenizer(&collector);
  HtmlTextExtractor extractor(&tokenizer);
  for (std::string_view piece : pieces) extractor.Feed(piece);
  extractor.Finish();
  tokenizer.Finish();
  return collector.tokens;
}

Tokens HtmlTokens(std::string_view html) { return HtmlTokens(std::vector<std::string_view>{html}); }

// Tokens of a whole page through StreamingCanonicalizer, fed in pieces of `piece` bytes.
Tokens PageTokens(std::string_view bytes, std::string_view content_type, size_t piece,
                  CanonicalizeInfo* info = nullptr) {
  TokenCollector collector;
  StreamingCanonicalizer canonicalizer(content_type, &collector);
  for (size_t i = 0; i < bytes.size(); i += piece) canonicalizer.Feed(bytes.substr(i, piece));
  CanonicalizeInfo result = canonicalizer.Finish();
  if (info != nullptr) *info = result;
  return collector.tokens;
}

// ----- text, phrasing and word breaks --------------------------------------------------------

TEST(StreamingCanonicalizerTest, PhrasingElementsDoNotBreakWords) {
  EXPECT_EQ(HtmlTokens("foo<b>bar</b> baz<span>qux</span><a href=x>quux</a>"),
            (Tokens{"foobar", "bazquxquux"}));
}

TEST(StreamingCanonicalizerTest, OtherElementsBreakWords) {
  EXPECT_EQ(HtmlTokens("a<p>b</p>c<div>d</div>e<br>f<li>g<table><td>h<h1>i</h1>j<img>k<button>l"),
            (Tokens{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}));
}

TEST(StreamingCanonicalizerTest, TagsTheTreeBuilderIgnoresDoNotBreakWords) {
  // End tags with no open element to close.
  EXPECT_EQ(HtmlTokens("a</div>b</li>c</td>d</hr>e</table>f"), (Tokens{"abcdef"}));
  // ... except </p> and </br>, which make an element.
  EXPECT_EQ(HtmlTokens("a</p>b</br>c"), (Tokens{"a", "b", "c"}));
  EXPECT_EQ(HtmlTokens("a<div>b</div>c</div>d"), (Tokens{"a", "b", "cd"}));
  // Table parts outside a table.
  EXPECT_EQ(HtmlTokens("a<td>b<tr>c<tbody>d<caption>e<col>f<th>g<frame>h"), (Tokens{"abcdefgh"}));
  EXPECT_EQ(HtmlTokens("<table><tr><td>a<td>b</table>c<td>d"), (Tokens{"a", "b", "cd"}));
  // <html>, <head> and <body> again, or in the wrong place.
  EXPECT_EQ(HtmlTokens("<body>a<body>b<html>c<head>d</head>e</body>f</html>g"),
            (Tokens{"abcdefg"}));
}

TEST(StreamingCanonicalizerTest, InSelectMostTagsAreIgnored) {
  // "in select" ignores every tag but option, optgroup, script, template: no breaks, and no
  // raw text either.
  EXPECT_EQ(HtmlTokens("a<select><div>x</div>y<style>z</style></select>b"),
            (Tokens{"a", "xyz", "b"}));
  EXPECT_EQ(HtmlTokens("<select>a<option>b</option><optgroup>c</optgroup>d"),
            (Tokens{"a", "b", "c", "d"}));
  // <select>, <input>, <textarea> close it; so do table parts when a table is open.
  EXPECT_EQ(HtmlTokens("<select>a<select>b<p>c"), (Tokens{"a", "b", "c"}));
  EXPECT_EQ(HtmlTokens("<select>a<textarea>b</textarea>c"), (Tokens{"a", "b", "c"}));
  EXPECT_EQ(HtmlTokens("<table><tr><td><select>a<td>b</table>c"), (Tokens{"a", "b", "c"}));
  EXPECT_EQ(HtmlTokens("<select><script>x</script>y</select>"), (Tokens{"y"}));
}

TEST(StreamingCanonicalizerTest, FramesetDocumentsHaveNoText) {
  EXPECT_EQ(HtmlTokens("<head><title>t</title></head><frameset><frame>x<noframes>y</noframes>"
                       "</frameset>z"),
            (Tokens{"t"}));
  // After body content, <frameset> is ignored: no element, no word break.
  EXPECT_EQ(HtmlTokens("<p>a<frameset>b"), (Tokens{"ab"}));
  EXPECT_EQ(HtmlTokens("<frameset><frame>text</frameset>"), (Tokens{}));
}

TEST(StreamingCanonicalizerTest, UnknownElementsArePhrasing) {
  // Names the parser does not know (custom elements) render inline, as in the reference.
  EXPECT_EQ(HtmlTokens("a<my-widget>b</my-widget>c<dialog>d</dialog><averyveryverylongname>e"),
            (Tokens{"abcde"}));
}

TEST(StreamingCanonicalizerTest, DroppedElementsDoNotBreakWords) {
  EXPECT_EQ(HtmlTokens("a<style>x</style>b<script>y</script>c<link rel=x>d<meta>e"),
            (Tokens{"abcde"}));
}

TEST(StreamingCanonicalizerTest, ImpliedEndOfAWordSeparatingElementBreaks) {
  // "</ruby>" closes the open <rt>, whose end edge separates words.
  EXPECT_EQ(HtmlTokens("<ruby>base<rt>ann</ruby>x"), (Tokens{"base", "ann", "x"}));
  // Closed explicitly, or no block inside: the end tag of the phrasing element does not break.
  EXPECT_EQ(HtmlTokens("<ruby>base<rt>ann</rt>more</ruby>x"), (Tokens{"base", "ann", "morex"}));
  EXPECT_EQ(HtmlTokens("<ruby>a<rb>b</rb></ruby>c"), (Tokens{"abc"}));
}

TEST(StreamingCanonicalizerTest, TagNamesAreCaseInsensitive) {
  // <script> is phrasing content: "d" and "e" join.
  EXPECT_EQ(HtmlTokens("a<B>b</B>c<DIV>d<ScRiPt>x</sCrIpT>e"), (Tokens{"abc", "de"}));
}

TEST(StreamingCanonicalizerTest, LoneLessThanIsText) {
  EXPECT_EQ(HtmlTokens("a < b <3 c<"), (Tokens{"a", "b", "3", "c"}));
  EXPECT_EQ(HtmlTokens("x</"), (Tokens{"x"}));
}

TEST(StreamingCanonicalizerTest, NulIsDroppedInText) {
  // The tree builder ignores NUL in body text, so the text around it joins.
  EXPECT_EQ(HtmlTokens(std::string_view("a\0b", 3)), (Tokens{"ab"}));
}

// ----- tags and attributes ---------------------------------------------------------------------

TEST(StreamingCanonicalizerTest, AttributesAreSkippedWhateverTheirQuoting) {
  EXPECT_EQ(HtmlTokens("<a title=\"x>y\" alt='p>q' data-x=u rel=\"a'b\" z>text</a>"),
            (Tokens{"text"}));
  // An unquoted value ends at '>'.
  EXPECT_EQ(HtmlTokens("<a x=u>v>w"), (Tokens{"v", "w"}));
  // A quote inside an attribute name does not start a value.
  EXPECT_EQ(HtmlTokens("<a b\"c>d"), (Tokens{"d"}));
  // Attributes on end tags are skipped too.
  EXPECT_EQ(HtmlTokens("<p>a</p x=\">\">b"), (Tokens{"a", "b"}));
}

TEST(StreamingCanonicalizerTest, SelfClosingSyntax) {
  EXPECT_EQ(HtmlTokens("a<br/>b<img src=x />c<div/>d<span/>e"), (Tokens{"a", "b", "c", "de"}));
}

TEST(StreamingCanonicalizerTest, UnterminatedTagIsDropped) {
  EXPECT_EQ(HtmlTokens("a<div title=\"never closed"), (Tokens{"a"}));
}

// ----- comments, doctype, bogus comments, CDATA -------------------------------------------------

TEST(StreamingCanonicalizerTest, Comments) {
  EXPECT_EQ(HtmlTokens("a<!-- x -->b"), (Tokens{"ab"}));  // a comment is no element edge
  EXPECT_EQ(HtmlTokens("<!-->a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("<!--->a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("<!-- x --!>a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("<!-- -- > x ---->a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("<!-- <!-- nested --> a -->"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("a<!-- never closed"), (Tokens{"a"}));
}

TEST(StreamingCanonicalizerTest, DoctypeAndBogusComments) {
  EXPECT_EQ(HtmlTokens("<!DOCTYPE html PUBLIC \"-//W3C//DTD\">a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("<!doctype html \"x>y\">"), (Tokens{"y"}));  // ends at the first '>'
  EXPECT_EQ(HtmlTokens("<?xml version=\"1.0\"?>a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("<!ELEMENT x>a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("<!->a"), (Tokens{"a"}));
  EXPECT_EQ(HtmlTokens("</3 x>a</>b"), (Tokens{"ab"}));
}

TEST(StreamingCanonicalizerTest, CdataIsTextOnlyInForeignContent) {
  // Outside SVG/MathML, a bogus comment that ends at the first '>'.
  EXPECT_EQ(HtmlTokens("x<![CDATA[a>b]]>y"), (Tokens{"xb", "y"}));
  EXPECT_EQ(HtmlTokens("<svg><![CDATA[a<b>]]c]]]></svg>"), (Tokens{"a", "b", "c"}));
  // A breakout tag leaves foreign content.
  EXPECT_EQ(HtmlTokens("<svg><p>x<![CDATA[a]]>y"), (Tokens{"xy"}));
}

// ----- raw text, RCDATA, plaintext --------------------------------------------------------------

TEST(StreamingCanonicalizerTest, RawTextElementsAreDropped) {
  EXPECT_EQ(HtmlTokens("a<style>p{x:<b>}</style>b"), (Tokens{"ab"}));
  EXPECT_EQ(HtmlTokens("a<iframe><p>x</p></iframe>b"), (Tokens{"ab"}));
  EXPECT_EQ(HtmlTokens("a<noembed>x</noembed><noframes>y</noframes>b"), (Tokens{"ab"}));
  EXPECT_EQ(HtmlTokens("<style>x</styles></style >y"), (Tokens{"y"}));
}

TEST(StreamingCanonicalizerTest, ScriptEndsOnlyAtItsEndTag) {
  EXPECT_EQ(HtmlTokens("a<script>if (x<y) s='</scr'+'ipt>';</script>b"), (Tokens{"ab"}));
  EXPECT_EQ(HtmlTokens("<script>x</style></script>y"), (Tokens{"y"}));
}

TEST(StreamingCanonicalizerTest, ScriptDataEscapeStates) {
  // Inside "<!--", a "<script>" opens the double-escaped state, where "</script>" does not end
  // the script.
  EXPECT_EQ(HtmlTokens("<script><!--<script>x</script>y--></script>z"), (Tokens{"z"}));
  // Escaped without the double escape: "</script>" ends it.
  EXPECT_EQ(HtmlTokens("<script><!-- x </script>y"), (Tokens{"y"}));
  // "-->" leaves the escape, so a later "<!--<script>" starts over.
  EXPECT_EQ(HtmlTokens("<script><!-- a --> <script> </script>y"), (Tokens{"y"}));
  EXPECT_EQ(HtmlTokens("<script><!--<scripts></script>y"), (Tokens{"y"}));
}

TEST(StreamingCanonicalizerTest, XmpIsRawTextButVisible) {
  EXPECT_EQ(HtmlTokens("<xmp>a&amp;<b>c</b></xmp>"), (Tokens{"a", "amp", "b", "c", "b"}));
}

TEST(StreamingCanonicalizerTest, RcdataKeepsTextAndDecodesReferences) {
  EXPECT_EQ(HtmlTokens("<title>caf&eacute; <b>x</title>y"), (Tokens{"café", "b", "x", "y"}));
  EXPECT_EQ(HtmlTokens("<textarea>a</textareax></textarea>b"), (Tokens{"a", "textareax", "b"}));
}

TEST(StreamingCanonicalizerTest, PlaintextRunsToTheEnd) {
  EXPECT_EQ(HtmlTokens("a<plaintext>b</plaintext><p>&amp;"),
            (Tokens{"a", "b", "plaintext", "p", "amp"}));
}

// ----- elements whose content is dropped
// ----------------------------------------------------------

TEST(StreamingCanonicalizerTest, TemplateContentIsDropped) {
  EXPECT_EQ(HtmlTokens("a<template>b<div>c<template>d</template>e</div></template>f"),
            (Tokens{"af"}));
  EXPECT_EQ(HtmlTokens("a</template>b"), (Tokens{"ab"}));  // stray end tag: no effect
}

TEST(StreamingCanonicalizerTest, NoscriptInBodyIsDroppedAsMarkup) {
  // Scripting is disabled (as in Gumbo): the content is markup, so a comment hides its end tag.
  EXPECT_EQ(HtmlTokens("<body>a<noscript>b<!-- </noscript> -->c</noscript>d"), (Tokens{"ad"}));
}

TEST(StreamingCanonicalizerTest, NoscriptTextInHeadIsVisible) {
  // "in head noscript": text pops the noscript and ends the head; it is body text.
  EXPECT_EQ(HtmlTokens("<head><noscript><link rel=x>text</noscript></head><p>b"),
            (Tokens{"text", "b"}));
  EXPECT_EQ(HtmlTokens("<head><noscript><style>s</style></noscript><title>t</title>"),
            (Tokens{"t"}));
}

TEST(StreamingCanonicalizerTest, ScriptAndStyleInSvgAreDropped) {
  EXPECT_EQ(HtmlTokens("<svg><style>s</style><script>x</script><text>t</text></svg>"),
            (Tokens{"t"}));
  EXPECT_EQ(HtmlTokens("<svg><title>a&lt;b</title></svg>"), (Tokens{"a", "b"}));
}

// ----- character references -------------------------------------------------------------------

TEST(StreamingCanonicalizerTest, NamedReferences) {
  EXPECT_EQ(HtmlTokens("caf&eacute; &Eacute;T&Eacute;"), (Tokens{"café", "été"}));
  EXPECT_EQ(HtmlTokens("x&nbsp;y&amp;z&lt;w"), (Tokens{"x", "y", "z", "w"}));
  // Two code points: U+2242 U+0338.
  EXPECT_EQ(HtmlTokens("a&NotEqualTilde;b"), (Tokens{"a", "b"}));
  // The longest name.
  EXPECT_EQ(HtmlTokens("a&CounterClockwiseContourIntegral;b"), (Tokens{"a", "b"}));
  // Unknown names stay text.
  EXPECT_EQ(HtmlTokens("&foo;bar &"), (Tokens{"foo", "bar"}));
}

TEST(StreamingCanonicalizerTest, LegacyReferencesWithoutSemicolon) {
  EXPECT_EQ(HtmlTokens("caf&eacutex"), (Tokens{"caféx"}));
  EXPECT_EQ(HtmlTokens("&notit;"), (Tokens{"it"}));  // "¬it;": the longest legacy prefix
  EXPECT_EQ(HtmlTokens("&notin;"), (Tokens{}));      // "∉"
  EXPECT_EQ(HtmlTokens("&ampx &amp"), (Tokens{"x"}));
  EXPECT_EQ(HtmlTokens("x&Eacute"), (Tokens{"xé"}));  // at the end of the input
  // Names that are not legacy need their semicolon.
  EXPECT_EQ(HtmlTokens("&alpha x"), (Tokens{"alpha", "x"}));
  EXPECT_EQ(HtmlTokens("&alpha;x"), (Tokens{"αx"}));
}

TEST(StreamingCanonicalizerTest, NumericReferences) {
  EXPECT_EQ(HtmlTokens("&#97;&#x62;&#X63;&#0000100;"), (Tokens{"abcd"}));
  EXPECT_EQ(HtmlTokens("&#233t&#xe9"), (Tokens{"été"}));  // no semicolon
  EXPECT_EQ(HtmlTokens("a&#x80;b"), (Tokens{"a", "b"}));  // U+20AC, a symbol
  EXPECT_EQ(HtmlTokens("a&#x9F;b"), (Tokens{"aÿb"}));     // 0x9F is Ÿ in windows-1252
  EXPECT_EQ(HtmlTokens("&#x8A;&#x8D;"), (Tokens{"š"}));   // Š folded; 0x8D stays a control
  // Invalid code points are U+FFFD, a separator.
  EXPECT_EQ(HtmlTokens("a&#0;b&#xD800;c&#x110000;d&#99999999999999999999;e"),
            (Tokens{"a", "b", "c", "d", "e"}));
  // No digits: the text stays.
  EXPECT_EQ(HtmlTokens("&#;&#x;&#xg &#"), (Tokens{"x", "xg"}));
}

TEST(StreamingCanonicalizerTest, ReferencesAreNotDecodedInRawText) {
  EXPECT_EQ(HtmlTokens("<script>&lt;/script></script>a"), (Tokens{"a"}));
}

// ----- UTF-8 ------------------------------------------------------------------------------------

TEST(StreamingCanonicalizerTest, MarkupDoesNotJoinAnIncompleteSequence) {
  // "\xC3" "\xA9" is é, but with a tag between them a converter makes each U+FFFD.
  EXPECT_EQ(HtmlTokens("ab\xC3<b>\xA9"
                       "cd"),
            (Tokens{"ab", "cd"}));
  EXPECT_EQ(HtmlTokens(std::string_view("ab\xC3\0\xA9"
                                        "cd",
                                        7)),
            (Tokens{"ab", "cd"}));
  // Split across Feed calls with no markup between, it is é.
  EXPECT_EQ(HtmlTokens(std::vector<std::string_view>{"ab\xC3",
                                                     "\xA9"
                                                     "cd"}),
            (Tokens{"abécd"}));
}

// ----- chunking ---------------------------------------------------------------------------------

constexpr std::string_view kTrickyDocuments[] = {
    "<!DOCTYPE html><html><head><title>T&amp;t</title><script>var s='</scr'+'ipt>';<!--"
    "<script></script>--></script><style>p{}</style></head><body>caf&eacute;&notit;"
    "<p title=\"a>b\" x='c>d' y=e>one<b>two</b>&#x41;&#65;&#x80;</p><!-- c --!>"
    "<![CDATA[x]]><svg><![CDATA[in]]></svg><template>t</template><noscript>n</noscript>"
    "<textarea>&lt;ta</textarea><xmp>&amp;</xmp><?pi?></x><plaintext>&amp;<b>",
    "&CounterClockwiseContourIntegral;&CounterClockwiseContourIntegralx&amp&ampx&#;&#x;&#1",
    "<head><noscript><link>text</noscript></head>é\xC3<i>\xA9漢字",
    "<script><!--<script>x</script>y--></script>z<!-- -- --!- -->",
};

TEST(StreamingCanonicalizerTest, SameTokensWhateverTheSplitPoint) {
  for (std::string_view doc : kTrickyDocuments) {
    const Tokens whole = HtmlTokens(doc);
    for (size_t i = 0; i <= doc.size(); ++i) {
      EXPECT_EQ(HtmlTokens(std::vector<std::string_view>{doc.substr(0, i), doc.substr(i)}), whole)
          << "split at " << i << " of: " << doc;
    }
    for (size_t i = 0; i + 1 < doc.size(); ++i) {
      for (size_t j = i + 1; j < doc.size(); j += 7) {
        ASSERT_EQ(HtmlTokens(std::vector<std::string_view>{doc.substr(0, i), doc.substr(i, j - i),
                                                           doc.substr(j)}),
                  whole)
            << "split at " << i << " and " << j << " of: " << doc;
      }
    }
  }
}

TEST(StreamingCanonicalizerTest, SameTokensFedByteByByte) {
  for (std::string_view doc : kTrickyDocuments) {
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < doc.size(); ++i) bytes.push_back(doc.substr(i, 1));
    EXPECT_EQ(HtmlTokens(bytes), HtmlTokens(doc)) << doc;
  }
}

TEST(StreamingCanonicalizerTest, PageSameTokensWhateverThePieceSize) {
  std::string page = "<html><body>";
  for (int i = 0; i < 2000; ++i) page += "<p class=x>word" + std::to_string(i) + " caf&eacute;";
  const Tokens whole = PageTokens(page, "text/html", page.size());
  ASSERT_FALSE(whole.empty());
  for (size_t piece : {1, 2, 3, 7, 100, 4096, 8191, 8192, 8193, 20000}) {
    EXPECT_EQ(PageTokens(page, "text/html", piece), whole) << "piece " << piece;
  }
}

// ----- bounded memory ---------------------------------------------------------------------------

// Feeds `prefix` then 100 MB of `filler` in 64 KB chunks; returns the most bytes ever buffered.
size_t MaxBufferedWhileFeeding(std::string_view prefix, char filler) {
  TokenCollector collector;
  StreamingCanonicalizer canonicalizer("text/html", &collector);
  canonicalizer.Feed(prefix);
  const std::string chunk(size_t{64} * 1024, filler);
  size_t max_buffered = 0;
  for (size_t fed = 0; fed < size_t{100} * 1024 * 1024; fed += chunk.size()) {
    canonicalizer.Feed(chunk);
    max_buffered = std::max(max_buffered, canonicalizer.BufferedBytesForTesting());
  }
  canonicalizer.Finish();
  return max_buffered;
}

// Tag name, reference and lookahead buffers are all below this, whatever the input.
constexpr size_t kMaxExtractorBuffer = 64;

TEST(StreamingCanonicalizerTest, BoundedMemoryOnHugeUnterminatedConstructs) {
  EXPECT_LE(MaxBufferedWhileFeeding("<!--", 'x'), kMaxExtractorBuffer);
  EXPECT_LE(MaxBufferedWhileFeeding("<a title=\"", 'x'), kMaxExtractorBuffer);
  EXPECT_LE(MaxBufferedWhileFeeding("<a title=", 'x'), kMaxExtractorBuffer);
  EXPECT_LE(MaxBufferedWhileFeeding("<", 'a'), kMaxExtractorBuffer);  // a 100 MB tag name
  EXPECT_LE(MaxBufferedWhileFeeding("&", 'a'), kMaxExtractorBuffer);  // a 100 MB reference name
  EXPECT_LE(MaxBufferedWhileFeeding("&#", '9'), kMaxExtractorBuffer);
  EXPECT_LE(MaxBufferedWhileFeeding("<script>", 'x'), kMaxExtractorBuffer);
  EXPECT_LE(MaxBufferedWhileFeeding("<title></", 'a'), kMaxExtractorBuffer);
  EXPECT_LE(MaxBufferedWhileFeeding("<!DOCTYPE", ' '), kMaxExtractorBuffer);
}

TEST(StreamingCanonicalizerTest, SniffBufferIsReleasedOnceDecided) {
  TokenCollector collector;
  StreamingCanonicalizer canonicalizer("", &collector);
  canonicalizer.Feed("<html><body>");
  EXPECT_EQ(canonicalizer.BufferedBytesForTesting(), 12u);  // still sniffing
  canonicalizer.Feed(std::string(kSniffBytes, 'a'));
  EXPECT_LE(canonicalizer.BufferedBytesForTesting(), kMaxExtractorBuffer);
  canonicalizer.Finish();
}

// ----- whole pages
// --------------------------------------------------------------------------------

TEST(StreamingCanonicalizerTest, PageCharsetIsConverted) {
  CanonicalizeInfo info;
  EXPECT_EQ(PageTokens("<p>caf\xE9 na\xEFve", "text/html; charset=windows-1252", 3, &info),
            (Tokens{"café", "naïve"}));
  EXPECT_EQ(info.kind, ContentKind::kHtml);
  EXPECT_EQ(info.charset, "windows-1252");
  EXPECT_EQ(info.tokens, 2u);
}

TEST(StreamingCanonicalizerTest, PageBomIsSkipped) {
  EXPECT_EQ(PageTokens("\xEF\xBB\xBFword", "text/html", 1), (Tokens{"word"}));
}

TEST(StreamingCanonicalizerTest, PlainTextSkipsTheHtmlReader) {
  EXPECT_EQ(PageTokens("a<b>c &amp;", "text/plain", 2), (Tokens{"a", "b", "c", "amp"}));
}

TEST(StreamingCanonicalizerTest, BinaryHasNoTokens) {
  CanonicalizeInfo info;
  EXPECT_EQ(PageTokens("GIF89a words", "image/gif", 4, &info), (Tokens{}));
  EXPECT_EQ(info.kind, ContentKind::kBinary);
}

// An undeclared page whose first kSniffBytes are ASCII is sniffed as UTF-8; Latin-1 bytes after
// them are windows-1252 letters, not separators, in both canonicalizers.
TEST(StreamingCanonicalizerTest, LatinBytesAfterAnAsciiSniffWindowAreLetters) {
  const std::string page = "<p>" + std::string(kSniffBytes, ' ') + "caf\xE9 cr\xE8me</p>";
  for (CanonicalizerKind kind : {CanonicalizerKind::kStreaming, CanonicalizerKind::kGumbo}) {
    TokenCollector tokens;
    const CanonicalizeInfo info = CanonicalizePageWith(kind, page, "text/html", &tokens);
    EXPECT_EQ(info.charset_source, CharsetSource::kSniffUtf8);
    EXPECT_EQ(tokens.tokens, (Tokens{"caf\xC3\xA9", "cr\xC3\xA8me"}))
        << CanonicalizerKindName(kind);
  }
  EXPECT_EQ(PageTokens(page, "text/html", 7), (Tokens{"caf\xC3\xA9", "cr\xC3\xA8me"}));
}

TEST(StreamingCanonicalizerTest, InfoMatchesCanonicalizePage) {
  const std::string pages[] = {"<html><meta charset=\"iso-8859-2\"><p>\xB1\xE6", "plain words",
                               std::string("\xFF\xFE"
                                           "a\0b\0",
                                           6),  // UTF-16LE with a BOM
                               std::string("<p>") + std::string(10000, 'x') + "\xE9",
                               std::string("<p>") + std::string(9000, 'x') + " caf\xE9 cr\xE8me"};
  for (const std::string& page : pages) {
    for (std::string_view type : {"", "text/html", "text/plain", "application/octet-stream"}) {
      TokenCollector streaming;
      TokenCollector gumbo;
      const CanonicalizeInfo a =
          CanonicalizePageWith(CanonicalizerKind::kStreaming, page, type, &streaming);
      const CanonicalizeInfo b =
          CanonicalizePageWith(CanonicalizerKind::kGumbo, page, type, &gumbo);
      EXPECT_EQ(a.kind, b.kind) << type;
      EXPECT_EQ(a.charset, b.charset) << type;
      EXPECT_EQ(a.charset_source, b.charset_source) << type;
      EXPECT_EQ(a.tokens, b.tokens) << type;
      EXPECT_EQ(streaming.tokens, gumbo.tokens) << type;
    }
  }
}

TEST(StreamingCanonicalizerTest, CanonicalizerKindNames) {
  EXPECT_EQ(CanonicalizerKindName(CanonicalizerKind::kStreaming), "streaming");
  EXPECT_EQ(CanonicalizerKindName(CanonicalizerKind::kGumbo), "gumbo");
  ASSERT_TRUE(ParseCanonicalizerKind("streaming").ok());
  EXPECT_EQ(ParseCanonicalizerKind("streaming").value(), CanonicalizerKind::kStreaming);
  EXPECT_EQ(ParseCanonicalizerKind("gumbo").value(), CanonicalizerKind::kGumbo);
  EXPECT_EQ(ParseCanonicalizerKind("Gumbo").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseCanonicalizerKind("").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace shingled::dedup
