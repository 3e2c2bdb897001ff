// Writers and a forgetter on one Redis Cluster: any number of writers at once, or one forgetter
// alone (docs/REDIS.md, "Forgetting"). A takedown rewrites what concurrent pages would read and
// write (claims, postings, records, the union-find), so it runs while no writer does.
//
// Keys, in one slot ("{w}"):
//   - `{w}writers`: a hash, a writer's token -> the end of its lease (ms, the server's clock).
//   - `{w}fence`: the takedown in progress (its description), set before its first write and
//     deleted after its last. Writers are refused while it exists: a takedown cut short (a kill)
//     keeps them off until it is run again and completes, so that no page finds a document half
//     removed.
//   - `{w}forgetter`: the forgetter's token, with a lease: of two takedowns at once one runs.
//   - `{w}note`: what the takedown in progress writes (its URLs), for a run that takes its fence
//     over after it was cut short.
//
// A writer enters before it writes (refused while a fence stands), renews its lease as it goes
// (Keep), and leaves; a writer killed mid-batch holds the gate until its lease runs out. A
// forgetter takes the forgetter lease, sets the fence, then waits until every writer has left or
// its lease has run out: from then on it writes alone. A writer whose lease could have run out
// (it could not renew: a fence stands, or it did not renew in time) stops before its next round.
#ifndef SHINGLED_REDIS_WRITE_GATE_H_
#define SHINGLED_REDIS_WRITE_GATE_H_

#include <chrono>
#include <string>

#include "base/status.h"
#include "redis/cluster_client.h"

namespace shingled::redis {

class WriteGate {
 public:
  // `token` names this writer or forgetter among the daemons (unique: random). A writer's lease
  // lasts `lease`; it renews at a quarter of it.
  WriteGate(ClusterClient& client, std::string token, std::chrono::milliseconds lease);

  // --- a writer ---
  // Unavailable, naming the takedown, when a fence stands (waits up to `wait` for it to fall).
  Status Enter(std::chrono::milliseconds wait);
  // Before each write round: renews the lease once a quarter of it has gone by; Unavailable when
  // a fence stands now or the lease could have run out (the writer then leaves and gives up).
  Status Keep();
  Status Leave();

  // --- a forgetter ---
  // Takes the gate for the takedown `what`: FailedPrecondition when another takedown's fence
  // stands (it was cut short: it must be run again first), Unavailable when another forgetter
  // runs or writers are still in after `wait` (a fence set by this call then falls again). A
  // fence of the same `what` (this takedown, cut short) is taken over.
  Status Hold(const std::string& what, std::chrono::milliseconds wait);
  // Renews the forgetter lease (before each write round); FailedPrecondition if it was lost.
  Status Renew();
  // Keeps `note` with the fence (before the takedown's first write), for a run of the same
  // takedown that takes the fence over; "" when none.
  Status SetNote(const std::string& note);
  StatusOr<std::string> Note();
  // The takedown is complete: the fence and its note fall, and writers enter again.
  Status Release();
  // The takedown whose fence stands, or "" when none.
  StatusOr<std::string> Fence();

 private:
  using Clock = std::chrono::steady_clock;

  ClusterClient& client_;
  const std::string token_;
  const std::chrono::milliseconds lease_;
  Clock::time_point renewed_{};  // when the writer's lease was last set (its start, or later)
  bool inside_ = false;
};

}  // namespace shingled::redis

#endif  // SHINGLED_REDIS_WRITE_GATE_H_
