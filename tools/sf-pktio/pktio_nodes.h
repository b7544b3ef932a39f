// Nodes of sf-pktio, the packet I/O smoke tool: generator, sink (verifies the
// generator's sequence numbers and payload, multi-segment aware), forwarder
// and echo. They follow the Node contract: no clock, no ethdev, no sleep, no
// heap allocation per packet (mbufs come from a mempool set up before run).
//
// Frame format (STYLE G9: named offsets): Ethernet (14 B, ethertype 0x88B5,
// IEEE local experimental) | magic u32 | seq u64 | frame_len u32 | sum u32 |
// payload, byte i = uint8(seq + i); sum = 32-bit sum of the payload bytes.
// Integers are little-endian (host order on x86; the tool only talks to itself).
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <span>

#include "common/node.h"
#include "common/time.h"

namespace sf::pktio {

inline constexpr uint16_t kEtherType = 0x88B5;
inline constexpr uint32_t kMagic = 0x4B504653;  // "SFPK"
inline constexpr uint32_t kEthHdrBytes = 14;
inline constexpr uint32_t kOffMagic = kEthHdrBytes;
inline constexpr uint32_t kOffSeq = kOffMagic + 4;
inline constexpr uint32_t kOffLen = kOffSeq + 8;
inline constexpr uint32_t kOffSum = kOffLen + 4;
inline constexpr uint32_t kOffPayload = kOffSum + 4;  // 34
inline constexpr uint32_t kMinFrameBytes = 60;

// Writes a generator frame of `len` bytes (>= kMinFrameBytes) into `buf`.
void write_frame(uint8_t* buf, uint32_t len, uint64_t seq);

enum class FrameCheck : uint8_t { kOk, kForeign, kBadLength, kBadPayload };
// Verifies a (possibly multi-segment) mbuf; *seq receives the sequence number.
FrameCheck check_frame(const rte_mbuf* m, uint64_t* seq);

// Generates `count` frames (0 = unbounded) of `frame_bytes` on every port, in
// sequence per port. Frames larger than the mbuf data room are chained.
class GenNode : public Node {
 public:
  GenNode(uint16_t ports, rte_mempool* pool, uint32_t frame_bytes, uint64_t count);
  uint16_t num_ports() const override { return ports_; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}

  bool done() const;
  uint64_t generated() const;
  uint64_t alloc_failures() const { return alloc_failures_; }
  uint64_t rx_ignored() const { return rx_ignored_; }

 private:
  rte_mbuf* build(uint64_t seq);
  static constexpr uint16_t kMaxPorts = 2;
  uint16_t ports_;
  rte_mempool* pool_;
  uint32_t frame_bytes_;
  uint64_t count_;
  std::array<uint64_t, kMaxPorts> next_seq_{};
  uint64_t alloc_failures_ = 0;
  uint64_t rx_ignored_ = 0;
};

// Counts and verifies generator frames per port. Optionally also counts
// IPv4/UDP frames per flow, the flow being the UDP source port minus a base
// (the lab gives every flow its own source port): a fixed table, no allocation.
class SinkNode : public Node {
 public:
  static constexpr uint32_t kMaxFlows = 1024;
  struct FlowResult {
    uint64_t pkts = 0, bytes = 0;
    TimeNs first_rx = TimeNs::max(), last_rx = TimeNs::zero();
  };
  struct PortResult {
    uint64_t rx_pkts = 0, rx_bytes = 0, rx_wire_bytes = 0;
    uint64_t multi_seg = 0;       // frames that arrived as chained mbufs
    uint64_t max_segs = 0;
    uint64_t payload_errors = 0;  // bad magic-bearing frames (length, payload, sum)
    uint64_t foreign = 0;         // frames that are not ours
    uint64_t lost = 0;            // sequence gaps (sum of skipped numbers)
    uint64_t reordered = 0;       // seq below the expected one
    uint64_t next_seq = 0;
    TimeNs first_rx = TimeNs::max(), last_rx = TimeNs::zero();
  };
  // flow_sport_base: UDP source port of flow 0 (0 = no per-flow counters).
  explicit SinkNode(uint16_t ports, uint16_t flow_sport_base = 0) : ports_(ports), flow_base_(flow_sport_base) {}
  uint16_t num_ports() const override { return ports_; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId, std::span<rte_mbuf*>, TimeNs) override { return 0; }
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}

  const PortResult& result(PortId p) const { return res_[p]; }
  uint64_t total_rx() const;
  TimeNs last_rx() const;
  const FlowResult& flow(uint32_t i) const { return flows_[i]; }
  uint16_t flow_sport_base() const { return flow_base_; }
  uint64_t flow_other_pkts() const { return flow_other_; }

 private:
  void count_flow(const rte_mbuf* m, TimeNs now);
  static constexpr uint16_t kMaxPorts = 2;
  uint16_t ports_;
  uint16_t flow_base_;
  std::array<PortResult, kMaxPorts> res_{};
  std::array<FlowResult, kMaxFlows> flows_{};
  uint64_t flow_other_ = 0;  // frames outside the flow table (not IPv4/UDP, other ports)
};

// Forwards port 0 <-> port 1 (two ports) or back out of the same port (one
// port, `swap_macs` for echo). Per output port a fixed ring of mbufs; frames
// that do not fit are dropped and counted.
class FwdNode : public Node {
 public:
  static constexpr uint32_t kQueuePkts = 1024;  // power of two
  FwdNode(uint16_t ports, bool swap_macs) : ports_(ports), swap_(swap_macs) {}
  ~FwdNode() override;
  uint16_t num_ports() const override { return ports_; }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs now) override;
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs now) override;
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}

  uint64_t forwarded() const { return forwarded_; }
  uint64_t queue_drops() const { return drops_; }
  uint32_t queued() const;
  // Free slots of the queue toward `out` (a reader can stop polling at 0).
  uint32_t room(PortId out) const { return kQueuePkts - (q_[out].tail - q_[out].head); }

 private:
  struct Queue {
    std::array<rte_mbuf*, kQueuePkts> slots{};
    uint32_t head = 0, tail = 0;  // free-running; size = tail - head
  };
  static constexpr uint16_t kMaxPorts = 2;
  uint16_t ports_;
  bool swap_;
  std::array<Queue, kMaxPorts> q_{};
  uint64_t forwarded_ = 0;
  uint64_t drops_ = 0;
};

}  // namespace sf::pktio
