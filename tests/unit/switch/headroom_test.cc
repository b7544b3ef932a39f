// Headroom per SONiC's formula against the worked table of
// shared/reference/switch.md 2.3 (Spectrum-1 ASIC values, port MTU 9100,
// lossless MTU 1500, 100 % small packets, no gearbox, no shared pool).
#include "switch/lossless/headroom.h"

#include <gtest/gtest.h>

namespace sf::sw {
namespace {

struct Row {
  double gbps;
  double cable_m;
  uint64_t peer, xoff, xon, size;
};

TEST(Headroom, SpectrumOneWorkedTable) {
  for (const Row& r : {Row{25, 5, 5120, 31744, 18432, 50176}, Row{100, 5, 25216, 72704, 18432, 91136},
                       Row{100, 40, 25216, 80896, 18432, 99328}, Row{100, 300, 25216, 144384, 18432, 162816},
                       Row{400, 5, 57920, 141312, 18432, 159744}}) {
    HeadroomParams p;
    p.speed = BitRate::gbps(r.gbps);
    p.cable_m = r.cable_m;
    const Headroom h = compute_headroom(p);
    EXPECT_EQ(h.peer_response_bytes, r.peer) << r.gbps << "G " << r.cable_m << "m";
    EXPECT_EQ(h.xoff_bytes, r.xoff) << r.gbps << "G " << r.cable_m << "m";
    EXPECT_EQ(h.xon_bytes, r.xon);
    EXPECT_EQ(h.size_bytes, r.size);
  }
}

TEST(Headroom, SharedPoolSizeIsXonAndLongerCableNeedsMore) {
  HeadroomParams p;
  p.speed = BitRate::gbps(100);
  p.shared_headroom_pool = true;
  EXPECT_EQ(compute_headroom(p).size_bytes, 18432u);
  HeadroomParams far = p;
  far.cable_m = 2000;
  EXPECT_GT(compute_headroom(far).xoff_bytes, compute_headroom(p).xoff_bytes);
  EXPECT_EQ(peer_response_quanta(BitRate::gbps(800)), 905u);
  EXPECT_EQ(peer_response_quanta(BitRate::gbps(10)), 67u);
}

}  // namespace
}  // namespace sf::sw
