// SwitchPort::init (switch_port.h): a port and the components its config enables.
#include "switch/pipeline/switch_port.h"

namespace sf::sw {
namespace {

constexpr uint32_t kEthVlanOverhead = 14 + 4;

bool lossless_pg(const SwitchConfig& cfg, size_t p, int pg) {
  const int16_t prof = cfg.mmu.pg_profile[p][pg];
  return prof != kNoProfile && cfg.mmu.profiles[static_cast<size_t>(prof)].lossless();
}

}  // namespace

uint64_t SwitchPort::ring_slots(const SwitchConfig& cfg, uint32_t ring) {
  // Ports x (queues + lossless PGs) x ring, the other PGs one slot each.
  uint64_t slots = 0;
  for (size_t p = 0; p < cfg.ports.ports.size(); ++p) {
    slots += uint64_t{kNumQueues} * EgressQueue::round_capacity(ring);
    for (int pg = 0; pg < kNumPgs; ++pg) slots += EgressQueue::round_capacity(lossless_pg(cfg, p, pg) ? ring : 1);
  }
  return slots;
}

void SwitchPort::init(size_t p, const SwitchConfig& cfg, const Mmu& mmu, QueueArena& arena, uint32_t ring,
                      const std::array<uint8_t, 6>& port_mac) {
  mac = port_mac;
  max_frame_bytes = cfg.ports.ports[p].mtu_bytes + kEthVlanOverhead;
  qos = &cfg.qos[p];
  int_queues = p < cfg.int_queues.size() ? cfg.int_queues[p] : 0;
  rate_bps = cfg.ports.ports[p].speed.bps();
  for (int q = 0; q < kNumQueues; ++q) {
    wred[q] = Wred(cfg.wred[p][q]);
    queues[q] = arena.take(ring);
  }
  for (int pg = 0; pg < kNumPgs; ++pg) {
    const bool lossless = lossless_pg(cfg, p, pg);
    held[pg] = arena.take(lossless ? ring : 1);
    if (lossless) lossless_pgs = static_cast<uint8_t>(lossless_pgs | 1u << pg);
  }
  sched = PortScheduler(cfg.sched[p]);
  // Components: PFC on every port, the watchdog and credit FC where configured.
  pfc = PortPfc(cfg.ports.ports[p].speed, *qos);
  for (int pg = 0; pg < kNumPgs; ++pg) {
    const ProfileConfig* prof = mmu.pg_profile(static_cast<uint16_t>(p), static_cast<uint8_t>(pg));
    if (prof == nullptr || !prof->lossless()) continue;
    pfc.set_lossless_pg(static_cast<uint8_t>(pg), mmu.cells_for(static_cast<uint32_t>(prof->xon_offset_bytes)),
                        mmu.cells_for(static_cast<uint32_t>(prof->xon_bytes)));
  }
  if (p < cfg.pfcwd.size() && cfg.pfcwd[p].queues != 0) wd = std::make_unique<PortWatchdog>(cfg.pfcwd[p], *qos);
  if (p < cfg.credit_fc.size() && cfg.credit_fc[p]) credit = std::make_unique<CreditLink>(*cfg.credit_fc[p], *qos);
}

}  // namespace sf::sw
