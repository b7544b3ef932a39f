// Credit-mode hosts for the virtual-time scenarios (tests/scenario): a
// RoCEv2-like sender and a counting sink whose one port runs credit-based
// link flow control (common/creditfc/credit_port.h, the same logic as the
// switch's CREDIT_FC ports and the NIC later), and a fabric of them around
// one SwitchNode. The sender posts messages (bursts at line rate) on a
// schedule and sends a frame only with a credit of its VL; the sink consumes
// every frame at once (freeing its slot) and returns credits in update
// frames. No clock, no sleeping.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/creditfc/credit_port.h"
#include "common/node.h"
#include "common/rng.h"
#include "common/sim/simulator.h"
#include "common/time.h"
#include "common/wire/frame_builder.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/sharded_switch.h"
#include "switch/pipeline/switch_node.h"

namespace sf::scenario {

// Frames up to 8 KiB of payload plus RoCE headers (MTU 8 KB runs).
inline constexpr uint32_t kCreditMaxFrameBytes = 8192 + 128;
// The credit scenarios' pool (8191 mbufs of kCreditMaxFrameBytes), after EAL.
rte_mempool* credit_pool();

struct CreditSenderConfig {
  wire::MacAddr src_mac;
  wire::MacAddr dst_mac;
  wire::Ipv4Addr src_ip;
  wire::Ipv4Addr dst_ip;
  uint8_t dscp = 26;             // SL = TC = dscp >> 3 (the switch's default DSCP map)
  uint16_t udp_src_port = 0xC000;
  uint32_t payload_bytes = 4096; // per frame (multiple of 4)
  uint32_t message_frames = 1;   // frames posted per message
  uint32_t messages = 1;         // messages in all
  TimeNs start{0};               // first message
  TimeNs period{0};              // between message posts
  TimeNs jitter{0};              // each post delayed by a draw in [0, jitter)
  uint64_t seed = 1;             // jitter draws
  CreditFcConfig link;           // the link's credit config (the switch port's)
};

// The incast senders of the credit scenarios: sender i (sender_mac(i),
// sender_ip(i), UDP source port 0xC000 + i) posts `messages` messages of
// `message_bytes` in frames of `payload_bytes` to the sink, one a `period`,
// each at a random point of its period (seed 003, stream i).
std::vector<CreditSenderConfig> incast_senders(size_t senders, uint32_t payload_bytes, uint32_t message_bytes,
                                               uint32_t messages, TimeNs period);

class CreditRoceSender final : public Node {
 public:
  CreditRoceSender(rte_mempool* pool, const CreditSenderConfig& cfg);

  uint16_t num_ports() const override { return 1; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs now) const override;
  void advance(TimeNs now) override { release(now); }

  bool done() const { return posted_ == cfg_.messages && pending_frames_ == 0; }
  uint64_t sent_frames() const { return sent_frames_; }
  uint64_t sent_bytes() const { return sent_bytes_; }
  uint64_t frames_total() const { return uint64_t{cfg_.messages} * cfg_.message_frames; }
  uint32_t frame_bytes() const { return frame_bytes_; }
  uint64_t alloc_failures() const { return alloc_failures_; }
  uint8_t vl() const { return vl_; }
  const CreditPort& credit() const { return fc_; }

 private:
  void release(TimeNs now);

  rte_mempool* pool_;
  CreditSenderConfig cfg_;
  CreditPort fc_;
  uint8_t vl_ = 0;
  wire::RoceFrameSpec spec_;
  std::vector<uint8_t> payload_;
  uint32_t frame_bytes_ = 0;
  Rng rng_;
  uint32_t posted_ = 0;
  TimeNs next_post_;
  uint64_t pending_frames_ = 0;
  uint32_t psn_ = 0;
  uint64_t sent_frames_ = 0;
  uint64_t sent_bytes_ = 0;
  uint64_t alloc_failures_ = 0;
};

// Consumes every data frame on arrival (its slot is free at once) and owes
// the switch an update after `update_threshold` of a VL; counts frames and
// bytes per DSCP and per source (last IPv4 octet).
class CreditRoceSink final : public Node {
 public:
  CreditRoceSink(rte_mempool* pool, const CreditFcConfig& link, const wire::MacAddr& mac);

  uint16_t num_ports() const override { return 1; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}

  uint64_t frames() const { return frames_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t dscp_bytes(uint8_t dscp) const { return dscp_bytes_[dscp & 63]; }
  uint64_t source_frames(uint8_t last_octet) const { return source_frames_[last_octet]; }
  uint64_t not_roce() const { return not_roce_; }
  uint64_t alloc_failures() const { return alloc_failures_; }
  const CreditPort& credit() const { return fc_; }

 private:
  rte_mempool* pool_;
  CreditPort fc_;
  wire::MacAddr mac_;
  uint64_t frames_ = 0;
  uint64_t bytes_ = 0;
  uint64_t not_roce_ = 0;
  uint64_t alloc_failures_ = 0;
  std::array<uint64_t, 64> dscp_bytes_{};
  std::array<uint64_t, 256> source_frames_{};
};

// Senders on switch ports 0..S-1, sinks on ports S..S+K-1 (the config needs
// S+K ports; each sink's MAC is a static FDB entry). Links at each switch
// port's speed with `delay`. The switch sends its credit updates from the
// credit pool.
class CreditFabric {
 public:
  // `shard_map` (one entry per port): the switch sharded as sf-switch
  // --shard-map runs it, simulated by ShardedSwitchNode; empty: one shard.
  CreditFabric(sw::SwitchConfig cfg, const std::vector<CreditSenderConfig>& senders,
               const std::vector<wire::MacAddr>& sink_macs, uint64_t seed, TimeNs delay,
               std::vector<uint16_t> shard_map = {});
  CreditFabric(const CreditFabric&) = delete;
  CreditFabric& operator=(const CreditFabric&) = delete;

  sim::Simulator& sim() { return *sim_; }
  // One shard: the switch. Sharded: shard 0 (use owner() / counters()).
  const sw::SwitchNode& sw() const { return sharded_->shard(0); }
  const sw::ShardedSwitch& sharded() const { return *sharded_; }
  // The shard that owns port p (its counters of p are the port's own
  // credit state; packet counters: counters()).
  const sw::SwitchNode& owner(PortId p) const { return sharded_->owner(p); }
  sw::PortCounters counters(PortId p) const { return sharded_->counters(p); }
  const sw::SwitchConfig& cfg() const { return cfg_; }
  CreditRoceSender& sender(size_t i) { return *senders_[i]; }
  const CreditRoceSender& sender(size_t i) const { return *senders_[i]; }
  size_t num_senders() const { return senders_.size(); }
  CreditRoceSink& sink(size_t i) { return *sinks_[i]; }
  const CreditRoceSink& sink(size_t i) const { return *sinks_[i]; }
  uint16_t sink_port(size_t i) const { return static_cast<uint16_t>(senders_.size() + i); }

  uint64_t sent_frames() const;
  uint64_t delivered_frames() const;
  uint64_t switch_drops() const;
  uint64_t lost_on_links() const;     // link loss + down drops, both directions
  // Packets sent without a credit (switch, senders) or arriving beyond the
  // advertised credit (switch, sinks): must stay 0.
  uint64_t overruns() const;
  bool finished() const;              // every sender done and every frame delivered
  // Runs in `step`s until finished() or `limit`; returns the end time.
  TimeNs run(TimeNs step, TimeNs limit);

 private:
  sw::SwitchConfig cfg_;
  std::vector<std::array<uint8_t, 6>> macs_;
  std::unique_ptr<sw::ShardedSwitch> sharded_;  // one shard: the plain SwitchNode
  std::unique_ptr<sw::ShardedSwitchNode> sharded_node_;  // more than one shard
  std::vector<std::unique_ptr<CreditRoceSink>> sinks_;
  std::vector<std::unique_ptr<CreditRoceSender>> senders_;
  std::vector<sim::LinkId> links_;
  std::unique_ptr<sim::Simulator> sim_;  // last: destroyed first (it frees frames in flight)
};

}  // namespace sf::scenario
