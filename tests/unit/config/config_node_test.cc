// ConfigNode: typed getters, ranges, enums, units, iteration, unknown keys.
#include "common/config/config_node.h"

#include <gtest/gtest.h>

#include <array>

#include "common/config/json_loader.h"
#include "tests/support/config_errors.h"

namespace sf::config {
namespace {

// Runs `f` and returns the ConfigError's what(), or "no error".
template <class F>
std::string error_of(F&& f) {
  return sf::test::config_error_of(std::forward<F>(f));
}

enum class Mode { kStatic, kDynamic };
constexpr std::array<EnumName<Mode>, 2> kModes{{{"static", Mode::kStatic}, {"dynamic", Mode::kDynamic}}};

TEST(ConfigNode, TypedGettersReadValues) {
  const Json j = parse_text(R"({"i": -5, "u": 70000, "b": true, "s": "x", "d": 0.25, "n": 3})");
  ConfigNode n(j, "T");
  EXPECT_EQ(n.req<int32_t>("i"), -5);
  EXPECT_EQ(n.req<uint32_t>("u"), 70000u);
  EXPECT_TRUE(n.req<bool>("b"));
  EXPECT_EQ(n.req<std::string>("s"), "x");
  EXPECT_DOUBLE_EQ(n.req<double>("d"), 0.25);
  EXPECT_DOUBLE_EQ(n.req<double>("n"), 3.0);  // integers are numbers
  EXPECT_EQ(n.opt<int>("absent", 7), 7);
  EXPECT_NO_THROW(n.finish());
}

TEST(ConfigNode, WrongTypesNamePathAndTypes) {
  const Json j = parse_text(R"({"speed": "100", "f": 1.5, "arr": [], "nul": null, "obj": {}, "str": 3})");
  ConfigNode n(j, "PORT.Ethernet0");
  EXPECT_EQ(error_of([&] { n.req<uint32_t>("speed"); }), "PORT.Ethernet0.speed: expected integer, got string");
  EXPECT_EQ(error_of([&] { n.req<int>("f"); }), "PORT.Ethernet0.f: expected integer, got number 1.5");
  EXPECT_EQ(error_of([&] { n.req<bool>("arr"); }), "PORT.Ethernet0.arr: expected boolean, got array");
  EXPECT_EQ(error_of([&] { n.opt<int>("nul", 1); }), "PORT.Ethernet0.nul: expected integer, got null");
  EXPECT_EQ(error_of([&] { n.req<double>("obj"); }), "PORT.Ethernet0.obj: expected number, got object");
  EXPECT_EQ(error_of([&] { n.req<std::string>("str"); }), "PORT.Ethernet0.str: expected string, got integer");
}

TEST(ConfigNode, MissingRequiredKey) {
  const Json j = parse_text(R"({"a": 1})");
  ConfigNode n(j, "BUFFER_POOL.ingress");
  EXPECT_EQ(error_of([&] { n.req<int>("size"); }), "BUFFER_POOL.ingress: missing required key \"size\"");
}

TEST(ConfigNode, RangesAndIntegerTypeLimits) {
  const Json j = parse_text(R"({"mtu": 10000, "neg": -1, "big": 70000, "p": 1.5, "huge": 18446744073709551615})");
  ConfigNode n(j, "P");
  EXPECT_EQ(error_of([&] { n.req<uint32_t>("mtu", in_range<uint32_t>(68, 9216)); }),
            "P.mtu: 10000 out of range [68, 9216]");
  EXPECT_EQ(error_of([&] { n.req<uint32_t>("neg"); }), "P.neg: -1 out of range [0, 4294967295]");
  EXPECT_EQ(error_of([&] { n.req<uint16_t>("big"); }), "P.big: 70000 out of range [0, 65535]");
  EXPECT_EQ(error_of([&] { n.req<double>("p", in_range(0.0, 1.0)); }), "P.p: 1.5 out of range [0, 1]");
  EXPECT_EQ(error_of([&] { n.req<int64_t>("huge"); }),
            "P.huge: 18446744073709551615 out of range [-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(n.req<uint64_t>("huge"), 18446744073709551615ull);
  EXPECT_EQ(n.opt<uint32_t>("absent", 5, in_range<uint32_t>(68, 9216)), 5u);  // defaults are not checked
}

TEST(ConfigNode, EnumsListAllowedValues) {
  const Json j = parse_text(R"({"mode": "dynamic", "bad": "dyn"})");
  ConfigNode n(j, "BUFFER_POOL.egress");
  EXPECT_EQ(n.req_enum<Mode>("mode", kModes), Mode::kDynamic);
  EXPECT_EQ(n.opt_enum<Mode>("absent", Mode::kStatic, kModes), Mode::kStatic);
  EXPECT_EQ(error_of([&] { n.req_enum<Mode>("bad", kModes); }),
            "BUFFER_POOL.egress.bad: \"dyn\" is not one of \"static\", \"dynamic\"");
}

TEST(ConfigNode, UnknownKeysReportedWithSuggestion) {
  const Json j = parse_text(R"({"devargs": "x", "sped": 100})");
  ConfigNode n(j, "PORT.Ethernet4");
  n.req<std::string>("devargs");
  n.opt<uint32_t>("speed", 0);
  EXPECT_EQ(error_of([&] { n.finish(); }), "PORT.Ethernet4: unknown key \"sped\" (did you mean \"speed\"?)");
  const Json j2 = parse_text(R"({"zzzz": 1})");
  ConfigNode n2(j2, "X");
  n2.opt<int>("speed", 0);
  EXPECT_EQ(error_of([&] { n2.finish(); }), "X: unknown key \"zzzz\"");
}

TEST(ConfigNode, CrossFieldFailKey) {
  const Json j = parse_text(R"({"xoff": 900000})");
  ConfigNode n(j, "BUFFER_PROFILE.lossless_p3");
  const uint64_t pool_bytes = 16777216;
  const uint64_t xoff = n.req<uint64_t>("xoff");
  EXPECT_EQ(error_of([&] {
              if (xoff > 1000) n.fail_key("xoff", std::to_string(xoff) + " exceeds pool size " +
                                                      std::to_string(pool_bytes));
            }),
            "BUFFER_PROFILE.lossless_p3.xoff: 900000 exceeds pool size 16777216");
}

TEST(ConfigNode, SizesWithUnits) {
  const Json j = parse_text(
      R"({"a": 4096, "b": "16MiB", "c": "16MB", "d": "64 KiB", "e": "12766208", "f": "1.5MB", "g": "3XB",
          "h": "99999999999GiB"})");
  ConfigNode n(j, "S");
  EXPECT_EQ(n.req_bytes("a"), 4096u);
  EXPECT_EQ(n.req_bytes("b"), 16u * 1024 * 1024);
  EXPECT_EQ(n.req_bytes("c"), 16000000u);
  EXPECT_EQ(n.req_bytes("d"), 65536u);
  EXPECT_EQ(n.req_bytes("e"), 12766208u);
  EXPECT_EQ(n.opt_bytes("absent", 1), 1u);
  EXPECT_EQ(error_of([&] { n.req_bytes("f"); }), "S.f: unknown size unit \".5MB\" (use B, KB, MB, GB, KiB, MiB or GiB)");
  EXPECT_EQ(error_of([&] { n.req_bytes("g"); }), "S.g: unknown size unit \"XB\" (use B, KB, MB, GB, KiB, MiB or GiB)");
  EXPECT_EQ(error_of([&] { n.req_bytes("h"); }), "S.h: \"99999999999GiB\" is too large");
  EXPECT_EQ(error_of([&] { n.req_bytes("a", in_range<uint64_t>(0, 1024)); }),
            "S.a: 4096 bytes out of range [0, 1024]");
}

TEST(ConfigNode, RatesAndDurations) {
  const Json j = parse_text(R"({"r1": 100, "r2": "25Gbps", "r3": "2.5G", "r4": "100M", "r5": "10Q", "r6": 0,
                                "t1": 1500, "t2": "200us", "t3": "1ms", "t4": "2s", "t5": "5min", "t6": -1})");
  ConfigNode n(j, "R");
  EXPECT_EQ(n.req_rate("r1"), BitRate::gbps(100));
  EXPECT_EQ(n.req_rate("r2"), BitRate::gbps(25));
  EXPECT_EQ(n.req_rate("r3"), BitRate(2500000000ull));
  EXPECT_EQ(n.req_rate("r4"), BitRate::mbps(100));
  EXPECT_EQ(error_of([&] { n.req_rate("r5"); }),
            "R.r5: unknown rate unit in \"10Q\" (use K, M, G or T, optionally followed by bps)");
  EXPECT_EQ(error_of([&] { n.req_rate("r6"); }), "R.r6: 0G out of range [1e-09G, 1.84467e+10G]");
  EXPECT_EQ(error_of([&] { n.req_rate("r1", {BitRate::gbps(1), BitRate::gbps(40)}); }),
            "R.r1: 100G out of range [1G, 40G]");
  EXPECT_EQ(n.req_duration("t1"), TimeNs(1500));
  EXPECT_EQ(n.req_duration("t2"), TimeNs::from_us(200));
  EXPECT_EQ(n.req_duration("t3"), TimeNs::from_ms(1));
  EXPECT_EQ(n.req_duration("t4"), TimeNs::from_s(2));
  EXPECT_EQ(error_of([&] { n.req_duration("t5"); }), "R.t5: unknown duration unit in \"5min\" (use ns, us, ms or s)");
  EXPECT_EQ(error_of([&] { n.req_duration("t6"); }), "R.t6: -1 out of range [0, 9223372036854775807]");
}

TEST(ConfigNode, IterationCarriesPaths) {
  const Json j = parse_text(R"({"tbl": {"a": {"x": 1}, "b": {"x": "bad"}}, "list": [1, 2, "three"]})");
  ConfigNode root(j, "");
  ConfigNode tbl = root.child("tbl");
  std::vector<std::string> keys;
  std::string err;
  for (auto& [key, node] : tbl.members()) {
    keys.push_back(key);
    err = error_of([&n = node] { n.req<int>("x"); });  // clang 14 cannot capture a structured binding
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(err, "tbl.b.x: expected integer, got string");
  auto elems = root.child("list").elements();
  ASSERT_EQ(elems.size(), 3u);
  EXPECT_EQ(elems[1].as<int>(), 2);
  EXPECT_EQ(error_of([&] { elems[2].as<int>(); }), "list[2]: expected integer, got string");
  EXPECT_EQ(error_of([&] { root.child("tbl").elements(); }), "tbl: expected array, got object");
  EXPECT_EQ(error_of([&] { elems[0].req<int>("k"); }), "list[0]: expected object, got integer");
  EXPECT_NO_THROW(root.finish());
}

TEST(ConfigNode, ErrorCarriesPathAndReasonSeparately) {
  const Json j = parse_text(R"({"a": "x"})");
  ConfigNode n(j, "T");
  try {
    n.req<int>("a");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "T.a");
    EXPECT_EQ(e.reason(), "expected integer, got string");
  }
}

}  // namespace
}  // namespace sf::config
