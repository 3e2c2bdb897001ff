// A temporary directory for one test, removed with its contents at the end.
#ifndef SHINGLED_TESTS_STORE_TEST_DIR_H_
#define SHINGLED_TESTS_STORE_TEST_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace shingled::store::testing {

class TestDir {
 public:
  TestDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "shingled-store-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace shingled::store::testing

#endif  // SHINGLED_TESTS_STORE_TEST_DIR_H_
