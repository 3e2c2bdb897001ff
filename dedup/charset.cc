// Charset detection and conversion to UTF-8 (see dedup/charset.h).
//
// Labels follow the WHATWG Encoding Standard (https://encoding.spec.whatwg.org/#names-and-labels);
// the meta prescan follows the HTML standard, "prescan a byte stream to determine its encoding".
// UTF-8 and x-user-defined are decoded here; every other encoding goes through glibc iconv.
#include "dedup/charset.h"

#include <iconv.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace shingled::dedup {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// ---------------------------------------------------------------------------------------------
// ASCII helpers. Deliberately locale-free: <cctype> depends on the C locale and takes int.

constexpr bool IsAsciiWhitespace(char c) {
  // HTML's and WHATWG's "ASCII whitespace": TAB, LF, FF, CR, SPACE.
  return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' ';
}
constexpr bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

std::string AsciiLowerString(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

std::string_view TrimAsciiWhitespace(std::string_view s) {
  while (!s.empty() && IsAsciiWhitespace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiWhitespace(s.back())) s.remove_suffix(1);
  return s;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (AsciiLower(s[i]) != prefix[i]) return false;
  }
  return true;
}

// RFC 9110 "tchar": the characters of a token (media type, subtype, parameter name).
constexpr bool IsHttpTokenChar(char c) {
  if (IsAsciiAlpha(c) || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsHttpToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsHttpTokenChar);
}

// ---------------------------------------------------------------------------------------------
// The encodings we know: canonical (WHATWG) name, glibc iconv name, and the size of the unit
// skipped after an invalid sequence.

struct EncodingInfo {
  std::string_view name;   // canonical, as ResolveCharsetLabel returns it
  const char* iconv_name;  // nullptr: decoded here, not by iconv
  size_t unit;             // bytes to skip after EILSEQ: 2 keeps UTF-16 aligned
};

// glibc names were checked with `iconv -l`. Where WHATWG's decoder is a superset of the
// encoding its name suggests, the superset's glibc converter is used, as browsers decode:
//   GBK         -> GB18030     (WHATWG: "GBK's decoder is gb18030's decoder")
//   Big5        -> BIG5-HKSCS  (WHATWG Big5 includes the HKSCS extensions)
//   Shift_JIS   -> CP932       (WHATWG Shift_JIS is windows-31j; glibc's SJIS maps 0x5C to YEN)
//   EUC-KR      -> CP949       (WHATWG EUC-KR is windows-949 / UHC)
//   KOI8-U      -> KOI8-RU     (WHATWG KOI8-U also has the Belarusian letters of KOI8-RU)
//   ISO-8859-8-I-> ISO-8859-8  (the same bytes; only the display direction differs)
// Known differences that remain: glibc's windows-125x reject the few undefined bytes that
// WHATWG maps to C1 controls, and GB18030 rejects 0x80 (WHATWG: U+20AC); both give U+FFFD,
// which separates tokens just as the C1 control would.
constexpr EncodingInfo kEncodings[] = {
    {"UTF-8", nullptr, 1},
    {"IBM866", "IBM866", 1},
    {"ISO-8859-2", "ISO-8859-2", 1},
    {"ISO-8859-3", "ISO-8859-3", 1},
    {"ISO-8859-4", "ISO-8859-4", 1},
    {"ISO-8859-5", "ISO-8859-5", 1},
    {"ISO-8859-6", "ISO-8859-6", 1},
    {"ISO-8859-7", "ISO-8859-7", 1},
    {"ISO-8859-8", "ISO-8859-8", 1},
    {"ISO-8859-8-I", "ISO-8859-8", 1},
    {"ISO-8859-10", "ISO-8859-10", 1},
    {"ISO-8859-13", "ISO-8859-13", 1},
    {"ISO-8859-14", "ISO-8859-14", 1},
    {"ISO-8859-15", "ISO-8859-15", 1},
    {"ISO-8859-16", "ISO-8859-16", 1},
    {"KOI8-R", "KOI8-R", 1},
    {"KOI8-U", "KOI8-RU", 1},
    {"macintosh", "MACINTOSH", 1},
    {"windows-874", "WINDOWS-874", 1},
    {"windows-1250", "WINDOWS-1250", 1},
    {"windows-1251", "WINDOWS-1251", 1},
    {"windows-1252", "WINDOWS-1252", 1},
    {"windows-1253", "WINDOWS-1253", 1},
    {"windows-1254", "WINDOWS-1254", 1},
    {"windows-1255", "WINDOWS-1255", 1},
    {"windows-1256", "WINDOWS-1256", 1},
    {"windows-1257", "WINDOWS-1257", 1},
    {"windows-1258", "WINDOWS-1258", 1},
    {"x-mac-cyrillic", "MAC-CYRILLIC", 1},
    {"GBK", "GB18030", 1},
    {"gb18030", "GB18030", 1},
    {"Big5", "BIG5-HKSCS", 1},
    {"EUC-JP", "EUC-JP", 1},
    {"ISO-2022-JP", "ISO-2022-JP", 1},
    {"Shift_JIS", "CP932", 1},
    {"EUC-KR", "CP949", 1},
    {"UTF-16BE", "UTF-16BE", 2},
    {"UTF-16LE", "UTF-16LE", 2},
    {"x-user-defined", nullptr, 1},
};

const EncodingInfo* FindEncoding(std::string_view canonical_name) {
  if (canonical_name.empty()) return nullptr;
  for (const EncodingInfo& e : kEncodings) {
    if (e.name == canonical_name) return &e;
  }
  return nullptr;
}

// WHATWG label table, lower case. The "replacement" encoding's labels (iso-2022-kr, iso-2022-cn,
// hz-gb-2312, ...) are left out on purpose: we have no decoder for them, and an unknown label is
// ignored, so such a page falls through to the UTF-8 sniff or windows-1252.
struct LabelEntry {
  std::string_view label;
  std::string_view name;
};
constexpr LabelEntry kLabels[] = {
    {"unicode-1-1-utf-8", "UTF-8"},
    {"unicode11utf8", "UTF-8"},
    {"unicode20utf8", "UTF-8"},
    {"utf-8", "UTF-8"},
    {"utf8", "UTF-8"},
    {"x-unicode20utf8", "UTF-8"},
    {"866", "IBM866"},
    {"cp866", "IBM866"},
    {"csibm866", "IBM866"},
    {"ibm866", "IBM866"},
    {"csisolatin2", "ISO-8859-2"},
    {"iso-8859-2", "ISO-8859-2"},
    {"iso-ir-101", "ISO-8859-2"},
    {"iso8859-2", "ISO-8859-2"},
    {"iso88592", "ISO-8859-2"},
    {"iso_8859-2", "ISO-8859-2"},
    {"iso_8859-2:1987", "ISO-8859-2"},
    {"l2", "ISO-8859-2"},
    {"latin2", "ISO-8859-2"},
    {"csisolatin3", "ISO-8859-3"},
    {"iso-8859-3", "ISO-8859-3"},
    {"iso-ir-109", "ISO-8859-3"},
    {"iso8859-3", "ISO-8859-3"},
    {"iso88593", "ISO-8859-3"},
    {"iso_8859-3", "ISO-8859-3"},
    {"iso_8859-3:1988", "ISO-8859-3"},
    {"l3", "ISO-8859-3"},
    {"latin3", "ISO-8859-3"},
    {"csisolatin4", "ISO-8859-4"},
    {"iso-8859-4", "ISO-8859-4"},
    {"iso-ir-110", "ISO-8859-4"},
    {"iso8859-4", "ISO-8859-4"},
    {"iso88594", "ISO-8859-4"},
    {"iso_8859-4", "ISO-8859-4"},
    {"iso_8859-4:1988", "ISO-8859-4"},
    {"l4", "ISO-8859-4"},
    {"latin4", "ISO-8859-4"},
    {"csisolatincyrillic", "ISO-8859-5"},
    {"cyrillic", "ISO-8859-5"},
    {"iso-8859-5", "ISO-8859-5"},
    {"iso-ir-144", "ISO-8859-5"},
    {"iso8859-5", "ISO-8859-5"},
    {"iso88595", "ISO-8859-5"},
    {"iso_8859-5", "ISO-8859-5"},
    {"iso_8859-5:1988", "ISO-8859-5"},
    {"arabic", "ISO-8859-6"},
    {"asmo-708", "ISO-8859-6"},
    {"csiso88596e", "ISO-8859-6"},
    {"csiso88596i", "ISO-8859-6"},
    {"csisolatinarabic", "ISO-8859-6"},
    {"ecma-114", "ISO-8859-6"},
    {"iso-8859-6", "ISO-8859-6"},
    {"iso-8859-6-e", "ISO-8859-6"},
    {"iso-8859-6-i", "ISO-8859-6"},
    {"iso-ir-127", "ISO-8859-6"},
    {"iso8859-6", "ISO-8859-6"},
    {"iso88596", "ISO-8859-6"},
    {"iso_8859-6", "ISO-8859-6"},
    {"iso_8859-6:1987", "ISO-8859-6"},
    {"csisolatingreek", "ISO-8859-7"},
    {"ecma-118", "ISO-8859-7"},
    {"elot_928", "ISO-8859-7"},
    {"greek", "ISO-8859-7"},
    {"greek8", "ISO-8859-7"},
    {"iso-8859-7", "ISO-8859-7"},
    {"iso-ir-126", "ISO-8859-7"},
    {"iso8859-7", "ISO-8859-7"},
    {"iso88597", "ISO-8859-7"},
    {"iso_8859-7", "ISO-8859-7"},
    {"iso_8859-7:1987", "ISO-8859-7"},
    {"sun_eu_greek", "ISO-8859-7"},
    {"csiso88598e", "ISO-8859-8"},
    {"csisolatinhebrew", "ISO-8859-8"},
    {"hebrew", "ISO-8859-8"},
    {"iso-8859-8", "ISO-8859-8"},
    {"iso-8859-8-e", "ISO-8859-8"},
    {"iso-ir-138", "ISO-8859-8"},
    {"iso8859-8", "ISO-8859-8"},
    {"iso88598", "ISO-8859-8"},
    {"iso_8859-8", "ISO-8859-8"},
    {"iso_8859-8:1988", "ISO-8859-8"},
    {"visual", "ISO-8859-8"},
    {"csiso88598i", "ISO-8859-8-I"},
    {"iso-8859-8-i", "ISO-8859-8-I"},
    {"logical", "ISO-8859-8-I"},
    {"csisolatin6", "ISO-8859-10"},
    {"iso-8859-10", "ISO-8859-10"},
    {"iso-ir-157", "ISO-8859-10"},
    {"iso8859-10", "ISO-8859-10"},
    {"iso885910", "ISO-8859-10"},
    {"l6", "ISO-8859-10"},
    {"latin6", "ISO-8859-10"},
    {"iso-8859-13", "ISO-8859-13"},
    {"iso8859-13", "ISO-8859-13"},
    {"iso885913", "ISO-8859-13"},
    {"iso-8859-14", "ISO-8859-14"},
    {"iso8859-14", "ISO-8859-14"},
    {"iso885914", "ISO-8859-14"},
    {"csisolatin9", "ISO-8859-15"},
    {"iso-8859-15", "ISO-8859-15"},
    {"iso8859-15", "ISO-8859-15"},
    {"iso885915", "ISO-8859-15"},
    {"iso_8859-15", "ISO-8859-15"},
    {"l9", "ISO-8859-15"},
    {"iso-8859-16", "ISO-8859-16"},
    {"cskoi8r", "KOI8-R"},
    {"koi", "KOI8-R"},
    {"koi8", "KOI8-R"},
    {"koi8-r", "KOI8-R"},
    {"koi8_r", "KOI8-R"},
    {"koi8-ru", "KOI8-U"},
    {"koi8-u", "KOI8-U"},
    {"csmacintosh", "macintosh"},
    {"mac", "macintosh"},
    {"macintosh", "macintosh"},
    {"x-mac-roman", "macintosh"},
    {"dos-874", "windows-874"},
    {"iso-8859-11", "windows-874"},
    {"iso8859-11", "windows-874"},
    {"iso885911", "windows-874"},
    {"tis-620", "windows-874"},
    {"windows-874", "windows-874"},
    {"cp1250", "windows-1250"},
    {"windows-1250", "windows-1250"},
    {"x-cp1250", "windows-1250"},
    {"cp1251", "windows-1251"},
    {"windows-1251", "windows-1251"},
    {"x-cp1251", "windows-1251"},
    // WHATWG: ASCII and Latin-1 labels mean windows-1252, a superset that pages labelled so use.
    {"ansi_x3.4-1968", "windows-1252"},
    {"ascii", "windows-1252"},
    {"cp1252", "windows-1252"},
    {"cp819", "windows-1252"},
    {"csisolatin1", "windows-1252"},
    {"ibm819", "windows-1252"},
    {"iso-8859-1", "windows-1252"},
    {"iso-ir-100", "windows-1252"},
    {"iso8859-1", "windows-1252"},
    {"iso88591", "windows-1252"},
    {"iso_8859-1", "windows-1252"},
    {"iso_8859-1:1987", "windows-1252"},
    {"l1", "windows-1252"},
    {"latin1", "windows-1252"},
    {"us-ascii", "windows-1252"},
    {"windows-1252", "windows-1252"},
    {"x-cp1252", "windows-1252"},
    {"cp1253", "windows-1253"},
    {"windows-1253", "windows-1253"},
    {"x-cp1253", "windows-1253"},
    {"cp1254", "windows-1254"},
    {"csisolatin5", "windows-1254"},
    {"iso-8859-9", "windows-1254"},
    {"iso-ir-148", "windows-1254"},
    {"iso8859-9", "windows-1254"},
    {"iso88599", "windows-1254"},
    {"iso_8859-9", "windows-1254"},
    {"iso_8859-9:1989", "windows-1254"},
    {"l5", "windows-1254"},
    {"latin5", "windows-1254"},
    {"windows-1254", "windows-1254"},
    {"x-cp1254", "windows-1254"},
    {"cp1255", "windows-1255"},
    {"windows-1255", "windows-1255"},
    {"x-cp1255", "windows-1255"},
    {"cp1256", "windows-1256"},
    {"windows-1256", "windows-1256"},
    {"x-cp1256", "windows-1256"},
    {"cp1257", "windows-1257"},
    {"windows-1257", "windows-1257"},
    {"x-cp1257", "windows-1257"},
    {"cp1258", "windows-1258"},
    {"windows-1258", "windows-1258"},
    {"x-cp1258", "windows-1258"},
    {"x-mac-cyrillic", "x-mac-cyrillic"},
    {"x-mac-ukrainian", "x-mac-cyrillic"},
    {"chinese", "GBK"},
    {"csgb2312", "GBK"},
    {"csiso58gb231280", "GBK"},
    {"gb2312", "GBK"},
    {"gb_2312", "GBK"},
    {"gb_2312-80", "GBK"},
    {"gbk", "GBK"},
    {"iso-ir-58", "GBK"},
    {"x-gbk", "GBK"},
    {"gb18030", "gb18030"},
    {"big5", "Big5"},
    {"big5-hkscs", "Big5"},
    {"cn-big5", "Big5"},
    {"csbig5", "Big5"},
    {"x-x-big5", "Big5"},
    {"cseucpkdfmtjapanese", "EUC-JP"},
    {"euc-jp", "EUC-JP"},
    {"x-euc-jp", "EUC-JP"},
    {"csiso2022jp", "ISO-2022-JP"},
    {"iso-2022-jp", "ISO-2022-JP"},
    {"csshiftjis", "Shift_JIS"},
    {"ms932", "Shift_JIS"},
    {"ms_kanji", "Shift_JIS"},
    {"shift-jis", "Shift_JIS"},
    {"shift_jis", "Shift_JIS"},
    {"sjis", "Shift_JIS"},
    {"windows-31j", "Shift_JIS"},
    {"x-sjis", "Shift_JIS"},
    {"cseuckr", "EUC-KR"},
    {"csksc56011987", "EUC-KR"},
    {"euc-kr", "EUC-KR"},
    {"iso-ir-149", "EUC-KR"},
    {"korean", "EUC-KR"},
    {"ks_c_5601-1987", "EUC-KR"},
    {"ks_c_5601-1989", "EUC-KR"},
    {"ksc5601", "EUC-KR"},
    {"ksc_5601", "EUC-KR"},
    {"windows-949", "EUC-KR"},
    {"unicodefffe", "UTF-16BE"},
    {"utf-16be", "UTF-16BE"},
    {"csunicode", "UTF-16LE"},
    {"iso-10646-ucs-2", "UTF-16LE"},
    {"ucs-2", "UTF-16LE"},
    {"unicode", "UTF-16LE"},
    {"unicodefeff", "UTF-16LE"},
    {"utf-16", "UTF-16LE"},
    {"utf-16le", "UTF-16LE"},
    {"x-user-defined", "x-user-defined"},
};

// ---------------------------------------------------------------------------------------------
// UTF-8 validation, per the WHATWG UTF-8 decoder: one U+FFFD per maximal subpart of an invalid
// sequence (the same count as the Unicode standard's "best practice" and the Tokenizer).

class Utf8Decoder {
 public:
  enum class Result { kNeedMore, kCodePoint, kError, kErrorReprocess };

  // Feeds one byte. kCodePoint: a code point ended with this byte. kError: this byte is invalid.
  // kErrorReprocess: the sequence before this byte is invalid and the byte starts afresh.
  Result Step(uint8_t b) {
    if (needed_ == 0) {
      if (b < 0x80) return Result::kCodePoint;
      if (b >= 0xC2 && b <= 0xDF) {
        needed_ = 1;
      } else if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0) lower_ = 0xA0;  // overlong
        if (b == 0xED) upper_ = 0x9F;  // surrogates
        needed_ = 2;
      } else if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0) lower_ = 0x90;  // overlong
        if (b == 0xF4) upper_ = 0x8F;  // above U+10FFFF
        needed_ = 3;
      } else {
        return Result::kError;
      }
      return Result::kNeedMore;
    }
    if (b < lower_ || b > upper_) {
      Reset();
      return Result::kErrorReprocess;
    }
    lower_ = 0x80;
    upper_ = 0xBF;
    if (++seen_ < needed_) return Result::kNeedMore;
    Reset();
    return Result::kCodePoint;
  }

  bool in_sequence() const { return needed_ != 0; }
  void Reset() {
    needed_ = seen_ = 0;
    lower_ = 0x80;
    upper_ = 0xBF;
  }

 private:
  int needed_ = 0;
  int seen_ = 0;
  uint8_t lower_ = 0x80;
  uint8_t upper_ = 0xBF;
};

// True when `bytes` are valid UTF-8, except that a sequence cut at the very end counts as valid:
// the end of a sniff window may fall inside a character.
bool IsUtf8AllowingCutEnd(std::string_view bytes) {
  Utf8Decoder decoder;
  for (char c : bytes) {
    Utf8Decoder::Result r = decoder.Step(static_cast<uint8_t>(c));
    if (r == Utf8Decoder::Result::kError || r == Utf8Decoder::Result::kErrorReprocess) {
      return false;
    }
  }
  return true;
}

// WHATWG index-windows-1252 for 0x80..0x9F (0xA0..0xFF map to U+00A0..U+00FF).
constexpr uint16_t kWindows1252High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

// Appends the UTF-8 of byte `b` (>= 0x80) read as windows-1252.
void AppendWindows1252(uint8_t b, std::string* out) {
  const uint32_t cp = b < 0xA0 ? kWindows1252High[b - 0x80] : b;
  if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
  }
  out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
}

// UTF-8 to UTF-8: valid sequences are copied. Invalid ones become U+FFFD, or, with
// `windows1252_fallback`, each of their bytes is read as windows-1252 (see
// Utf8Converter::CreateFor).
class Utf8Validator final : public Utf8Converter {
 public:
  explicit Utf8Validator(bool windows1252_fallback = false)
      : windows1252_fallback_(windows1252_fallback) {}

  void Convert(std::string_view bytes, std::string* out) override {
    out->reserve(out->size() + bytes.size() + pending_len_);
    size_t i = 0;
    while (i < bytes.size()) {
      if (!decoder_.in_sequence()) {
        // Fast path: copy a run of ASCII in one go.
        size_t j = i;
        while (j < bytes.size() && static_cast<uint8_t>(bytes[j]) < 0x80) ++j;
        out->append(bytes.substr(i, j - i));
        i = j;
        if (i == bytes.size()) break;
      }
      const char c = bytes[i];
      switch (decoder_.Step(static_cast<uint8_t>(c))) {
        case Utf8Decoder::Result::kNeedMore:
          pending_[pending_len_++] = c;
          ++i;
          break;
        case Utf8Decoder::Result::kCodePoint:
          out->append(pending_, pending_len_);
          out->push_back(c);
          pending_len_ = 0;
          ++i;
          break;
        case Utf8Decoder::Result::kError:  // `c` alone (nothing is pending)
          pending_[pending_len_++] = c;
          FlushInvalid(out);
          ++i;
          break;
        case Utf8Decoder::Result::kErrorReprocess:
          FlushInvalid(out);
          break;  // the same byte again, as the start of a new sequence
      }
    }
  }

  void Finish(std::string* out) override {
    if (decoder_.in_sequence()) FlushInvalid(out);
    decoder_.Reset();
    pending_len_ = 0;
  }

 private:
  // Writes the pending bytes, an invalid sequence, and forgets them.
  void FlushInvalid(std::string* out) {
    if (windows1252_fallback_) {
      for (size_t k = 0; k < pending_len_; ++k) {
        AppendWindows1252(static_cast<uint8_t>(pending_[k]), out);
      }
    } else {
      out->append(kReplacement);
    }
    pending_len_ = 0;
  }

  const bool windows1252_fallback_;
  Utf8Decoder decoder_;
  char pending_[4] = {};  // the bytes of the sequence in progress (at most 3), or an invalid one
  size_t pending_len_ = 0;
};

// WHATWG x-user-defined: ASCII as is, 0x80..0xFF to U+F780..U+F7FF (private use).
class UserDefinedConverter final : public Utf8Converter {
 public:
  void Convert(std::string_view bytes, std::string* out) override {
    for (char c : bytes) {
      const uint8_t b = static_cast<uint8_t>(c);
      if (b < 0x80) {
        out->push_back(c);
      } else {
        const uint32_t cp = 0xF780 + (b - 0x80);  // three UTF-8 bytes: EF 9E/9F xx
        out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    }
  }
  void Finish(std::string* /*out*/) override {}
};

// Everything else: glibc iconv, with our own handling of invalid and cut sequences, because
// iconv stops at the first one and reports it through errno.
class IconvConverter final : public Utf8Converter {
 public:
  IconvConverter(iconv_t cd, size_t unit) : cd_(cd), unit_(unit) {}
  ~IconvConverter() override { iconv_close(cd_); }
  IconvConverter(const IconvConverter&) = delete;
  IconvConverter& operator=(const IconvConverter&) = delete;

  void Convert(std::string_view bytes, std::string* out) override {
    if (pending_.empty()) {
      Run(bytes, out);
      return;
    }
    // Join the held tail with just enough new bytes to finish it, then go on without copying
    // the rest. Characters are at most 4 bytes long (ISO-2022-JP escapes too), so kMaxHeld new
    // bytes always complete the tail, or prove it invalid.
    const size_t held = pending_.size();
    joined_.swap(pending_);
    pending_.clear();
    const size_t take = std::min(bytes.size(), kMaxHeld);
    joined_.append(bytes.substr(0, take));
    const bool more_follows = take < bytes.size();
    const size_t consumed = Run(joined_, out, more_follows);
    joined_.clear();
    if (!more_follows) return;
    // Run stops early only at a cut character of at most kMaxHeld bytes at the end of joined_,
    // which then lies within the `take` new bytes: consumed >= held.
    Run(bytes.substr(consumed - std::min(consumed, held)), out);
  }

  void Finish(std::string* out) override {
    // A held tail is the start of a character that never ended: one U+FFFD for it.
    if (!pending_.empty()) out->append(kReplacement);
    pending_.clear();
    // Let a stateful encoding (ISO-2022-JP) emit what it owes, then return to the initial state.
    char buf[64];
    char* outp = buf;
    size_t outleft = sizeof(buf);
    iconv(cd_, nullptr, nullptr, &outp, &outleft);
    out->append(buf, static_cast<size_t>(outp - buf));
    iconv(cd_, nullptr, nullptr, nullptr, nullptr);
  }

 private:
  // An incomplete character is never longer than this; a longer "incomplete" tail would be a
  // converter bug, and is treated as invalid so that the loop always makes progress.
  static constexpr size_t kMaxHeld = 8;

  // Converts `in` and appends to `*out`. When `more_follows` is false, a cut character at the
  // end is held in pending_ for the next call. Returns how many bytes of `in` were consumed
  // (all of them, unless `more_follows` and the end was cut: then the cut tail is not consumed
  // and not held; the caller feeds it again together with what follows).
  size_t Run(std::string_view in, std::string* out, bool more_follows = false) {
    // iconv takes char** for historical reasons; it does not write through it.
    char* inp = const_cast<char*>(in.data());
    size_t inleft = in.size();
    char buf[16384];
    while (inleft > 0) {
      char* outp = buf;
      size_t outleft = sizeof(buf);
      const size_t rc = iconv(cd_, &inp, &inleft, &outp, &outleft);
      const int err = errno;
      out->append(buf, static_cast<size_t>(outp - buf));
      if (rc != static_cast<size_t>(-1)) break;  // all converted
      if (err == E2BIG) continue;                // output buffer full: go on
      if (err == EINVAL && inleft <= kMaxHeld) {
        if (more_follows) break;  // the caller has the rest of this character
        pending_.assign(inp, inleft);
        inleft = 0;
        break;
      }
      // EILSEQ (or anything unexpected): replace one unit and resume after it.
      out->append(kReplacement);
      const size_t skip = std::min(unit_, inleft);
      inp += skip;
      inleft -= skip;
    }
    return in.size() - inleft;
  }

  iconv_t cd_;
  size_t unit_;
  std::string pending_;  // a character cut at the end of the last chunk
  std::string joined_;   // scratch: pending_ and the first bytes of the next chunk
};

}  // namespace

// -----------------------------------------------------------------------------------------------

ContentType ParseContentType(std::string_view header) {
  // After the WHATWG MIME Sniffing Standard's "parse a MIME type", simplified: the first
  // charset parameter wins, values may be quoted strings with backslash escapes, and a
  // malformed parameter is skipped rather than failing the whole header.
  ContentType result;
  std::string_view rest = TrimAsciiWhitespace(header);
  const size_t semi = rest.find(';');
  const std::string_view essence = TrimAsciiWhitespace(rest.substr(0, semi));
  const size_t slash = essence.find('/');
  if (slash == std::string_view::npos || !IsHttpToken(essence.substr(0, slash)) ||
      !IsHttpToken(essence.substr(slash + 1))) {
    return result;  // garbage: no mime, and no trust in any charset that follows
  }
  result.mime = AsciiLowerString(essence);
  if (semi == std::string_view::npos) return result;
  rest.remove_prefix(semi + 1);

  bool have_charset = false;
  while (!rest.empty()) {
    while (!rest.empty() && IsAsciiWhitespace(rest.front())) rest.remove_prefix(1);
    size_t i = 0;
    while (i < rest.size() && rest[i] != ';' && rest[i] != '=') ++i;
    // Not trimmed: "charset =" is no charset parameter (RFC 9110 allows no space there).
    const std::string name = AsciiLowerString(rest.substr(0, i));
    rest.remove_prefix(i);
    if (rest.empty()) break;
    if (rest.front() == ';') {
      rest.remove_prefix(1);
      continue;  // a parameter without a value
    }
    rest.remove_prefix(1);  // '='
    std::string value;
    if (!rest.empty() && rest.front() == '"') {
      // HTTP quoted string: a backslash escapes the next character; a missing close quote
      // ends the value at the end of the header.
      rest.remove_prefix(1);
      while (!rest.empty() && rest.front() != '"') {
        if (rest.front() == '\\' && rest.size() > 1) rest.remove_prefix(1);
        value.push_back(rest.front());
        rest.remove_prefix(1);
      }
      const size_t next = rest.find(';');
      rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
    } else {
      const size_t next = rest.find(';');
      value = std::string(TrimAsciiWhitespace(rest.substr(0, next)));
      rest = next == std::string_view::npos ? std::string_view() : rest.substr(next + 1);
      if (value.empty()) continue;
    }
    if (name == "charset" && !have_charset) {
      result.charset = std::move(value);
      have_charset = true;
    }
  }
  return result;
}

namespace {

// A view of the first bytes for the HTML check: UTF-16 text (after its BOM) is narrowed to
// ASCII so that "<html>" written in UTF-16 is still recognised. Non-ASCII units become 0xFF.
std::string NarrowHead(std::string_view head, size_t max_chars) {
  if (head.size() >= 2 && (head.substr(0, 2) == "\xFF\xFE" || head.substr(0, 2) == "\xFE\xFF")) {
    std::string out;
    const bool le = head[0] == '\xFF';
    for (size_t i = 2; i + 1 < head.size() && out.size() < max_chars; i += 2) {
      const uint16_t unit = le ? static_cast<uint16_t>(static_cast<uint8_t>(head[i]) |
                                                       static_cast<uint8_t>(head[i + 1]) << 8)
                               : static_cast<uint16_t>(static_cast<uint8_t>(head[i]) << 8 |
                                                       static_cast<uint8_t>(head[i + 1]));
      out.push_back(unit < 0x80 ? static_cast<char>(unit) : '\xFF');
    }
    return out;
  }
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  return std::string(head.substr(0, max_chars));
}

bool LooksLikeHtml(std::string_view text) {
  while (!text.empty() && IsAsciiWhitespace(text.front())) text.remove_prefix(1);
  if (StartsWithIgnoreCase(text, "<!--")) return true;
  // The WHATWG MIME sniffing table's HTML patterns, plus common block tags; each must be
  // followed by a tag-terminating byte so that "<pre" is not "<p" and "<bx" is not "<b".
  static constexpr std::string_view kPrefixes[] = {"<!doctype html",
                                                   "<html",
                                                   "<head",
                                                   "<script",
                                                   "<iframe",
                                                   "<h1",
                                                   "<h2",
                                                   "<h3",
                                                   "<div",
                                                   "<font",
                                                   "<table",
                                                   "<a",
                                                   "<style",
                                                   "<title",
                                                   "<b",
                                                   "<body",
                                                   "<br",
                                                   "<p",
                                                   "<meta",
                                                   "<link",
                                                   "<span",
                                                   "<ul",
                                                   "<ol",
                                                   "<li",
                                                   "<center",
                                                   "<form",
                                                   "<img",
                                                   "<section",
                                                   "<header",
                                                   "<nav",
                                                   "<main",
                                                   "<article",
                                                   "<pre",
                                                   "<!doctype xhtml"};
  for (std::string_view prefix : kPrefixes) {
    if (!StartsWithIgnoreCase(text, prefix)) continue;
    if (text.size() == prefix.size()) return true;
    const char next = text[prefix.size()];
    if (next == '>' || next == ' ' || IsAsciiWhitespace(next) || next == '/') return true;
  }
  return false;
}

}  // namespace

ContentKind DetectContentKind(std::string_view mime, std::string_view head) {
  if (!mime.empty() && mime != "application/octet-stream") {
    if (mime == "text/html" || mime == "application/xhtml+xml") return ContentKind::kHtml;
    if (mime.substr(0, 5) == "text/") return ContentKind::kText;
    return ContentKind::kBinary;
  }
  head = head.substr(0, kSniffBytes);
  const bool utf16 =
      head.size() >= 2 && (head.substr(0, 2) == "\xFF\xFE" || head.substr(0, 2) == "\xFE\xFF");
  const std::string narrow = NarrowHead(head, kSniffBytes);
  // UTF-16 text is full of NUL bytes; look for a NUL character instead.
  if ((utf16 ? std::string_view(narrow) : head).find('\0') != std::string_view::npos) {
    return ContentKind::kBinary;
  }
  return LooksLikeHtml(narrow) ? ContentKind::kHtml : ContentKind::kText;
}

std::string ResolveCharsetLabel(std::string_view label) {
  // Built once; function-local statics are initialized thread-safely.
  static const auto* const kTable = [] {
    auto* table = new std::unordered_map<std::string_view, std::string_view>();
    for (const LabelEntry& e : kLabels) table->emplace(e.label, e.name);
    return table;
  }();
  const std::string key = AsciiLowerString(TrimAsciiWhitespace(label));
  const auto it = kTable->find(key);
  return it == kTable->end() ? std::string() : std::string(it->second);
}

std::string_view CharsetSourceName(CharsetSource source) {
  switch (source) {
    case CharsetSource::kBom:
      return "bom";
    case CharsetSource::kHeader:
      return "header";
    case CharsetSource::kMeta:
      return "meta";
    case CharsetSource::kSniffUtf8:
      return "sniff_utf8";
    case CharsetSource::kDefault:
      return "default";
  }
  return "unknown";
}

CharsetDecision DetectCharset(std::string_view header_charset, std::string_view head,
                              bool is_html) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") return {"UTF-8", CharsetSource::kBom, 3};
  if (head.substr(0, 2) == "\xFE\xFF") return {"UTF-16BE", CharsetSource::kBom, 2};
  if (head.substr(0, 2) == "\xFF\xFE") return {"UTF-16LE", CharsetSource::kBom, 2};
  if (std::string name = ResolveCharsetLabel(header_charset); !name.empty()) {
    return {std::move(name), CharsetSource::kHeader, 0};
  }
  if (is_html) {
    if (std::string name = PrescanMetaCharset(head); !name.empty()) {
      return {std::move(name), CharsetSource::kMeta, 0};
    }
  }
  if (IsUtf8AllowingCutEnd(head.substr(0, kSniffBytes))) {
    return {"UTF-8", CharsetSource::kSniffUtf8, 0};
  }
  return {"windows-1252", CharsetSource::kDefault, 0};
}

// -----------------------------------------------------------------------------------------------
// The HTML standard's prescan (https://html.spec.whatwg.org/multipage/parsing.html, "prescan a
// byte stream to determine its encoding"). Running off the end of the window inside a tag ends
// the prescan without an answer, since a cut value ("utf" of "utf-8") must not be trusted.

namespace {

class Prescanner {
 public:
  explicit Prescanner(std::string_view bytes) : s_(bytes) {}

  std::string Run() {
    while (pos_ < s_.size()) {
      if (Match("<!--")) {
        // The end is the first '>' preceded by "--"; the dashes of "<!--" count, so "<!-->"
        // is a whole comment.
        const size_t end = s_.find("-->", pos_ + 2);
        if (end == std::string_view::npos) return {};
        pos_ = end + 3;
        continue;
      }
      if (MatchIgnoreCase("<meta") && pos_ + 5 < s_.size() &&
          (IsAsciiWhitespace(s_[pos_ + 5]) || s_[pos_ + 5] == '/')) {
        pos_ += 5;
        std::optional<std::string> result = ProcessMeta();
        if (!result.has_value()) return {};  // ran off the end
        if (!result->empty()) return *result;
        ++pos_;
        continue;
      }
      if (s_[pos_] == '<' && pos_ + 1 < s_.size() &&
          (IsAsciiAlpha(s_[pos_ + 1]) ||
           (s_[pos_ + 1] == '/' && pos_ + 2 < s_.size() && IsAsciiAlpha(s_[pos_ + 2])))) {
        // Another tag: skip its name, then its attributes, so that a '>' or "<meta" inside an
        // attribute value is not taken for markup.
        while (pos_ < s_.size() && !IsAsciiWhitespace(s_[pos_]) && s_[pos_] != '>') ++pos_;
        for (;;) {
          std::optional<Attribute> attr;
          if (!GetAttribute(&attr)) return {};
          if (!attr.has_value()) break;
        }
        ++pos_;
        continue;
      }
      if (Match("<!") || Match("</") || Match("<?")) {
        const size_t end = s_.find('>', pos_ + 2);
        if (end == std::string_view::npos) return {};
        pos_ = end + 1;
        continue;
      }
      ++pos_;
    }
    return {};
  }

 private:
  struct Attribute {
    std::string name;
    std::string value;
  };

  bool Match(std::string_view lit) const { return s_.substr(pos_, lit.size()) == lit; }
  bool MatchIgnoreCase(std::string_view lit) const {
    return StartsWithIgnoreCase(s_.substr(pos_), lit);
  }
  bool AtEnd() const { return pos_ >= s_.size(); }

  // Returns the canonical encoding, "" when this meta declares none, nullopt at the end of input.
  std::optional<std::string> ProcessMeta() {
    std::vector<std::string> names;
    bool got_pragma = false;
    std::optional<bool> need_pragma;
    std::optional<std::string> charset;  // "" stands for the standard's "failure"
    for (;;) {
      std::optional<Attribute> attr;
      if (!GetAttribute(&attr)) return std::nullopt;
      if (!attr.has_value()) break;
      if (std::find(names.begin(), names.end(), attr->name) != names.end()) continue;
      names.push_back(attr->name);
      if (attr->name == "http-equiv") {
        if (attr->value == "content-type") got_pragma = true;
      } else if (attr->name == "content") {
        std::string found = ExtractCharsetFromContent(attr->value);
        if (!found.empty() && !charset.has_value()) {
          charset = std::move(found);
          need_pragma = true;
        }
      } else if (attr->name == "charset") {
        charset = ResolveCharsetLabel(attr->value);
        need_pragma = false;
      }
    }
    if (!need_pragma.has_value()) return std::string();
    if (*need_pragma && !got_pragma) return std::string();
    if (!charset.has_value() || charset->empty()) return std::string();
    if (*charset == "UTF-16LE" || *charset == "UTF-16BE") return std::string("UTF-8");
    if (*charset == "x-user-defined") return std::string("windows-1252");
    return *charset;
  }

  // "Get an attribute". Returns false when the input ends inside the attribute; otherwise sets
  // *attr (nullopt when there are no more attributes, with pos_ at the '>').
  bool GetAttribute(std::optional<Attribute>* attr) {
    attr->reset();
    while (!AtEnd() && (IsAsciiWhitespace(s_[pos_]) || s_[pos_] == '/')) ++pos_;
    if (AtEnd()) return false;
    if (s_[pos_] == '>') return true;
    Attribute a;
    // Name.
    for (;;) {
      if (AtEnd()) return false;
      const char c = s_[pos_];
      if (c == '=' && !a.name.empty()) {
        ++pos_;
        return GetValue(std::move(a), attr);
      }
      if (IsAsciiWhitespace(c)) break;
      if (c == '/' || c == '>') {
        *attr = std::move(a);
        return true;
      }
      a.name.push_back(AsciiLower(c));
      ++pos_;
    }
    // Spaces, then maybe '='.
    while (!AtEnd() && IsAsciiWhitespace(s_[pos_])) ++pos_;
    if (AtEnd()) return false;
    if (s_[pos_] != '=') {
      *attr = std::move(a);
      return true;
    }
    ++pos_;
    return GetValue(std::move(a), attr);
  }

  bool GetValue(Attribute a, std::optional<Attribute>* attr) {
    while (!AtEnd() && IsAsciiWhitespace(s_[pos_])) ++pos_;
    if (AtEnd()) return false;
    const char first = s_[pos_];
    if (first == '"' || first == '\'') {
      ++pos_;
      for (;;) {
        if (AtEnd()) return false;
        if (s_[pos_] == first) {
          ++pos_;
          *attr = std::move(a);
          return true;
        }
        a.value.push_back(AsciiLower(s_[pos_++]));
      }
    }
    if (first == '>') {
      *attr = std::move(a);
      return true;
    }
    for (;;) {
      if (AtEnd()) return false;
      const char c = s_[pos_];
      if (IsAsciiWhitespace(c) || c == '>') {
        *attr = std::move(a);
        return true;
      }
      a.value.push_back(AsciiLower(c));
      ++pos_;
    }
  }

  // "Extracting a character encoding from a meta element": charset=... inside content=.
  static std::string ExtractCharsetFromContent(std::string_view s) {
    size_t pos = 0;
    for (;;) {
      size_t found = std::string_view::npos;
      for (size_t i = pos; i + 7 <= s.size(); ++i) {
        if (StartsWithIgnoreCase(s.substr(i), "charset")) {
          found = i;
          break;
        }
      }
      if (found == std::string_view::npos) return {};
      pos = found + 7;
      size_t i = pos;
      while (i < s.size() && IsAsciiWhitespace(s[i])) ++i;
      if (i >= s.size() || s[i] != '=') continue;  // loop from just after "charset"
      ++i;
      while (i < s.size() && IsAsciiWhitespace(s[i])) ++i;
      if (i >= s.size()) return {};
      if (s[i] == '"' || s[i] == '\'') {
        const size_t close = s.find(s[i], i + 1);
        if (close == std::string_view::npos) return {};
        return ResolveCharsetLabel(s.substr(i + 1, close - i - 1));
      }
      size_t end = i;
      while (end < s.size() && !IsAsciiWhitespace(s[end]) && s[end] != ';') ++end;
      return ResolveCharsetLabel(s.substr(i, end - i));
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::string PrescanMetaCharset(std::string_view head) {
  return Prescanner(head.substr(0, kPrescanBytes)).Run();
}

StatusOr<std::unique_ptr<Utf8Converter>> Utf8Converter::Create(std::string_view charset) {
  const EncodingInfo* info = FindEncoding(charset);
  if (info == nullptr) {
    return InvalidArgumentError("unknown charset '" + std::string(charset) + "'");
  }
  if (info->name == "UTF-8") return std::unique_ptr<Utf8Converter>(new Utf8Validator());
  if (info->name == "x-user-defined") {
    return std::unique_ptr<Utf8Converter>(new UserDefinedConverter());
  }
  iconv_t cd = iconv_open("UTF-8", info->iconv_name);
  if (cd == reinterpret_cast<iconv_t>(-1)) {
    // The C library lacks a converter we expected (e.g. a minimal glibc without gconv modules).
    return InternalError("iconv cannot convert from " + std::string(info->iconv_name));
  }
  return std::unique_ptr<Utf8Converter>(new IconvConverter(cd, info->unit));
}

StatusOr<std::unique_ptr<Utf8Converter>> Utf8Converter::CreateFor(
    const CharsetDecision& decision) {
  if (decision.source == CharsetSource::kSniffUtf8) {
    return std::unique_ptr<Utf8Converter>(new Utf8Validator(/*windows1252_fallback=*/true));
  }
  return Create(decision.charset);
}

}  // namespace shingled::dedup
