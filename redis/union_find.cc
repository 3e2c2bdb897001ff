#include "redis/union_find.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "redis/by_master.h"
#include "redis/layout.h"

namespace shingled::redis {
namespace {

constexpr int kDocBucketShift = 6;  // 64 documents a bucket: small listpacks

// Path compression: parent(x) from `expected` to `root`, unless it has moved meanwhile. KEYS[1]
// x's parent bucket; ARGV[1] x, ARGV[2] expected, ARGV[3] root.
constexpr std::string_view kCompressScript = R"lua(
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local comma = string.find(v, ',', 1, true)
local link = v
local parent = v
if comma then
  link = string.sub(v, 1, comma - 1)
  parent = string.sub(v, comma + 1)
end
if parent ~= ARGV[2] then return 0 end
if ARGV[3] == link then
  redis.call('HSET', KEYS[1], ARGV[1], link)
else
  redis.call('HSET', KEYS[1], ARGV[1], link .. ',' .. ARGV[3])
end
return 1
)lua";

std::string DocBucket(char letter, uint64_t doc) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string key = "{";
  key.push_back(letter);
  const uint64_t prefix = doc >> kDocBucketShift;
  int shift = 60;
  while (shift > 0 && ((prefix >> shift) & 15) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) key.push_back(kHex[(prefix >> shift) & 15]);
  key.push_back('}');
  return key;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && *out != 0;
}

// An entry of a parent bucket: nil (a root), or "link" or "link,parent".
struct Entry {
  bool root = true;
  uint64_t link = 0;
  uint64_t parent = 0;
};

StatusOr<Entry> ParseEntry(const Reply& reply, uint64_t doc) {
  Entry e;
  if (reply.is_nil()) return e;
  const std::string_view v = reply.str;
  const size_t comma = v.find(',');
  const bool ok = reply.type == Reply::Type::kString && ParseU64(v.substr(0, comma), &e.link) &&
                  (comma == std::string_view::npos ? (e.parent = e.link, true)
                                                   : ParseU64(v.substr(comma + 1), &e.parent));
  if (!ok || e.link >= doc || e.parent >= doc) {
    return DataLossError(std::string("union-find: the parent entry of document ")
                             .append(std::to_string(doc))
                             .append(" is \"")
                             .append(reply.str)
                             .append("\""));
  }
  e.root = false;
  return e;
}

Command GetEntry(uint64_t doc) {
  return Command{.args = {"HGET", ParentBucketKey(doc), std::to_string(doc)}};
}

}  // namespace

std::string ParentBucketKey(uint64_t doc) { return DocBucket('p', doc); }
std::string ChildrenBucketKey(uint64_t doc) { return DocBucket('c', doc); }

namespace {

}  // namespace

StatusOr<std::vector<uint64_t>> FindRoots(ClusterClient& client,
                                          const std::vector<uint64_t>& docs) {
  // For each document, the path walked: (node, the parent read) pairs.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> paths(docs.size());
  std::vector<uint64_t> current = docs;
  std::vector<bool> done(docs.size(), false);
  size_t open = docs.size();
  while (open > 0) {
    std::vector<Command> commands;
    std::vector<size_t> which;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (done[i]) continue;
      commands.push_back(GetEntry(current[i]));
      which.push_back(i);
    }
    auto replies = RunByMaster(client, commands);
    if (!replies.ok()) return replies.status();
    for (size_t j = 0; j < which.size(); ++j) {
      const size_t i = which[j];
      auto entry = ParseEntry((*replies)[j], current[i]);
      if (!entry.ok()) return entry.status();
      if (entry->root) {
        done[i] = true;
        --open;
      } else {
        paths[i].emplace_back(current[i], entry->parent);
        current[i] = entry->parent;
      }
    }
  }
  // Compress: every node of a path whose parent is not yet the root points to the root.
  std::vector<Command> compress;
  for (size_t i = 0; i < docs.size(); ++i) {
    for (const auto& [node, parent] : paths[i]) {
      if (parent == current[i]) continue;
      compress.push_back(Command{
          .args = {"EVAL", std::string(kCompressScript), "1", ParentBucketKey(node),
                   std::to_string(node), std::to_string(parent), std::to_string(current[i])},
          .key_index = 3});
    }
  }
  if (!compress.empty()) {
    auto replies = RunByMaster(client, compress);
    if (!replies.ok()) return replies.status();
  }
  return current;
}

StatusOr<uint64_t> Union(ClusterClient& client, uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return InvalidArgumentError("union-find: document ids start at 1");
  for (;;) {
    auto roots = FindRoots(client, {a, b});
    if (!roots.ok()) return roots.status();
    const uint64_t lo = std::min((*roots)[0], (*roots)[1]);
    const uint64_t hi = std::max((*roots)[0], (*roots)[1]);
    if (lo == hi) return lo;
    auto made = LinkRoots(client, {{hi, lo}});
    if (!made.ok()) return made.status();
    if ((*made)[0]) return lo;
    // Another union linked hi first: start again from the roots as they are now.
  }
}

StatusOr<std::vector<bool>> LinkRoots(ClusterClient& client,
                                      const std::vector<std::pair<uint64_t, uint64_t>>& links) {
  std::vector<Command> intents, sets;
  for (const auto& [hi, lo] : links) {
    if (lo == 0 || hi <= lo) {
      return InvalidArgumentError("union-find: a link goes to a smaller id, not " +
                                  std::to_string(hi) + " under " + std::to_string(lo));
    }
    const std::string bucket = ChildrenBucketKey(lo);
    std::string field = std::to_string(lo);
    std::string overflow = bucket + field;
    intents.push_back(
        Command{.args = {"EVAL", std::string(kAddPostingScript), "2", bucket, std::move(overflow),
                         std::move(field), std::to_string(hi), std::to_string(kMaxInlineList)},
                .key_index = 3});
    sets.push_back(
        Command{.args = {"HSETNX", ParentBucketKey(hi), std::to_string(hi), std::to_string(lo)}});
  }
  std::vector<bool> made(links.size(), false);
  if (links.empty()) return made;
  // The intents first, in a round of their own: they are on other nodes than the links, and a
  // pipeline orders commands only per node. The links go as they are, not by master: a link run
  // twice would answer that another union made it.
  auto intended = RunByMaster(client, intents);
  if (!intended.ok()) return intended.status();
  auto linked = client.Pipeline(sets);
  if (!linked.ok()) return linked.status();
  for (size_t i = 0; i < links.size(); ++i) made[i] = (*linked)[i].integer == 1;
  return made;
}

StatusOr<std::vector<std::vector<uint64_t>>> ClusterMembersOfRoots(
    ClusterClient& client, std::span<const uint64_t> roots) {
  std::vector<std::vector<uint64_t>> members;
  // The tree's nodes of the level being walked: (node, the index of its root in `roots`).
  std::vector<std::pair<uint64_t, size_t>> level;
  for (size_t r = 0; r < roots.size(); ++r) {
    members.push_back({roots[r]});
    level.emplace_back(roots[r], r);
  }
  while (!level.empty()) {
    std::vector<Command> lists;
    for (const auto& [node, r] : level) {
      const std::string bucket = ChildrenBucketKey(node);
      std::string field = std::to_string(node);
      std::string overflow = bucket + field;
      lists.push_back(Command{.args = {"EVAL", std::string(kGetPostingScript), "2", bucket,
                                       std::move(overflow), std::move(field)},
                              .key_index = 3});
    }
    auto replies = RunByMaster(client, lists);
    if (!replies.ok()) return replies.status();
    // Each listed child with the level's node it was listed under.
    std::vector<std::pair<uint64_t, size_t>> listed;  // (child, index in `level`)
    for (size_t i = 0; i < level.size(); ++i) {
      auto ids = ParsePostingList((*replies)[i]);
      if (!ids.ok()) return ids.status();
      for (const uint64_t child : *ids) listed.emplace_back(child, i);
    }
    if (listed.empty()) break;
    std::vector<Command> entries;
    for (const auto& [child, parent] : listed) entries.push_back(GetEntry(child));
    auto got = RunByMaster(client, entries);
    if (!got.ok()) return got.status();
    // A child is a member when its link still points at the node that listed it (an intent
    // whose link another union made first names a child linked elsewhere).
    std::vector<std::pair<uint64_t, size_t>> next;
    for (size_t i = 0; i < listed.size(); ++i) {
      auto entry = ParseEntry((*got)[i], listed[i].first);
      if (!entry.ok()) return entry.status();
      const auto& [parent, r] = level[listed[i].second];
      if (!entry->root && entry->link == parent) {
        members[r].push_back(listed[i].first);
        next.emplace_back(listed[i].first, r);
      }
    }
    level = std::move(next);
  }
  for (std::vector<uint64_t>& m : members) std::sort(m.begin(), m.end());
  return members;
}

StatusOr<std::vector<uint64_t>> ClusterMembers(ClusterClient& client, uint64_t root) {
  const uint64_t roots[] = {root};
  StatusOr<std::vector<std::vector<uint64_t>>> members = ClusterMembersOfRoots(client, roots);
  if (!members.ok()) return members.status();
  return std::move((*members)[0]);
}

}  // namespace shingled::redis
