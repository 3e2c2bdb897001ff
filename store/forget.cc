// Forgetting on the LMDB store: takedowns (FORMAT.md, "Forgetting").
#include "store/lmdb_store.h"

namespace shingled::store {

std::string_view ForgetScopeName(ForgetScope scope) {
  switch (scope) {
    case ForgetScope::kUrl:
      return "url";
    case ForgetScope::kHost:
      return "host";
    case ForgetScope::kPrefix:
      return "prefix";
  }
  return "unknown";
}

StatusOr<ForgetResult> LmdbStore::Forget(const ForgetOptions&) {
  return UnimplementedError("forget: being written");
}

StatusOr<std::vector<ForgetRecord>> LmdbStore::ForgetRecords(uint64_t, size_t) const {
  return UnimplementedError("forget: being written");
}

}  // namespace shingled::store
