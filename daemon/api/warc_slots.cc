#include "daemon/api/warc_slots.h"

#include <optional>

namespace shingled::daemon {

SlotDecision DecideWarcSlot(std::span<const UploadFlow> flows, std::string_view client,
                            const WarcSlotRules& rules) {
  size_t mine = 0;
  for (const UploadFlow& f : flows) mine += f.client == client ? 1 : 0;
  const bool own_share_taken = mine >= rules.max_per_client;
  const bool all_taken = flows.size() >= rules.max_uploads;
  if (!own_share_taken && !all_taken) return {};

  // The uploads the newcomer contends with: its own address's when it is at its share (a slot
  // of another client would leave it over its share), else all of them.
  SlotDecision d;
  d.reason = own_share_taken ? std::to_string(mine) +
                                   " WARC uploads from this address are being read "
                                   "(limits.max_warc_uploads_per_client)"
                             : std::to_string(flows.size()) +
                                   " WARC uploads are being read (limits.max_warc_uploads)";
  std::optional<size_t> slowest;
  for (size_t i = 0; i < flows.size(); ++i) {
    const UploadFlow& f = flows[i];
    if (own_share_taken && f.client != client) continue;
    if (f.age < rules.judged_after || !(f.bytes_per_second < rules.min_rate)) continue;
    if (!slowest || f.bytes_per_second < flows[*slowest].bytes_per_second) slowest = i;
  }
  if (!slowest) {
    d.kind = SlotDecision::Kind::kRefuse;
    return d;
  }
  d.kind = SlotDecision::Kind::kReclaim;
  d.victim = *slowest;
  return d;
}

}  // namespace shingled::daemon
