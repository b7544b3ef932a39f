// A switch port and its components (switch/pipeline/switch_port.h) built
// from a config on its own: a plain port holds no watchdog and no credit
// link and has no INT queue; PFC_WD, CREDIT_FC and INT give the ports that
// name them those components; lossless PGs get hold FIFOs and PFC
// priorities; the rings take exactly ring_slots() of the arena. No
// SwitchNode.
#include "switch/pipeline/switch_port.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "common/config/json_loader.h"

namespace sf::sw {
namespace {

// Three ports: Ethernet0 plain, Ethernet4 lossless priority 3 with PFC_WD and
// INT on queues 3-4, Ethernet8 in credit mode.
constexpr const char* kDoc = R"({
  "PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 1500},
           "Ethernet4": {"devargs": "b", "speed": 400, "mtu": 9100},
           "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 4000}},
  "BUFFER_POOL": {"ip": {"type": "ingress", "mode": "static", "size": "1MiB"},
                  "ep": {"type": "egress", "mode": "static", "size": "1MiB"}},
  "BUFFER_PROFILE": {"pg3": {"pool": "ip", "size": "0", "static_th": "200000", "xoff": "100000"},
                     "lossy": {"pool": "ip", "size": "0", "static_th": "1MiB"},
                     "q": {"pool": "ep", "size": "0", "static_th": "1MiB"}},
  "BUFFER_PG": {"Ethernet0,Ethernet8|0-7": {"profile": "lossy"}, "Ethernet4|0-2": {"profile": "lossy"},
                "Ethernet4|3": {"profile": "pg3"}, "Ethernet4|4-7": {"profile": "lossy"}},
  "BUFFER_QUEUE": {"Ethernet0,Ethernet4,Ethernet8|0-7": {"profile": "q"}},
  "PORT_QOS_MAP": {"Ethernet4": {"pfc_enable": "3", "pfcwd_sw_enable": "3"}},
  "PFC_WD": {"Ethernet4": {"action": "drop", "detection_time": "200us", "restoration_time": "50us"}},
  "INT": {"Ethernet4|3-4": {"enable": "true"}},
  "CREDIT_FC": {"Ethernet8": {"mtu": 4096, "vl_buffer": 8192}}})";

constexpr uint32_t kRing = 64;

class SwitchPortTest : public testing::Test {
 protected:
  void SetUp() override {
    cfg_ = parse_switch_config(config::parse_text(kDoc));
    mmu_ = std::make_unique<Mmu>(cfg_.mmu);
    arena_ = QueueArena(SwitchPort::ring_slots(cfg_, kRing));
    ports_ = std::vector<SwitchPort>(3);
    for (size_t p = 0; p < 3; ++p) ports_[p].init(p, cfg_, *mmu_, arena_, kRing, {2, 0, 0, 0, 0, static_cast<uint8_t>(p)});
  }
  SwitchConfig cfg_;
  std::unique_ptr<Mmu> mmu_;
  QueueArena arena_;
  std::vector<SwitchPort> ports_;
};

TEST_F(SwitchPortTest, APlainPortHoldsNoComponent) {
  const SwitchPort& p = ports_[0];
  EXPECT_EQ(p.wd, nullptr);
  EXPECT_EQ(p.credit, nullptr);
  EXPECT_EQ(p.int_queues, 0);
  EXPECT_EQ(p.lossless_pgs, 0);
  for (uint8_t pg = 0; pg < kNumPgs; ++pg) EXPECT_EQ(p.pfc.pg_prios(pg), 0) << int{pg};
  EXPECT_FALSE(p.ctl_active());
  EXPECT_TRUE(p.queues_empty());
  EXPECT_EQ(p.mac[5], 0);
  EXPECT_EQ(p.max_frame_bytes, 1500u + 18u);
  EXPECT_EQ(p.qos, &cfg_.qos[0]);
  for (const EgressQueue& q : p.queues) EXPECT_EQ(q.capacity(), kRing);
  for (const EgressQueue& h : p.held) EXPECT_EQ(h.capacity(), 1u);  // lossy PGs: never used
}

TEST_F(SwitchPortTest, ConfiguredComponentsOnTheirPorts) {
  const SwitchPort& l = ports_[1];
  ASSERT_NE(l.wd, nullptr);
  EXPECT_EQ(l.credit, nullptr);
  EXPECT_EQ(l.int_queues, 0b11000);
  EXPECT_EQ(l.rate_bps, 400'000'000'000u);
  EXPECT_EQ(l.lossless_pgs, 1u << 3);
  EXPECT_EQ(l.pfc.pg_prios(3), 1u << 3);
  EXPECT_EQ(l.held[3].capacity(), kRing);
  EXPECT_TRUE(l.ctl_active());  // the watchdog's timers
  const SwitchPort& c = ports_[2];
  EXPECT_EQ(c.wd, nullptr);
  ASSERT_NE(c.credit, nullptr);
  EXPECT_EQ(c.credit->fc().config().mtu_bytes, 4096u);
  EXPECT_TRUE(c.ctl_active());
}

TEST_F(SwitchPortTest, RingsTakeExactlyTheirSlots) {
  // Everything taken: one more ring does not fit.
  EXPECT_THROW(arena_.take(1), std::bad_alloc);
  EXPECT_EQ(SwitchPort::ring_slots(cfg_, kRing), 3u * 8 * kRing + 2u * 8 + 7 + kRing);
}

}  // namespace
}  // namespace sf::sw
