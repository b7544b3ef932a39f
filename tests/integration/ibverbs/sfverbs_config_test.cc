// libsfverbs' environment parsing (nic/ibverbs/sfverbs_config.h): defaults,
// each variable's refusal text, and peer MAC resolution.
#include "nic/ibverbs/sfverbs_config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sf::nic::ibverbs {
namespace {

struct Vars {
  std::map<std::string, std::string> v;
  std::string parse(SfVerbsConfig* c, bool* configured) const {
    return parse_config(
        [this](const char* n) {
          auto it = v.find(n);
          return it == v.end() ? static_cast<const char*>(nullptr) : it->second.c_str();
        },
        c, configured);
  }
};

// 1. No SFVERBS_PORT: not an error, no device.
TEST(SfVerbsConfig, NoPortIsNoDevice) {
  SfVerbsConfig c;
  bool configured = true;
  EXPECT_EQ(Vars{}.parse(&c, &configured), "");
  EXPECT_FALSE(configured);
}

// 2. Port and IPv4: defaults, the MAC derived from the address.
TEST(SfVerbsConfig, Defaults) {
  SfVerbsConfig c;
  bool configured = false;
  ASSERT_EQ((Vars{{{"SFVERBS_PORT", "net_memif0"}, {"SFVERBS_IP", "10.9.0.1"}}}.parse(&c, &configured)), "");
  EXPECT_TRUE(configured);
  EXPECT_EQ(c.device_name, "sf0");
  ASSERT_TRUE(c.ipv4.has_value());
  EXPECT_FALSE(c.ipv6.has_value());
  EXPECT_EQ(c.mac, (wire::MacAddr{{0x02, 0x00, 10, 9, 0, 1}}));
  EXPECT_EQ(c.mtu_bytes, 4096u);
  EXPECT_EQ(c.speed_gbps, 100u);
  EXPECT_EQ(c.idle, IdleMode::kBackoff);
  EXPECT_FALSE(c.mrc);
  EXPECT_TRUE(c.poll_yield_auto);
}

// SFVERBS_POLL_YIELD: auto (the default) yields on a process allowed fewer
// than 4 CPUs only; an explicit value, 0 included, is used as given.
TEST(SfVerbsConfig, PollYieldAutoFollowsTheCpus) {
  SfVerbsConfig c;
  EXPECT_EQ(effective_poll_yield(c, 1), kAutoPollYield);
  EXPECT_EQ(effective_poll_yield(c, 3), kAutoPollYield);
  EXPECT_EQ(effective_poll_yield(c, 4), 0u);
  EXPECT_EQ(effective_poll_yield(c, 64), 0u);
  bool configured = false;
  Vars zero{{{"SFVERBS_PORT", "net_memif0"}, {"SFVERBS_IP", "10.9.0.1"}, {"SFVERBS_POLL_YIELD", "0"}}};
  ASSERT_EQ(zero.parse(&c, &configured), "");
  EXPECT_FALSE(c.poll_yield_auto);
  EXPECT_EQ(effective_poll_yield(c, 2), 0u);
  Vars aut{{{"SFVERBS_PORT", "net_memif0"}, {"SFVERBS_IP", "10.9.0.1"}, {"SFVERBS_POLL_YIELD", "auto"}}};
  ASSERT_EQ(aut.parse(&c, &configured), "");
  EXPECT_TRUE(c.poll_yield_auto);
  EXPECT_EQ(effective_poll_yield(c, 2), kAutoPollYield);
}

// 3. Both families, an explicit MAC, neighbours, knobs.
TEST(SfVerbsConfig, Everything) {
  SfVerbsConfig c;
  bool configured = false;
  Vars vars{{{"SFVERBS_PORT", "net_memif0"},
             {"SFVERBS_IP", "10.9.0.1,fd00::1"},
             {"SFVERBS_MAC", "02:aa:bb:cc:dd:ee"},
             {"SFVERBS_NEIGH", "10.9.0.2=02:11:22:33:44:55,fd00::2=02:66:77:88:99:00"},
             {"SFVERBS_MTU", "1024"},
             {"SFVERBS_SPEED_GBPS", "25"},
             {"SFVERBS_IDLE", "spin"},
             {"SFVERBS_TRANSPORT", "mrc"},
             {"SFVERBS_POLL_YIELD", "1024"},
             {"SFVERBS_INLINE_PROGRESS", "1"},
             {"SFVERBS_STAND_BACK_US", "50"},
             {"SFVERBS_EAL", "--log-level=*:debug  -m 256"}}};
  ASSERT_EQ(vars.parse(&c, &configured), "");
  EXPECT_TRUE(c.ipv4 && c.ipv6);
  EXPECT_EQ(c.mac, (wire::MacAddr{{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee}}));
  EXPECT_EQ(c.mtu_bytes, 1024u);
  EXPECT_EQ(c.speed_gbps, 25u);
  EXPECT_EQ(c.idle, IdleMode::kSpin);
  EXPECT_TRUE(c.mrc);
  EXPECT_EQ(c.poll_yield, 1024u);
  EXPECT_FALSE(c.poll_yield_auto);
  EXPECT_TRUE(c.inline_progress);
  EXPECT_EQ(c.stand_back_us, 50u);
  EXPECT_EQ(effective_poll_yield(c, 2), 1024u);
  EXPECT_EQ(effective_poll_yield(c, 64), 1024u);
  EXPECT_EQ(c.eal_extra, (std::vector<std::string>{"--log-level=*:debug", "-m", "256"}));
  // A neighbour's MAC wins; an unknown peer gets the derived MAC.
  const uint8_t v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 9, 0, 2};
  EXPECT_EQ(resolve_mac(c, v4), (wire::MacAddr{{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}}));
  const uint8_t v4b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 9, 0, 7};
  EXPECT_EQ(resolve_mac(c, v4b), (wire::MacAddr{{0x02, 0x00, 10, 9, 0, 7}}));
  const uint8_t v6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  EXPECT_EQ(resolve_mac(c, v6), (wire::MacAddr{{0x02, 0x66, 0x77, 0x88, 0x99, 0x00}}));
}

// 4. Every bad value is refused with a text naming the variable.
TEST(SfVerbsConfig, Refusals) {
  const std::map<std::string, std::pair<std::string, std::string>> bad = {
      {"no ip", {"SFVERBS_IP", ""}},
      {"bad ip", {"SFVERBS_IP", "10.9.0"}},
      {"two v4", {"SFVERBS_IP", "10.0.0.1,10.0.0.2"}},
      {"bad mac", {"SFVERBS_MAC", "02:00:00:00:00"}},
      {"bad gw", {"SFVERBS_GATEWAY_MAC", "x"}},
      {"bad neigh", {"SFVERBS_NEIGH", "10.0.0.2"}},
      {"mtu 1500", {"SFVERBS_MTU", "1500"}},
      {"mtu 8192", {"SFVERBS_MTU", "8192"}},
      {"speed 0", {"SFVERBS_SPEED_GBPS", "0"}},
      {"idle", {"SFVERBS_IDLE", "sometimes"}},
      {"sleep", {"SFVERBS_MAX_SLEEP_US", "0"}},
      {"yield", {"SFVERBS_POLL_YIELD", "-1"}},
      {"yield word", {"SFVERBS_POLL_YIELD", "sometimes"}},
      {"stand back without inline progress", {"SFVERBS_STAND_BACK_US", "50"}},
      {"stand back word", {"SFVERBS_STAND_BACK_US", "long"}},
      {"log", {"SFVERBS_LOG", "loud"}},
      {"device", {"SFVERBS_DEVICE", ""}},
      {"transport", {"SFVERBS_TRANSPORT", "uet"}},
  };
  for (const auto& [what, kv] : bad) {
    Vars vars{{{"SFVERBS_PORT", "net_memif0"}, {"SFVERBS_IP", "10.9.0.1"}}};
    vars.v[kv.first] = kv.second;
    SfVerbsConfig c;
    bool configured = false;
    const std::string err = vars.parse(&c, &configured);
    EXPECT_EQ(err.rfind(kv.first + ":", 0), 0u) << what << ": " << err;
    EXPECT_FALSE(configured) << what;
  }
}

}  // namespace
}  // namespace sf::nic::ibverbs
