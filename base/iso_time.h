// Unix time as ISO 8601 UTC ("2026-11-28T04:40:18Z"), for answers, reports and messages.
#ifndef SHINGLED_BASE_ISO_TIME_H_
#define SHINGLED_BASE_ISO_TIME_H_

#include <cstdint>
#include <cstdio>
#include <string>

namespace shingled {

// Whole seconds since 1970-01-01T00:00:00Z as "YYYY-MM-DDTHH:MM:SSZ" (years 0000-9999; any other
// int64 prints with a signed year, "-0001-12-31T...", as ISO 8601's expanded form).
inline std::string FormatIsoTime(int64_t unix_seconds) {
  // Days and seconds of the day, rounding towards minus infinity; then the proleptic Gregorian
  // date of the day (H. Hinnant's days_from_civil inverse), in 64 bits. Not gmtime_r: it fails
  // for years an int cannot hold, and left the fields zero ("1900-01-00T00:00:00Z").
  int64_t days = unix_seconds / 86400;
  int64_t second_of_day = unix_seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    --days;
  }
  const int64_t z = days + 719468;  // days since 0000-03-01
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t day_of_era = z - era * 146097;  // [0, 146096]
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) /
      365;  // [0, 399]
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // [0, 365]
  const int64_t mp = (5 * day_of_year + 2) / 153;  // month from March, [0, 11]
  const int64_t day = day_of_year - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
  // Years 0000-9999 as ISO 8601's basic form, which ParseIsoTime reads back; others (only a
  // damaged store holds them) in its expanded form, with a sign.
  char buf[64];
  const int n = year >= 0 && year <= 9999
                    ? std::snprintf(buf, sizeof(buf), "%04lld", static_cast<long long>(year))
                    : std::snprintf(buf, sizeof(buf), "%+05lld", static_cast<long long>(year));
  std::snprintf(buf + n, sizeof(buf) - static_cast<size_t>(n),
                "-%02lld-%02lldT%02lld:%02lld:%02lldZ", static_cast<long long>(month),
                static_cast<long long>(day), static_cast<long long>(second_of_day / 3600),
                static_cast<long long>(second_of_day / 60 % 60),
                static_cast<long long>(second_of_day % 60));
  return buf;
}

}  // namespace shingled

#endif  // SHINGLED_BASE_ISO_TIME_H_
