// EAL argument completion (suite `unit`: pure, no EAL started): unique
// prefix, --no-huge fallback only when no huge page is free, user wins.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/dpdk/eal.h"

namespace sf::dpdk {
namespace {

bool has(const std::vector<std::string>& a, const std::string& s) { return std::find(a.begin(), a.end(), s) != a.end(); }

// 1. No huge pages free. Expect: --no-huge and -m 512 added, prefix sf-<pid>.
TEST(EalArgs, NoHugePagesFallsBack) {
  const EalInfo i = compose_eal_args({"app", "--no-pci"}, {}, 0, 42);
  EXPECT_TRUE(i.no_huge);
  EXPECT_TRUE(i.no_huge_added);
  EXPECT_TRUE(has(i.args, "--no-huge"));
  EXPECT_TRUE(has(i.args, "-m"));
  EXPECT_TRUE(has(i.args, "512"));
  EXPECT_EQ(i.file_prefix, "sf-42");
}

// 2. Huge pages free. Expect: no memory limit added, files unlinked once
// mapped (no leak even on a crash) unless the app keeps them for capture.
TEST(EalArgs, HugePagesUsedWhenFree) {
  const EalInfo i = compose_eal_args({"app"}, {}, 510, 42);
  EXPECT_FALSE(i.no_huge);
  EXPECT_FALSE(has(i.args, "--no-huge"));
  EXPECT_FALSE(has(i.args, "-m"));
  EXPECT_TRUE(has(i.args, "--huge-unlink"));
  EalOptions keep;
  keep.huge_unlink = false;
  EXPECT_FALSE(has(compose_eal_args({"app"}, keep, 510, 42).args, "--huge-unlink"));
  EXPECT_FALSE(has(compose_eal_args({"app"}, {}, 0, 42).args, "--huge-unlink"));  // no-huge: nothing to unlink
}

// 3. User gave --file-prefix and -m. Expect: kept, not duplicated.
TEST(EalArgs, UserArgumentsWin) {
  const EalInfo i = compose_eal_args({"app", "--file-prefix", "mine", "--no-huge", "-m", "128"}, {}, 0, 42);
  EXPECT_EQ(i.file_prefix, "mine");
  EXPECT_EQ(std::count(i.args.begin(), i.args.end(), "--no-huge"), 1);
  EXPECT_EQ(std::count(i.args.begin(), i.args.end(), "-m"), 1);
  EXPECT_FALSE(i.no_huge_added);
}

// 4. argv split at "--". Expect: EAL part, app part, argv[0] in both.
TEST(EalArgs, SplitAtDoubleDash) {
  const char* argv[] = {"sf-pktio", "--vdev", "net_null0", "--", "--mode", "gen"};
  const SplitArgs s = split_args(6, argv);
  EXPECT_EQ(s.eal, (std::vector<std::string>{"sf-pktio", "--vdev", "net_null0"}));
  EXPECT_EQ(s.app, (std::vector<std::string>{"sf-pktio", "--mode", "gen"}));
}

}  // namespace
}  // namespace sf::dpdk
