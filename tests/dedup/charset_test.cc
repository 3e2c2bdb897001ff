#include "dedup/charset.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shingled::dedup {
namespace {

using namespace std::literals;

constexpr std::string_view kFffd = "\xEF\xBF\xBD";

// ----------------------------------------------------------------------------------------------
// ParseContentType

TEST(ParseContentTypeTest, PlainAndCharset) {
  ContentType t = ParseContentType("text/html; charset=UTF-8");
  EXPECT_EQ(t.mime, "text/html");
  EXPECT_EQ(t.charset, "UTF-8");  // as given, not lower-cased or resolved
}

TEST(ParseContentTypeTest, CaseWhitespaceAndQuotes) {
  ContentType t = ParseContentType("  Text/HTML ;Charset = \"iso-8859-1\" ; foo=bar");
  EXPECT_EQ(t.mime, "text/html");
  // "Charset " with a space before '=' is not the name "charset": RFC 9110 allows no space.
  EXPECT_EQ(t.charset, "");
  t = ParseContentType("text/html;CHARSET=\"iso-8859-1\"");
  EXPECT_EQ(t.charset, "iso-8859-1");
  t = ParseContentType("text/html; foo=\"a;b\\\"c\"; charset=Shift_JIS");
  EXPECT_EQ(t.charset, "Shift_JIS");  // the quoted ';' does not end the first parameter
  t = ParseContentType("text/html; charset=\"utf-8");  // unterminated quote
  EXPECT_EQ(t.charset, "utf-8");
}

TEST(ParseContentTypeTest, FirstCharsetWinsAndEmptyIgnored) {
  EXPECT_EQ(ParseContentType("text/html; charset=; charset=koi8-r").charset, "koi8-r");
  EXPECT_EQ(ParseContentType("text/html; charset=gbk; charset=big5").charset, "gbk");
  EXPECT_EQ(ParseContentType("text/html;;; charset=utf-8;").charset, "utf-8");
  EXPECT_EQ(ParseContentType("text/plain; format=flowed").charset, "");
}

TEST(ParseContentTypeTest, GarbageGivesEmptyMime) {
  for (std::string_view bad :
       {""sv, "   "sv, "html"sv, "text/"sv, "/html"sv, "text html"sv, "text/html charset=utf-8"sv,
        "te(xt/html"sv, ";charset=utf-8"sv, "\x01\xff/\xfe"sv}) {
    ContentType t = ParseContentType(bad);
    EXPECT_EQ(t.mime, "") << bad;
    EXPECT_EQ(t.charset, "") << bad;
  }
}

// ----------------------------------------------------------------------------------------------
// ResolveCharsetLabel

TEST(ResolveCharsetLabelTest, WhatwgLabels) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"utf-8", "UTF-8"},
      {"UTF8", "UTF-8"},
      {"unicode-1-1-utf-8", "UTF-8"},
      {"latin1", "windows-1252"},
      {"ISO-8859-1", "windows-1252"},
      {"ascii", "windows-1252"},
      {"us-ascii", "windows-1252"},
      {"cp1252", "windows-1252"},
      {"iso-8859-9", "windows-1254"},
      {"latin2", "ISO-8859-2"},
      {"iso8859-15", "ISO-8859-15"},
      {"l9", "ISO-8859-15"},
      {"iso-8859-16", "ISO-8859-16"},
      {"iso-8859-8-i", "ISO-8859-8-I"},
      {"visual", "ISO-8859-8"},
      {"koi8", "KOI8-R"},
      {"koi8-ru", "KOI8-U"},
      {"mac", "macintosh"},
      {"x-mac-ukrainian", "x-mac-cyrillic"},
      {"tis-620", "windows-874"},
      {"866", "IBM866"},
      {"x-sjis", "Shift_JIS"},
      {"ms932", "Shift_JIS"},
      {"windows-31j", "Shift_JIS"},
      {"euc-jp", "EUC-JP"},
      {"csiso2022jp", "ISO-2022-JP"},
      {"gb2312", "GBK"},
      {"chinese", "GBK"},
      {"x-gbk", "GBK"},
      {"GB18030", "gb18030"},
      {"big5-hkscs", "Big5"},
      {"ks_c_5601-1987", "EUC-KR"},
      {"windows-949", "EUC-KR"},
      {"utf-16", "UTF-16LE"},
      {"unicodefffe", "UTF-16BE"},
      {"x-user-defined", "x-user-defined"},
      {"windows-1258", "windows-1258"},
  };
  for (const auto& [label, name] : cases) EXPECT_EQ(ResolveCharsetLabel(label), name) << label;
}

TEST(ResolveCharsetLabelTest, WhitespaceAndCase) {
  EXPECT_EQ(ResolveCharsetLabel("\t Shift_JIS \r\n\f"), "Shift_JIS");
  EXPECT_EQ(ResolveCharsetLabel("WINDOWS-1251"), "windows-1251");
}

TEST(ResolveCharsetLabelTest, UnknownIsEmpty) {
  for (std::string_view bad : {""sv, " "sv, "utf-9"sv, "utf 8"sv, "iso-2022-kr"sv, "hz-gb-2312"sv,
                               "replacement"sv, "ebcdic"sv, "utf-8\v"sv, "\xc3\xa9"sv}) {
    EXPECT_EQ(ResolveCharsetLabel(bad), "") << bad;
  }
}

// ----------------------------------------------------------------------------------------------
// PrescanMetaCharset

TEST(PrescanMetaCharsetTest, MetaCharset) {
  EXPECT_EQ(PrescanMetaCharset("<meta charset=utf-8>"), "UTF-8");
  EXPECT_EQ(PrescanMetaCharset("<!doctype html><html><head><META CHARSET=\"Shift_JIS\">"),
            "Shift_JIS");
  EXPECT_EQ(PrescanMetaCharset("<meta charset='koi8-r'/>"), "KOI8-R");
  EXPECT_EQ(PrescanMetaCharset("<meta/charset=latin1>"), "windows-1252");
  EXPECT_EQ(PrescanMetaCharset("<meta\tcharset = gbk >"), "GBK");
}

TEST(PrescanMetaCharsetTest, HttpEquivNeedsPragma) {
  EXPECT_EQ(PrescanMetaCharset(
                "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\">"),
            "EUC-JP");
  // Attribute order does not matter.
  EXPECT_EQ(PrescanMetaCharset("<meta content='text/html;charset=big5' http-equiv=content-type>"),
            "Big5");
  // content= without http-equiv=content-type is no declaration.
  EXPECT_EQ(PrescanMetaCharset("<meta content=\"text/html; charset=euc-jp\">"), "");
  EXPECT_EQ(
      PrescanMetaCharset("<meta http-equiv=refresh content=\"text/html; charset=euc-jp\"><p>"), "");
}

TEST(PrescanMetaCharsetTest, ExtractFromContent) {
  auto meta = [](std::string_view content) {
    return PrescanMetaCharset("<meta http-equiv=Content-Type content=\"" + std::string(content) +
                              "\">");
  };
  EXPECT_EQ(meta("text/html; charset=windows-1251"), "windows-1251");
  EXPECT_EQ(meta("text/html;charset = 'iso-8859-2' ;x=y"), "ISO-8859-2");
  EXPECT_EQ(meta("charsetcharset=koi8-u"), "KOI8-U");  // the first "charset" has no '='
  EXPECT_EQ(meta("text/html; charset='utf-8"), "");    // unmatched quote
  EXPECT_EQ(meta("text/html; charset="), "");
  EXPECT_EQ(meta("text/html; charset=bogus"), "");
}

TEST(PrescanMetaCharsetTest, FirstAttributeOfANameWins) {
  EXPECT_EQ(PrescanMetaCharset("<meta charset=gbk charset=big5>"), "GBK");
  // charset= overrides a content= seen before it in the same tag.
  EXPECT_EQ(
      PrescanMetaCharset("<meta http-equiv=content-type content='charset=big5' charset=euc-kr>"),
      "EUC-KR");
  // A failed charset= stays failed: a later content= cannot replace it.
  EXPECT_EQ(
      PrescanMetaCharset("<meta charset=bogus http-equiv=content-type content='charset=big5'>"),
      "");
}

TEST(PrescanMetaCharsetTest, SkipsCommentsTagsAndOtherMarkup) {
  EXPECT_EQ(PrescanMetaCharset("<!-- <meta charset=big5> --><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("<!--><meta charset=big5>"), "Big5");  // "<!-->" is whole
  EXPECT_EQ(PrescanMetaCharset("<!-- unterminated <meta charset=big5>"), "");
  EXPECT_EQ(PrescanMetaCharset("<div title='<meta charset=big5>'><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("<?xml version='1.0' encoding='big5'?><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("<!DOCTYPE html><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("</meta charset=big5><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("<metal charset=big5><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("<meta><meta name=x><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("<meta charset=bogus><meta charset=gbk>"), "GBK");
  EXPECT_EQ(PrescanMetaCharset("< meta charset=big5>"), "");
}

TEST(PrescanMetaCharsetTest, Utf16MeansUtf8AndUserDefinedMeansWindows1252) {
  EXPECT_EQ(PrescanMetaCharset("<meta charset=utf-16>"), "UTF-8");
  EXPECT_EQ(PrescanMetaCharset("<meta charset=utf-16be>"), "UTF-8");
  EXPECT_EQ(PrescanMetaCharset("<meta charset=x-user-defined>"), "windows-1252");
}

TEST(PrescanMetaCharsetTest, OnlyTheFirst1024Bytes) {
  const std::string pad(1000, ' ');
  EXPECT_EQ(PrescanMetaCharset(pad + "<meta charset=gbk>"), "GBK");
  const std::string more(1010, ' ');
  EXPECT_EQ(PrescanMetaCharset(more + "<meta charset=gbk>"), "");  // cut inside the tag
  const std::string far(1024, ' ');
  EXPECT_EQ(PrescanMetaCharset(far + "<meta charset=gbk>"), "");
}

TEST(PrescanMetaCharsetTest, CutInsideATagIsNoAnswer) {
  EXPECT_EQ(PrescanMetaCharset("<meta charset=utf"), "");
  EXPECT_EQ(PrescanMetaCharset("<meta charset=\"utf-8"), "");
  EXPECT_EQ(PrescanMetaCharset("<meta charset"), "");
  EXPECT_EQ(PrescanMetaCharset("<meta "), "");
  EXPECT_EQ(PrescanMetaCharset(""), "");
}

// ----------------------------------------------------------------------------------------------
// DetectCharset

TEST(DetectCharsetTest, BomBeatsEverything) {
  CharsetDecision d = DetectCharset("koi8-r", "\xEF\xBB\xBF<meta charset=gbk>", true);
  EXPECT_EQ(d.charset, "UTF-8");
  EXPECT_EQ(d.source, CharsetSource::kBom);
  EXPECT_EQ(d.bom_length, 3u);
  d = DetectCharset("", "\xFF\xFE<\0"sv, true);
  EXPECT_EQ(d.charset, "UTF-16LE");
  EXPECT_EQ(d.bom_length, 2u);
  d = DetectCharset("", "\xFE\xFF\0<"sv, false);
  EXPECT_EQ(d.charset, "UTF-16BE");
  EXPECT_EQ(d.source, CharsetSource::kBom);
}

TEST(DetectCharsetTest, HeaderBeatsMeta) {
  CharsetDecision d = DetectCharset("Shift_JIS", "<meta charset=gbk>", true);
  EXPECT_EQ(d.charset, "Shift_JIS");
  EXPECT_EQ(d.source, CharsetSource::kHeader);
  EXPECT_EQ(d.bom_length, 0u);
}

TEST(DetectCharsetTest, UnknownHeaderLabelIsIgnored) {
  CharsetDecision d = DetectCharset("no-such-charset", "<meta charset=gbk>", true);
  EXPECT_EQ(d.charset, "GBK");
  EXPECT_EQ(d.source, CharsetSource::kMeta);
}

TEST(DetectCharsetTest, MetaOnlyForHtml) {
  CharsetDecision d = DetectCharset("", "<meta charset=gbk> caf\xC3\xA9", false);
  EXPECT_EQ(d.charset, "UTF-8");
  EXPECT_EQ(d.source, CharsetSource::kSniffUtf8);
}

TEST(DetectCharsetTest, SniffAndDefault) {
  EXPECT_EQ(DetectCharset("", "caf\xC3\xA9", true).source, CharsetSource::kSniffUtf8);
  EXPECT_EQ(DetectCharset("", "", true).charset, "UTF-8");
  CharsetDecision d = DetectCharset("", "caf\xE9 ol\xE9", true);
  EXPECT_EQ(d.charset, "windows-1252");
  EXPECT_EQ(d.source, CharsetSource::kDefault);
}

TEST(DetectCharsetTest, SniffAcceptsSequenceCutAtWindowEnd) {
  // A 3-byte character straddles the end of the kSniffBytes window.
  std::string head(kSniffBytes - 1, 'a');
  head += "\xE6\x97\xA5";
  ASSERT_GT(head.size(), kSniffBytes);
  EXPECT_EQ(DetectCharset("", head, false).source, CharsetSource::kSniffUtf8);
  head.resize(kSniffBytes - 2);
  head += "\xF0\x9F";  // the page itself ends inside a character
  EXPECT_EQ(DetectCharset("", head, false).source, CharsetSource::kSniffUtf8);
  // But invalid bytes anywhere in the window are not valid UTF-8...
  head = std::string(kSniffBytes - 1, 'a') + "\xFF";
  EXPECT_EQ(DetectCharset("", head, false).source, CharsetSource::kDefault);
  // ...and bytes beyond it are not looked at.
  head = std::string(kSniffBytes, 'a') + "\xFF";
  EXPECT_EQ(DetectCharset("", head, false).source, CharsetSource::kSniffUtf8);
  // A cut sequence is only allowed at the very end.
  EXPECT_EQ(DetectCharset("", "ab\xE6\x97 cd", false).source, CharsetSource::kDefault);
}

TEST(CharsetSourceNameTest, Names) {
  EXPECT_EQ(CharsetSourceName(CharsetSource::kBom), "bom");
  EXPECT_EQ(CharsetSourceName(CharsetSource::kHeader), "header");
  EXPECT_EQ(CharsetSourceName(CharsetSource::kMeta), "meta");
  EXPECT_EQ(CharsetSourceName(CharsetSource::kSniffUtf8), "sniff_utf8");
  EXPECT_EQ(CharsetSourceName(CharsetSource::kDefault), "default");
}

// ----------------------------------------------------------------------------------------------
// DetectContentKind

TEST(DetectContentKindTest, ByMime) {
  EXPECT_EQ(DetectContentKind("text/html", "\0\0"sv), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("application/xhtml+xml", ""), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("text/plain", "<html>"), ContentKind::kText);
  EXPECT_EQ(DetectContentKind("text/csv", ""), ContentKind::kText);
  EXPECT_EQ(DetectContentKind("image/png", "hello"), ContentKind::kBinary);
  EXPECT_EQ(DetectContentKind("application/pdf", ""), ContentKind::kBinary);
}

TEST(DetectContentKindTest, SniffedWhenMimeIsEmptyOrOctetStream) {
  EXPECT_EQ(DetectContentKind("", "<!DOCTYPE html><p>x"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("application/octet-stream", " \n\t<HTML lang=en>"),
            ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "\xEF\xBB\xBF<html>"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "<!-- c -->"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "<p>para"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "<div>"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "<b>"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "<br/>"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "<pre>"), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "<bogus>"), ContentKind::kText);
  EXPECT_EQ(DetectContentKind("", "<px>"), ContentKind::kText);
  EXPECT_EQ(DetectContentKind("", "Dear reader, <p> is a tag."), ContentKind::kText);
  EXPECT_EQ(DetectContentKind("", ""), ContentKind::kText);
  EXPECT_EQ(DetectContentKind("", "\x89PNG\r\n\x1A\n\0\0\0\rIHDR"sv), ContentKind::kBinary);
  EXPECT_EQ(DetectContentKind("", "text then a NUL\0"sv), ContentKind::kBinary);
}

TEST(DetectContentKindTest, Utf16WithBomIsNotBinary) {
  EXPECT_EQ(DetectContentKind("", "\xFF\xFE<\0h\0t\0m\0l\0>\0"sv), ContentKind::kHtml);
  EXPECT_EQ(DetectContentKind("", "\xFE\xFF\0h\0i"sv), ContentKind::kText);
  EXPECT_EQ(DetectContentKind("", "\xFF\xFEh\0\0\0"sv), ContentKind::kBinary);  // U+0000
}

TEST(DetectContentKindTest, NulBeyondSniffWindowIsIgnored) {
  std::string head(kSniffBytes, 'a');
  head.push_back('\0');
  EXPECT_EQ(DetectContentKind("", head), ContentKind::kText);
}

// ----------------------------------------------------------------------------------------------
// Utf8Converter

std::string ConvertAll(std::string_view charset, std::string_view bytes) {
  StatusOr<std::unique_ptr<Utf8Converter>> c = Utf8Converter::Create(charset);
  EXPECT_TRUE(c.ok()) << charset << ": " << c.status().ToString();
  if (!c.ok()) return {};
  std::string out;
  (*c)->Convert(bytes, &out);
  (*c)->Finish(&out);
  return out;
}

std::string Fffd(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += kFffd;
  return s;
}

TEST(Utf8ConverterTest, CreateRejectsNonCanonicalNames) {
  for (std::string_view bad : {""sv, "utf-8"sv, "latin1"sv, "shift_jis"sv, "bogus"sv}) {
    StatusOr<std::unique_ptr<Utf8Converter>> c = Utf8Converter::Create(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(Utf8ConverterTest, EveryResolvedNameHasAConverter) {
  // One label per canonical name: every name ResolveCharsetLabel returns must be creatable,
  // i.e. glibc has the iconv module we map it to.
  for (std::string_view label :
       {"utf-8",        "ibm866",       "iso-8859-2",   "iso-8859-3",     "iso-8859-4",
        "iso-8859-5",   "iso-8859-6",   "iso-8859-7",   "iso-8859-8",     "iso-8859-8-i",
        "iso-8859-10",  "iso-8859-13",  "iso-8859-14",  "iso-8859-15",    "iso-8859-16",
        "koi8-r",       "koi8-u",       "macintosh",    "windows-874",    "windows-1250",
        "windows-1251", "windows-1252", "windows-1253", "windows-1254",   "windows-1255",
        "windows-1256", "windows-1257", "windows-1258", "x-mac-cyrillic", "gbk",
        "gb18030",      "big5",         "euc-jp",       "iso-2022-jp",    "shift_jis",
        "euc-kr",       "utf-16be",     "utf-16le",     "x-user-defined"}) {
    const std::string name = ResolveCharsetLabel(label);
    ASSERT_NE(name, "") << label;
    StatusOr<std::unique_ptr<Utf8Converter>> c = Utf8Converter::Create(name);
    EXPECT_TRUE(c.ok()) << name << ": " << c.status().ToString();
    if (c.ok()) {
      std::string out;
      (*c)->Convert("Plain ASCII.", &out);
      (*c)->Finish(&out);
      if (name != "UTF-16BE" && name != "UTF-16LE") {
        EXPECT_EQ(out, "Plain ASCII.") << name;
      }
    }
  }
}

// Expected outputs from the WHATWG Encoding Standard's UTF-8 decoder: one U+FFFD per maximal
// subpart of an ill-formed sequence (also the Unicode standard's recommended practice).
TEST(Utf8ConverterTest, Utf8ReplacesMaximalSubparts) {
  const std::vector<std::pair<std::string_view, std::string>> cases = {
      {"a\x80z", "a" + Fffd(1) + "z"},          // lone continuation
      {"a\xC3z", "a" + Fffd(1) + "z"},          // truncated 2-byte
      {"a\xE2\x82z", "a" + Fffd(1) + "z"},      // truncated 3-byte: one subpart
      {"a\xF0\x9F\x98z", "a" + Fffd(1) + "z"},  // truncated 4-byte: one subpart
      {"\xC0\xAF", Fffd(2)},                    // overlong: C0 never starts a sequence
      {"\xE0\x80\xAF", Fffd(3)},                // overlong 3-byte
      {"\xED\xA0\x80", Fffd(3)},                // surrogate
      {"\xF4\x90\x80\x80", Fffd(4)},            // above U+10FFFF
      {"\xF5\x80", Fffd(2)},                    // F5 never starts a sequence
      {"\xFF\xFE", Fffd(2)},
      {"\xE2\x82\xAC\xF0\x9F\x98\x80", "\xE2\x82\xAC\xF0\x9F\x98\x80"},  // valid passes through
      {"\xE2\x82\xE2\x82\xAC", Fffd(1) + "\xE2\x82\xAC"},                // the bad byte starts anew
      {"\xC3", Fffd(1)},  // cut at the very end: Finish
      {""sv, ""},
      {"nul\0byte"sv, "nul\0byte"s},  // NUL is a valid character
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(ConvertAll("UTF-8", in), want);
}

TEST(Utf8ConverterTest, InvalidBytesInMultiByteEncodings) {
  // Shift_JIS lead byte followed by a byte that cannot trail: U+FFFD, then the byte itself.
  EXPECT_EQ(ConvertAll("Shift_JIS", "a\x93 b"), "a" + Fffd(1) + " b");
  // A byte that is never valid.
  EXPECT_EQ(ConvertAll("Shift_JIS", "a\xA0z"), "a" + Fffd(1) + "z");
  EXPECT_EQ(ConvertAll("EUC-KR", "\xC7\xD1\xFF!"), "\xED\x95\x9C" + Fffd(1) + "!");
  // Undefined in glibc's windows-1252 (WHATWG maps it to a C1 control): still a separator.
  EXPECT_EQ(ConvertAll("windows-1252", "a\x81z"), "a" + Fffd(1) + "z");
  // A lone UTF-16 surrogate is one U+FFFD, and the text after it stays aligned.
  EXPECT_EQ(ConvertAll("UTF-16LE",
                       "a\0\x00\xDC"
                       "b\0"sv),
            "a" + Fffd(1) + "b");
  EXPECT_EQ(ConvertAll("UTF-16BE", "\xD8\x3D\0b"sv), Fffd(1) + "b");
}

// A page sniffed as UTF-8 keeps its valid UTF-8, and reads each byte of an invalid sequence as
// windows-1252 (the undeclared default) instead of U+FFFD.
TEST(Utf8ConverterTest, SniffedUtf8ReadsInvalidBytesAsWindows1252) {
  const CharsetDecision sniffed{"UTF-8", CharsetSource::kSniffUtf8, 0};
  auto convert = [&](std::string_view bytes, size_t piece) {
    StatusOr<std::unique_ptr<Utf8Converter>> c = Utf8Converter::CreateFor(sniffed);
    EXPECT_TRUE(c.ok());
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += piece) (*c)->Convert(bytes.substr(i, piece), &out);
    (*c)->Finish(&out);
    return out;
  };
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"caf\xE9 na\xEFve", "caf\xC3\xA9 na\xC3\xAFve"},         // Latin-1 letters
      {"\x80\x9F\x81", "\xE2\x82\xAC\xC5\xB8\xC2\x81"},       // 0x80..0x9F by the WHATWG index
      {"\xE2\x82\xAC", "\xE2\x82\xAC"},                         // valid UTF-8 stays
      {"\xE9\x80z", "\xC3\xA9\xE2\x82\xACz"},                   // a cut sequence: each byte
      {"ab\xC3", "ab\xC3\x83"},                                  // cut at the very end: Finish
      {"\xFF", "\xC3\xBF"},
  };
  for (const auto& [in, want] : cases) {
    for (size_t piece : {size_t{1}, size_t{2}, size_t{64}}) {
      EXPECT_EQ(convert(in, piece), want) << piece;
    }
  }
  // Declared UTF-8 still replaces.
  StatusOr<std::unique_ptr<Utf8Converter>> declared =
      Utf8Converter::CreateFor({"UTF-8", CharsetSource::kHeader, 0});
  ASSERT_TRUE(declared.ok());
  std::string out;
  (*declared)->Convert("caf\xE9", &out);
  (*declared)->Finish(&out);
  EXPECT_EQ(out, "caf" + Fffd(1));
}

TEST(Utf8ConverterTest, IncompleteTailIsOneReplacementAtFinish) {
  EXPECT_EQ(ConvertAll("Shift_JIS", "ab\x93"), "ab" + Fffd(1));
  EXPECT_EQ(ConvertAll("gb18030", "ab\x82\x36"), "ab" + Fffd(1));
  EXPECT_EQ(ConvertAll("UTF-16LE", "a\0b"sv), "a" + Fffd(1));
}

TEST(Utf8ConverterTest, UserDefined) {
  EXPECT_EQ(ConvertAll("x-user-defined", "a\x80\xFF"), "a\xEF\x9E\x80\xEF\x9F\xBF");
}

TEST(Utf8ConverterTest, ReusableAfterFinish) {
  for (std::string_view name : {"UTF-8"sv, "Shift_JIS"sv, "ISO-2022-JP"sv}) {
    StatusOr<std::unique_ptr<Utf8Converter>> c = Utf8Converter::Create(name);
    ASSERT_TRUE(c.ok());
    std::string out;
    (*c)->Convert("x\xE6\x97", &out);  // leaves a cut sequence (or an invalid one)
    (*c)->Finish(&out);
    out.clear();
    (*c)->Convert("plain", &out);
    (*c)->Finish(&out);
    EXPECT_EQ(out, "plain") << name;
  }
}

struct SplitCase {
  std::string_view charset;
  std::string_view bytes;
  std::string_view utf8;
};

// Every way of cutting the input in two, and in three, gives the same output as one piece.
TEST(Utf8ConverterTest, SplitsDoNotChangeTheOutput) {
  const SplitCase cases[] = {
      {"Shift_JIS",
       "\x41\x62\x20\x93\xFA\x96\x7B\x8C\xEA\x83\x65\x83\x4C\x83\x58\x83\x67\x20\x7A"sv,
       "Ab 日本語テキスト z"},
      {"EUC-JP", "\x41\x62\x20\xC6\xFC\xCB\xDC\xB8\xEC\xA5\xC6\xA5\xAD\xA5\xB9\xA5\xC8\x20\x7A"sv,
       "Ab 日本語テキスト z"},
      {"ISO-2022-JP",
       "\x41\x62\x20\x1B\x24\x42\x46\x7C\x4B\x5C\x38\x6C\x25\x46\x25\x2D\x25\x39\x25\x48\x1B\x28\x42\x20\x7A"sv,
       "Ab 日本語テキスト z"},
      {"GBK", "\x41\x62\x20\xD6\xD0\xCE\xC4\xCE\xC4\xB1\xBE\x20\x7A"sv, "Ab 中文文本 z"},
      {"gb18030", "\x41\x62\x20\xD6\xD0\xCE\xC4\xA2\xE3\x95\x32\x82\x36\x20\x7A"sv, "Ab 中文€𠀀 z"},
      {"Big5", "\x41\x62\x20\xC1\x63\xC5\xE9\xA4\xA4\xA4\xE5\x20\x7A"sv, "Ab 繁體中文 z"},
      {"EUC-KR", "\x41\x62\x20\xC7\xD1\xB1\xB9\xBE\xEE\x20\xC5\xD8\xBD\xBA\xC6\xAE\x20\x7A"sv,
       "Ab 한국어 텍스트 z"},
      {"UTF-16LE",
       "\x41\x00\x62\x00\x20\x00\xE5\x65\x2C\x67\x9E\x8A\x20\x00\x3D\xD8\x00\xDE\x20\x00\x7A\x00"sv,
       "Ab 日本語 😀 z"},
      {"UTF-16BE",
       "\x00\x41\x00\x62\x00\x20\x65\xE5\x67\x2C\x8A\x9E\x00\x20\xD8\x3D\xDE\x00\x00\x20\x00\x7A"sv,
       "Ab 日本語 😀 z"},
      {"UTF-8",
       "\x41\x62\x20\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\x20\xF0\x9F\x98\x80\x20\xC3\xA9\x20\x7A"sv,
       "Ab 日本語 😀 é z"},
      {"windows-1252", "\x41\x62\x20\x63\x61\x66\xE9\x20\x80\x20\x7A"sv, "Ab café € z"},
      {"KOI8-R", "\x41\x62\x20\xF0\xD2\xC9\xD7\xC5\xD4\x20\x7A"sv, "Ab Привет z"},
      {"windows-1251", "\x41\x62\x20\xCF\xF0\xE8\xE2\xE5\xF2\x20\x7A"sv, "Ab Привет z"},
      {"ISO-8859-7", "\x41\x62\x20\xC5\xEB\xEB\xE7\xED\xE9\xEA\xDC\x20\x7A"sv, "Ab Ελληνικά z"},
      // Invalid input must split the same way too.
      {"UTF-8", "a\xE2\x82\xE2\x82\xAC\xF0\x9F\xC0z"sv,
       "a\xEF\xBF\xBD\xE2\x82\xAC\xEF\xBF\xBD\xEF\xBF\xBDz"},
      {"Shift_JIS", "\x93 A\xA0\x93"sv, "\xEF\xBF\xBD A\xEF\xBF\xBD\xEF\xBF\xBD"},
  };
  for (const SplitCase& c : cases) {
    SCOPED_TRACE(c.charset);
    ASSERT_EQ(ConvertAll(c.charset, c.bytes), c.utf8);
    StatusOr<std::unique_ptr<Utf8Converter>> conv = Utf8Converter::Create(c.charset);
    ASSERT_TRUE(conv.ok());
    for (size_t i = 0; i <= c.bytes.size(); ++i) {
      for (size_t j = i; j <= c.bytes.size(); ++j) {
        std::string out;
        (*conv)->Convert(c.bytes.substr(0, i), &out);
        (*conv)->Convert(c.bytes.substr(i, j - i), &out);
        (*conv)->Convert(c.bytes.substr(j), &out);
        (*conv)->Finish(&out);
        ASSERT_EQ(out, c.utf8) << "cut at " << i << " and " << j;
      }
    }
    // And one byte at a time.
    std::string out;
    for (char b : c.bytes) (*conv)->Convert(std::string_view(&b, 1), &out);
    (*conv)->Finish(&out);
    EXPECT_EQ(out, c.utf8);
  }
}

TEST(Utf8ConverterTest, LargeInputAndManyErrorsTerminate) {
  // Every byte invalid: one U+FFFD each, no loop, no loss.
  const std::string junk(100000, '\xFF');
  EXPECT_EQ(ConvertAll("Shift_JIS", junk).size(), junk.size() * kFffd.size());
  EXPECT_EQ(ConvertAll("UTF-8", junk).size(), junk.size() * kFffd.size());
  // Output much larger than iconv's internal buffer.
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "\x93\xFA";  // 日 in Shift_JIS
  std::string want;
  for (int i = 0; i < 20000; ++i) want += "日";
  EXPECT_EQ(ConvertAll("Shift_JIS", text), want);
}

}  // namespace
}  // namespace shingled::dedup
