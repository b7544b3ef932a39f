// Test nodes for the simulator tests and benchmark: a frame generator, a sink
// that records arrivals, an echo node and a timer node. Each obeys the Node
// contract (no clock, no allocation per packet beyond what a test records).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "common/node.h"

namespace sf::sim::test {

// Allocates a frame of `len` bytes from `pool` whose bytes are (seq + i) & 0xFF.
inline rte_mbuf* make_frame(rte_mempool* pool, uint32_t len, uint32_t seq) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) return nullptr;
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(len)));
  for (uint32_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>(seq + i);
  return m;
}

// One port; emits `count` frames of `len` bytes as fast as the wire allows,
// starting at `start` (a wakeup). Frames from port 0; receives are freed.
class GeneratorNode : public Node {
 public:
  GeneratorNode(rte_mempool* pool, uint32_t count, uint32_t len, TimeNs start = TimeNs(0))
      : pool_(pool), count_(count), len_(len), start_(start) {}
  uint16_t num_ports() const override { return 1; }
  void receive(PortId, std::span<rte_mbuf*> pkts, TimeNs) override {
    for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
  }
  uint16_t transmit(PortId, std::span<rte_mbuf*> out, TimeNs now) override {
    if (sent_ >= count_ || now < start_ || out.empty()) return 0;
    out[0] = make_frame(pool_, len_, sent_);
    if (out[0] == nullptr) return 0;
    tx_times.push_back(now);
    ++sent_;
    return 1;
  }
  TimeNs next_wakeup(TimeNs now) const override { return now < start_ ? start_ : TimeNs::max(); }
  void advance(TimeNs) override {}

  std::vector<TimeNs> tx_times;

 private:
  rte_mempool* pool_;
  uint32_t count_;
  uint32_t len_;
  TimeNs start_;
  uint32_t sent_ = 0;
};

// One port; records the arrival time, length and bytes of every frame.
class SinkNode : public Node {
 public:
  struct Arrival {
    TimeNs at;
    std::vector<uint8_t> bytes;
  };
  uint16_t num_ports() const override { return 1; }
  void receive(PortId, std::span<rte_mbuf*> pkts, TimeNs now) override {
    for (rte_mbuf* m : pkts) {
      Arrival a{now, std::vector<uint8_t>(m->pkt_len)};
      const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, a.bytes.data());
      if (p != nullptr && p != a.bytes.data()) std::memcpy(a.bytes.data(), p, m->pkt_len);
      arrivals.push_back(std::move(a));
      rte_pktmbuf_free(m);
    }
  }
  uint16_t transmit(PortId, std::span<rte_mbuf*>, TimeNs) override { return 0; }
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}

  std::vector<Arrival> arrivals;
};

// Any number of ports; sends every received frame back out of the port it
// came in on (fixed FIFO ring per port, no allocation after construction).
// Counts receptions.
class EchoNode : public Node {
 public:
  static constexpr uint32_t kRing = 1024;
  explicit EchoNode(uint16_t ports = 1) : queues_(ports) {}
  uint16_t num_ports() const override { return static_cast<uint16_t>(queues_.size()); }
  void receive(PortId port, std::span<rte_mbuf*> pkts, TimeNs) override {
    for (rte_mbuf* m : pkts) inject(port, m);
    received += pkts.size();
  }
  uint16_t transmit(PortId port, std::span<rte_mbuf*> out, TimeNs) override {
    Ring& q = queues_[port];
    if (q.count == 0 || out.empty()) return 0;
    out[0] = q.slots[q.head];
    q.head = (q.head + 1) % kRing;
    --q.count;
    return 1;
  }
  TimeNs next_wakeup(TimeNs) const override { return TimeNs::max(); }
  void advance(TimeNs) override {}
  // Queues a frame to send (e.g. the first ping); frees it when full.
  void inject(PortId port, rte_mbuf* m) {
    Ring& q = queues_[port];
    if (q.count == kRing) {
      rte_pktmbuf_free(m);
      return;
    }
    q.slots[(q.head + q.count++) % kRing] = m;
  }
  ~EchoNode() override {
    for (Ring& q : queues_) {
      for (; q.count > 0; --q.count, q.head = (q.head + 1) % kRing) rte_pktmbuf_free(q.slots[q.head]);
    }
  }

  uint64_t received = 0;

 private:
  struct Ring {
    std::vector<rte_mbuf*> slots = std::vector<rte_mbuf*>(kRing);
    uint32_t head = 0;
    uint32_t count = 0;
  };
  std::vector<Ring> queues_;
};

// No traffic; asks to be woken at each of `deadlines` (ascending) and records
// the times advance() ran.
class TimerNode : public Node {
 public:
  explicit TimerNode(std::vector<TimeNs> deadlines) : deadlines_(std::move(deadlines)) {}
  uint16_t num_ports() const override { return 1; }
  void receive(PortId, std::span<rte_mbuf*> pkts, TimeNs) override {
    for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
  }
  uint16_t transmit(PortId, std::span<rte_mbuf*>, TimeNs) override { return 0; }
  TimeNs next_wakeup(TimeNs) const override {
    return next_ < deadlines_.size() ? deadlines_[next_] : TimeNs::max();
  }
  void advance(TimeNs now) override {
    advanced_at.push_back(now);
    while (next_ < deadlines_.size() && deadlines_[next_] <= now) ++next_;
  }

  std::vector<TimeNs> advanced_at;

 private:
  std::vector<TimeNs> deadlines_;
  size_t next_ = 0;
};

}  // namespace sf::sim::test
