// A union-find over the indexes 0..n-1 (path halving, union by size): the parts that pairs of
// joined items form, in memory. Private to store/.
#ifndef SHINGLED_STORE_INTERNAL_COMPONENTS_H_
#define SHINGLED_STORE_INTERNAL_COMPONENTS_H_

#include <cstddef>
#include <numeric>
#include <utility>
#include <vector>

namespace shingled::store::internal {

class Components {
 public:
  explicit Components(size_t n) : parent_(n), size_(n, 1) {
    std::iota(parent_.begin(), parent_.end(), size_t{0});
  }
  // The index that stands for x's part.
  size_t Find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(size_t a, size_t b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (size_[a] < size_[b]) std::swap(a, b);
    parent_[b] = a;
    size_[a] += size_[b];
  }

 private:
  std::vector<size_t> parent_;
  std::vector<size_t> size_;
};

}  // namespace shingled::store::internal

#endif  // SHINGLED_STORE_INTERNAL_COMPONENTS_H_
