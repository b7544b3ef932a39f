// JSON loading: syntax errors with line/column, duplicate keys, missing files.
#include "common/config/json_loader.h"
#include "tests/support/config_errors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace sf::config {
namespace {

std::string error_of(std::string_view text) { return sf::test::config_error_of([&] { parse_text(text, "cfg.json"); }); }

TEST(JsonLoader, SyntaxErrorHasLineAndColumn) {
  const std::string err = error_of("{\n  \"a\": 1,\n  \"b\" 2\n}");
  EXPECT_EQ(err.rfind("cfg.json: line 3, column 7: syntax error", 0), 0u) << err;
  const std::string err2 = error_of("");
  EXPECT_EQ(err2.rfind("cfg.json: line 1, column 1: ", 0), 0u) << err2;
  const std::string err3 = error_of("{\"a\": [1, 2,]}");
  EXPECT_EQ(err3.rfind("cfg.json: line 1, column 13: ", 0), 0u) << err3;
}

TEST(JsonLoader, DuplicateKeysNamePath) {
  EXPECT_EQ(error_of(R"({"PORT": {"Ethernet0": {"mtu": 1, "mtu": 2}}})"), "PORT.Ethernet0: duplicate key \"mtu\"");
  EXPECT_EQ(error_of(R"({"a": 1, "a": 2})"), "duplicate key \"a\"");
  EXPECT_EQ(error_of(R"({"links": [{"a": 1}, {"x": [1, {"q": 1}], "b": 1, "b": 2}]})"),
            "links[1]: duplicate key \"b\"");
  EXPECT_EQ(error_of(R"({"l": [[1, 2], {"k": 1, "k": 1}]})"), "l[1]: duplicate key \"k\"");
  // The same key in sibling objects is fine.
  EXPECT_EQ(error_of(R"({"a": {"x": 1}, "b": {"x": 1}, "c": [{"x": 1}, {"x": 2}]})"), "no error");
}

TEST(JsonLoader, KeepsDocumentOrder) {
  const Json j = parse_text(R"({"z": 1, "a": 2, "m": 3})");
  std::string order;
  for (auto it = j.begin(); it != j.end(); ++it) order += it.key();
  EXPECT_EQ(order, "zam");
}

TEST(JsonLoader, MissingFile) {
  try {
    load_file("/nonexistent/dir/sf.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "/nonexistent/dir/sf.json");
    EXPECT_STREQ(e.what(), "/nonexistent/dir/sf.json: cannot open: No such file or directory");
  }
}

TEST(JsonLoader, LoadsFile) {
  const std::string path = testing::TempDir() + "sf_config_loader_test.json";
  {
    std::ofstream out(path);
    out << "{\"k\": [1, 2]}\n";
  }
  const Json j = load_file(path);
  EXPECT_EQ(j["k"][1].get<int>(), 2);
  {
    std::ofstream out(path);
    out << "{\n\"k\": tru\n}\n";
  }
  try {
    load_file(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), path);
    EXPECT_EQ(e.reason().rfind("line 2, column", 0), 0u) << e.reason();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace sf::config
