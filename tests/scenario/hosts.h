// Traffic hosts for the virtual-time scenarios (tests/scenario): a RoCEv2-like
// sender and a counting sink, each a one-port sf::Node. No clock, no sleeping;
// the sender allocates one mbuf per frame from the pool it is given (the sim
// or the switch frees it), the sink only records what tests read.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/node.h"
#include "common/pfc/pfc_receiver.h"
#include "common/time.h"
#include "common/wire/frame_builder.h"

namespace sf::scenario {

// Eth + IPv4 + UDP + BTH + RETH, and the ICRC: a WRITE_ONLY frame is this
// plus its payload (payload a multiple of 4, so no pad).
inline constexpr uint32_t kRoceWriteOverheadBytes = 14 + 20 + 8 + 12 + 16 + 4;

struct SenderConfig {
  wire::MacAddr src_mac;
  wire::MacAddr dst_mac;
  wire::Ipv4Addr src_ip;
  wire::Ipv4Addr dst_ip;
  uint8_t dscp = 26;              // RoCE lossless class of the seed configs
  wire::Ecn ecn = wire::Ecn::kEct0;
  uint16_t udp_src_port = 0xC000;  // entropy
  uint32_t dest_qp = 0x100;
  uint32_t frame_bytes = 1098;    // mbuf pkt_len (no FCS); kRoceWriteOverheadBytes + 4k
  BitRate rate = BitRate::gbps(100);  // pacing rate; the link caps it anyway
  uint64_t budget_bytes = 0;      // frame bytes to send in all (whole frames)
  TimeNs start = TimeNs(0);
  // PFC: the NIC honours received PFC for `pfc_priority` (and 802.3x PAUSE),
  // timers at `link_speed` (0: `rate`). Off: frames are counted, not obeyed.
  bool honour_pfc = true;
  uint8_t pfc_priority = 3;
  BitRate link_speed{0};
  // Every other frame goes to this second destination (HOL-blocking scenarios).
  bool alternate = false;
  wire::MacAddr alt_dst_mac;
  wire::Ipv4Addr alt_dst_ip;
};

// Emits RC WRITE_ONLY frames (UDP 4791, PSN +1 per frame, RETH VA advancing)
// at most at `rate`: after a frame leaves at t, the next may leave at
// t + rate.tx_time(wire_bytes(frame)) (next_wakeup), and never before the
// simulator says the wire is free. Stops after budget_bytes. Received PFC for
// its priority pauses it (common/pfc PfcReceiver), as a RoCE NIC does.
class RoceSender final : public Node {
 public:
  RoceSender(rte_mempool* pool, const SenderConfig& cfg);

  uint16_t num_ports() const override { return 1; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs now) const override;
  void advance(TimeNs) override {}

  bool done() const { return sent_bytes_ + cfg_.frame_bytes > cfg_.budget_bytes; }
  uint64_t sent_frames() const { return sent_frames_; }
  uint64_t sent_bytes() const { return sent_bytes_; }
  uint64_t alloc_failures() const { return alloc_failures_; }
  TimeNs last_tx() const { return last_tx_; }
  const SenderConfig& config() const { return cfg_; }
  const PfcReceiver& pfc_rx() const { return pfc_rx_; }
  uint64_t rx_pfc_frames() const { return rx_pfc_frames_; }

 private:
  rte_mempool* pool_;
  SenderConfig cfg_;
  PfcReceiver pfc_rx_;
  uint64_t rx_pfc_frames_ = 0;
  wire::RoceFrameSpec spec_;
  wire::RoceFrameSpec alt_spec_;
  std::vector<uint8_t> payload_;
  TimeNs gap_;
  TimeNs next_tx_;
  TimeNs last_tx_;
  uint32_t psn_ = 0;
  uint64_t sent_frames_ = 0;
  uint64_t sent_bytes_ = 0;
  uint64_t alloc_failures_ = 0;
};

// Counts every arriving frame: frames, bytes, wire bytes, CE-marked frames,
// bytes per DSCP, and (optionally) each arrival. Frees every mbuf.
class RoceSink final : public Node {
 public:
  struct Arrival {
    TimeNs at;
    uint32_t bytes;
    uint8_t dscp;
    bool ce;
    uint8_t src_last_octet = 0;  // IPv4 source
    uint32_t psn = 0;            // BTH PSN (RoCE frames, trimmed ones too)
  };

  explicit RoceSink(bool record_arrivals = false) : record_(record_arrivals) {}

  // A NIC that pauses forever: from `start` it sends PFC XOFF (0xFFFF quanta)
  // for `prio_mask` every `period` (frames from `pool`), until `stop`.
  void set_storm(rte_mempool* pool, wire::MacAddr mac, uint8_t prio_mask, TimeNs start, TimeNs period,
                 TimeNs stop = TimeNs::max());

  uint16_t num_ports() const override { return 1; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs) const override;
  void advance(TimeNs) override {}
  uint64_t storm_frames() const { return storm_frames_; }
  uint64_t dscp_frames(uint8_t dscp) const { return dscp_frames_[dscp & 63]; }

  uint64_t frames() const { return frames_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t wire_bytes_total() const { return wire_bytes_; }
  uint64_t ce_frames() const { return ce_frames_; }
  uint64_t not_ip() const { return not_ip_; }
  uint64_t dscp_bytes(uint8_t dscp) const { return dscp_bytes_[dscp & 63]; }
  // Bytes from IPv4 sources whose address ends in `last_octet` (the senders
  // of a scenario differ in the last octet).
  uint64_t source_bytes(uint8_t last_octet) const { return source_bytes_[last_octet]; }
  // Order-sensitive hash of which arrivals (by index) were CE: equal exactly
  // when the same frames were marked.
  uint64_t ce_pattern_hash() const { return ce_hash_; }
  TimeNs first_arrival() const { return first_; }
  TimeNs last_arrival() const { return last_; }
  const std::vector<Arrival>& arrivals() const { return arrivals_; }

 private:
  bool record_;
  uint64_t frames_ = 0;
  uint64_t bytes_ = 0;
  uint64_t wire_bytes_ = 0;
  uint64_t ce_frames_ = 0;
  uint64_t not_ip_ = 0;
  uint64_t ce_hash_ = 0xCBF29CE484222325ull;
  std::array<uint64_t, 64> dscp_bytes_{};
  std::array<uint64_t, 64> dscp_frames_{};
  rte_mempool* storm_pool_ = nullptr;
  wire::MacAddr storm_mac_;
  uint8_t storm_prios_ = 0;
  TimeNs storm_next_ = TimeNs::max();
  TimeNs storm_period_;
  TimeNs storm_stop_ = TimeNs::max();
  uint64_t storm_frames_ = 0;
  std::array<uint64_t, 256> source_bytes_{};
  TimeNs first_ = TimeNs::max();
  TimeNs last_ = TimeNs(0);
  std::vector<Arrival> arrivals_;
};

}  // namespace sf::scenario
