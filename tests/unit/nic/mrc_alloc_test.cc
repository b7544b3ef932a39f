// STYLE G6: the nic/mrc building blocks allocate nothing after construction.
// A binary of its own (alloc_count.h replaces the global operator new).
#include <gtest/gtest.h>

#include <array>

#include "common/rng.h"
#include "nic/mrc/ev_set.h"
#include "nic/mrc/msg_tracker.h"
#include "nic/mrc/sack_tracker.h"
#include "tests/support/alloc_count.h"

namespace sf::nic::mrc {
namespace {

// 1. A steady-state run of all three: picks, signals, probes, plane flaps,
//    PSN tracking, SACKs, message tracking; zero allocations.
TEST(MrcAlloc, SteadyStateAllocatesNothing) {
  EvSetConfig c;
  c.num_evs = 256;
  c.num_planes = 8;
  c.backup_per_plane = 8;
  EvSet evs(c);
  SackTracker rcv(wire::Psn(0xFFFF00));
  SackScoreboard snd(wire::Psn(0xFFFF00), 1024);
  MsgTracker msgs(0, 1024, 64);
  Rng rng(5);
  std::array<wire::Psn, 64> miss{};
  std::array<MsgCompletion, 8> done{};
  uint64_t acked = 0;

  const uint64_t before = sf::test::allocations();
  for (uint32_t i = 0; i < 100000; ++i) {
    const auto pick = evs.pick_next(rng);
    ASSERT_TRUE(pick.has_value());
    if (i % 97 == 0) evs.on_signal(pick->index, EvSignal::kEcnEcho);
    if (i % 1009 == 0) evs.on_signal(pick->index, EvSignal::kLoss);
    if (const auto pr = evs.next_probe()) {
      evs.on_probe_sent(*pr);
      evs.on_probe_result(*pr, true);
    }
    if (i % 5000 == 0) evs.set_plane_up(static_cast<uint8_t>(i / 5000 % 8), (i / 5000) % 2 == 0);
    ASSERT_TRUE(snd.can_send());
    const wire::Psn p = snd.on_send();
    if (i % 13 != 0) rcv.on_packet(p);  // some loss
    const SackFields f = rcv.sack(p);
    const SackResult r = snd.on_sack(f.cack, f.sack_offset, f.bitmap, miss, [&](wire::Psn) { ++acked; });
    for (uint16_t k = 0; k < r.missing; ++k) rcv.on_packet(miss[k]);  // retransmit
    MsgPacket m;
    m.msn = i;
    m.msg_length = 100;
    m.payload = 100;
    m.last = true;
    m.has_imm = true;
    msgs.on_packet(m);
    msgs.pop_completions(done);
  }
  EXPECT_EQ(sf::test::allocations(), before);
  EXPECT_GT(acked, 90000u);
}

}  // namespace
}  // namespace sf::nic::mrc
