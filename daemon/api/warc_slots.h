// The fairness rule of WARC upload slots. An upload holds a slot (and a thread) for as long as its
// client takes to send the body, so a few clients sending just over the minimum rate
// (server.min_body_bytes_per_window) could hold every slot for hours. The rule:
//
// - One client (remote address) holds at most `max_per_client` slots (limits.max_warc_uploads_per_client).
// - A newcomer that finds no slot it may take (every slot taken, or its address at its share)
//   takes the slot of the slowest upload it contends with -- any upload when every slot is
//   taken, its own address's when it is at its share -- if that upload has run for at least
//   `judged_after` and its client brings fewer than `min_rate` bytes a second
//   (limits.warc_slot_min_bytes_per_second). That upload is answered 503 with Retry-After; the
//   records it sent so far stay stored. The pace counts only the time the daemon was taking
//   bytes: an upload held back by a busy store is not slow.
// - Otherwise the newcomer gets 503, naming the limit.
//
// So a client faster than `min_rate` always gets a slot when slow ones hold them all, and slow
// clients share what fast ones leave.
#ifndef SHINGLED_DAEMON_API_WARC_SLOTS_H_
#define SHINGLED_DAEMON_API_WARC_SLOTS_H_

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace shingled::daemon {

// How one upload in flight uses its slot.
struct UploadFlow {
  std::string client;  // the uploader's address
  std::chrono::steady_clock::duration age{};
  // Body bytes a second over the upload's life, less the time the daemon took none (its pipe
  // full); infinite while that time is zero.
  double bytes_per_second = 0;
};

struct WarcSlotRules {
  size_t max_uploads = 4;
  size_t max_per_client = 2;
  double min_rate = 65536;  // 0: a slot is never taken back
  std::chrono::steady_clock::duration judged_after = std::chrono::seconds(2);
};

struct SlotDecision {
  enum class Kind {
    kFree,     // a slot is free for the newcomer
    kReclaim,  // the newcomer takes the slot of `flows[victim]`
    kRefuse,   // no slot: 503
  };
  Kind kind = Kind::kFree;
  size_t victim = 0;
  // kReclaim and kRefuse: what was contended, naming its setting, for the answers.
  std::string reason;
};

// Where a newcomer from `client` goes, given the uploads in flight.
SlotDecision DecideWarcSlot(std::span<const UploadFlow> flows, std::string_view client,
                            const WarcSlotRules& rules);

}  // namespace shingled::daemon

#endif  // SHINGLED_DAEMON_API_WARC_SLOTS_H_
