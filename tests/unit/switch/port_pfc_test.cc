// PFC of a port as a component (switch/lossless/port_pfc.h) on its own:
// XOFF / XON generation from a lossless PG's occupancy in a real Mmu, the
// frames owed, and reception of PFC / PAUSE frames (honoured priorities,
// paused queues, what is ignored and counted). Frames in plain memory; no
// SwitchNode.
#include "switch/lossless/port_pfc.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "common/wire/mac_control.h"

namespace sf::sw {
namespace {

constexpr uint32_t kCell = 256;
const wire::MacAddr kPeer{{0x02, 0, 0, 0, 0, 0x0C}};

// One port; PG 3 lossless (profile 1, headroom 40 cells, XON offset 8 cells).
MmuConfig mmu_config() {
  MmuConfig c;
  c.cell_bytes = kCell;
  c.total_bytes = 1000 * kCell;
  c.pools = {{"ingress_pool", PoolDir::kIngress, ThresholdMode::kDynamic, 600 * kCell, 100 * kCell},
             {"egress_pool", PoolDir::kEgress, ThresholdMode::kDynamic, 800 * kCell, 0}};
  c.profiles = {{"ing", 0, 0, ThresholdMode::kDynamic, 0, 0},
                {"lossless", 0, 0, ThresholdMode::kDynamic, -2, 0, 40 * kCell, 8 * kCell, 8 * kCell},
                {"eg", 1, 0, ThresholdMode::kDynamic, 0, 0}};
  c.pg_profile = {{0, 0, 0, 1, 0, 0, 0, 0}};
  c.queue_profile = {{2, 2, 2, 2, 2, 2, 2, 2}};
  return c;
}

// Priority 3 lossless (PG 3), its pauses on queue 3; priority 5 paused on queue 6.
PortQos qos() {
  PortQos q;
  q.pfc_enable = 1u << 3;
  for (int p = 0; p < 8; ++p) {
    q.tc_to_pg[p] = static_cast<uint8_t>(p);
    q.pfc_to_queue[p] = static_cast<uint8_t>(p);
  }
  q.pfc_to_queue[5] = 6;
  return q;
}

wire::FrameInfo parse(const std::vector<uint8_t>& b) { return wire::parse_frame(b, static_cast<uint32_t>(b.size())); }

std::vector<uint8_t> pfc(uint8_t enable, uint16_t quanta) {
  std::vector<uint8_t> b(60);
  std::array<uint16_t, 8> q{};
  q.fill(quanta);
  wire::build_pfc_frame(b, kPeer, enable, q);
  return b;
}

TEST(PortPfc, PrioritiesOfALosslessPg) {
  const PortQos q = qos();
  PortPfc p(BitRate::gbps(100), q);
  p.set_lossless_pg(3, 8, 8);
  EXPECT_EQ(p.pg_prios(3), 1u << 3);
  EXPECT_EQ(p.pg_prios(0), 0);
  p.set_lossless_pg(4, 8, 8);  // lossless, but no pfc_enable priority maps to it
  EXPECT_EQ(p.pg_prios(4), 0);
  EXPECT_FALSE(p.active());
}

TEST(PortPfc, XoffWhenThePgGoesToHeadroomXonWhenDrained) {
  const PortQos q = qos();
  const MmuConfig cfg = mmu_config();  // outlives the Mmu, which points into it
  Mmu mmu(cfg);
  PortPfc p(BitRate::gbps(100), q);
  p.set_lossless_pg(3, 8, 8);
  EXPECT_TRUE(p.idle(mmu, 0, 3));
  EXPECT_TRUE(p.idle(mmu, 0, 0));  // a lossy PG: always
  std::vector<Ticket> held;
  TimeNs now(0);
  // Fill the PG until it is over its shared allowance.
  while (p.idle(mmu, 0, 3)) {
    const Admission a = mmu.admit_ingress(0, 3, 4 * kCell);
    ASSERT_EQ(a.verdict, Verdict::kAccept);
    held.push_back(a.ticket);
    ASSERT_LT(held.size(), 1000u);
  }
  EXPECT_TRUE(p.update(mmu, 0, 3, now));
  EXPECT_EQ(p.xoff_mask(), 1u << 3);
  EXPECT_TRUE(p.active());
  PfcFrameRequest r;
  ASSERT_TRUE(p.poll(now, &r));
  EXPECT_EQ(r.enable, 1u << 3);
  EXPECT_GT(r.quanta[3], 0);
  EXPECT_FALSE(p.poll(now, &r));  // owed once; the refresh later
  EXPECT_GT(p.next_deadline(), now);
  // Drain: XON once below the XON offset, an XON frame owed.
  now = TimeNs::from_us(1);
  while (!held.empty() && p.xoff_mask() != 0) {
    mmu.release_ingress(0, 3, held.back());
    held.pop_back();
    if (!p.idle(mmu, 0, 3)) p.update(mmu, 0, 3, now);
  }
  EXPECT_EQ(p.xoff_mask(), 0);
  EXPECT_FALSE(held.empty());  // XON before empty (xon_offset)
  ASSERT_TRUE(p.poll(now, &r));
  EXPECT_EQ(r.enable, 1u << 3);
  EXPECT_EQ(r.quanta[3], 0);
  EXPECT_TRUE(p.idle(mmu, 0, 3));
  EXPECT_FALSE(p.update(mmu, 0, 3, now));  // nothing asserted, nothing over
}

TEST(PortPfc, ReceivedPfcPausesTheQueuesOfHonouredPriorities) {
  const PortQos q = qos();
  PortPfc p(BitRate::gbps(100), q);
  PortCounters ctr;
  const TimeNs now = TimeNs::from_us(10);
  // Priorities 3 and 5 named; only 3 has pfc_enable.
  EXPECT_EQ(p.on_frame(parse(pfc((1u << 3) | (1u << 5), 0xFFFF)), ctr, now), 1 << 3);
  EXPECT_EQ(ctr.rx_mac_control, 1u);
  EXPECT_EQ(ctr.rx_pfc_disabled_prio, 1u);
  EXPECT_EQ(p.refresh(now), 1u << 3);
  EXPECT_EQ(p.paused_queues(), 1u << 3);
  EXPECT_TRUE(p.active());
  EXPECT_NE(p.next_expiry(), TimeNs::max());
  // XON resumes at once.
  EXPECT_EQ(p.on_frame(parse(pfc(1u << 3, 0)), ctr, now), 0);
  EXPECT_EQ(p.refresh(now), 0);
  // A pause runs out by itself: 100 quanta x 512 bit times at 100 Gb/s = 512 ns.
  EXPECT_EQ(p.on_frame(parse(pfc(1u << 3, 100)), ctr, now), 1 << 3);
  EXPECT_EQ(p.refresh(now), 1u << 3);
  EXPECT_EQ(p.refresh(now + TimeNs(511)), 1u << 3);
  EXPECT_EQ(p.refresh(now + TimeNs::from_us(1)), 0);
  // Ignored (the watchdog): the frame counted, no pause.
  p.set_ignore(1u << 3, now);
  p.on_frame(parse(pfc(1u << 3, 0xFFFF)), ctr, now);
  EXPECT_EQ(p.refresh(now), 0);
  EXPECT_EQ(p.rx().counters().ignored_frames, 1u);
}

TEST(PortPfc, PausePausesEveryQueue) {
  const PortQos q = qos();
  PortPfc p(BitRate::gbps(100), q);
  PortCounters ctr;
  std::vector<uint8_t> b(60);
  wire::build_pause_frame(b, kPeer, 0xFFFF);
  EXPECT_EQ(p.on_frame(parse(b), ctr, TimeNs(0)), 0xFF);
  EXPECT_EQ(p.refresh(TimeNs(0)), 0xDF);  // priorities 0-7 -> queues 0-4, 6, 6, 7
}

TEST(PortPfc, IgnoredFramesChangeNothing) {
  const PortQos q = qos();
  PortPfc p(BitRate::gbps(100), q);
  PortCounters ctr;
  std::vector<uint8_t> bad_da = pfc(1u << 3, 0xFFFF);
  bad_da[5] = 0x02;
  EXPECT_EQ(p.on_frame(parse(bad_da), ctr, TimeNs(0)), -1);
  EXPECT_EQ(ctr.rx_mac_control_bad_da, 1u);
  std::vector<uint8_t> op = pfc(1u << 3, 0xFFFF);
  op[15] = 0x77;  // opcode 0x0177
  EXPECT_EQ(p.on_frame(parse(op), ctr, TimeNs(0)), -1);
  EXPECT_EQ(ctr.rx_unsupported_op, 1u);
  EXPECT_EQ(ctr.rx_mac_control, 2u);
  EXPECT_EQ(p.refresh(TimeNs(0)), 0);
  EXPECT_FALSE(p.active());
}

}  // namespace
}  // namespace sf::sw
