// PollLoop: the real-time driver (DESIGN.md section 1, STYLE G3/G5/G6). Runs
// sf::Node objects over PacketIo ports on one lcore:
//   now = clock.now()                       once per iteration
//   rx_burst per port -> node.receive(port, pkts, now)
//   node.advance(now) when now >= node.next_wakeup(now)
//   per port: flush the tx retry buffer; if empty and the shaper has credit,
//             node.transmit(port, out[:allowance], now) -> tx_burst; unsent
//             packets stay in the retry buffer (never silently dropped)
//   idle back-off (optional) when nothing happened: spin/pause/doubling
//   sleeps, or sleep until just before the next due time (until_due).
// Templated on the io and the clock so tests run it with an in-memory io and a
// ManualClock. No allocation after setup: ports and nodes live in fixed arrays.
// Threading: one PollLoop belongs to one lcore; counters are read by others
// only after run() returned (or racily, as plain monotonic uint64_t).
#pragma once

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <ctime>
#include <span>

#include "common/dpdk/clock.h"
#include "common/dpdk/idle_backoff.h"
#include "common/dpdk/packet_io.h"
#include "common/dpdk/result.h"
#include "common/dpdk/shaper.h"
#include "common/node.h"
#include "common/time.h"

namespace sf::dpdk {

// Per-port options of the loop (not of the device).
struct LoopPortOptions {
  BitRate rate{0};                   // line rate; 0 = unshaped
  uint64_t burst_bytes = 0;          // shaper bucket; 0 = Shaper::default_burst_bytes(rate)
  TimeNs tx_stall_drop = TimeNs::max();  // drop the retry buffer after the io refused it this long
  bool rx = true;                    // poll rx (false: tx-only port, e.g. a generator on net_null)
};

// Counters per port, written by the loop's lcore only.
struct LoopPortCounters {
  uint64_t rx_pkts = 0;
  uint64_t rx_bytes = 0;         // mbuf pkt_len
  uint64_t rx_segs = 0;          // mbufs of the received packets (nb_segs): rx_pkts when none is chained
  uint64_t tx_pkts = 0;          // accepted by the io
  uint64_t tx_bytes = 0;         // pkt_len of accepted packets
  uint64_t tx_wire_bytes = 0;    // wire_bytes() charged to the shaper
  uint64_t tx_retries = 0;       // tx_burst calls that left packets in the retry buffer
  uint64_t tx_drops_stalled = 0;  // dropped: io refused them for tx_stall_drop
  uint64_t tx_drops_at_stop = 0;  // dropped: still buffered when the loop was released
  TimeNs shaper_held = TimeNs::zero();  // time the shaper withheld transmit
  TimeNs first_tx = TimeNs::max();      // `now` of the first / last accepted burst
  TimeNs last_tx = TimeNs::zero();
  uint64_t tx_drops() const { return tx_drops_stalled + tx_drops_at_stop; }
};

struct LoopOptions {
  IdleBackoffOptions backoff{};
  uint32_t stop_check_interval = 64;  // iterations between stop-predicate checks in run()
  // Packets per rx burst and most packets offered per port per iteration:
  // 1..kMaxBurst (the loop uses the nearest; callers refuse other values).
  uint16_t burst = kDefaultBurst;
  // Count bytes per port (rx_bytes, rx_segs, tx_bytes, tx_wire_bytes): one
  // read of every packet's length on receive and on transmit. Off for a node
  // that counts its own (sf-switch's port counters): those four stay 0, and
  // a shaped port still reads each length to charge its shaper.
  bool byte_counters = true;
};

template <PacketIo Io, Clock C>
class PollLoop {
 public:
  static constexpr size_t kMaxPorts = 16;
  static constexpr size_t kMaxNodes = 8;
  static constexpr uint16_t kTxBufferPkts = kMaxBurst;
  static constexpr TimeNs kMinSleep = TimeNs::from_us(60);  // > Linux default timer slack (50 us)

  explicit PollLoop(C& clock, const LoopOptions& opts = {}) : clock_(clock), opts_(opts), backoff_(opts.backoff) {
    opts_.burst = std::clamp<uint16_t>(opts_.burst, 1, kMaxBurst);
  }
  PollLoop(const PollLoop&) = delete;
  PollLoop& operator=(const PollLoop&) = delete;
  ~PollLoop() { release(); }

  // Setup (before run): io carries packets of `node`'s port `node_port`.
  // Returns the loop port index (the order of calls).
  Result<size_t> add_port(Io& io, Node& node, PortId node_port, const LoopPortOptions& o = {}) {
    if (n_ports_ == kMaxPorts) return Error{"poll loop: more than kMaxPorts ports"};
    if (node_port >= node.num_ports()) return Error{"poll loop: node has no port " + std::to_string(node_port)};
    size_t ni = 0;
    while (ni < n_nodes_ && nodes_[ni] != &node) ++ni;
    if (ni == n_nodes_) {
      if (n_nodes_ == kMaxNodes) return Error{"poll loop: more than kMaxNodes nodes"};
      nodes_[n_nodes_++] = &node;
    }
    Binding& b = ports_[n_ports_];
    b = Binding{};
    b.io = &io;
    b.node = &node;
    b.node_port = node_port;
    b.stall_drop = o.tx_stall_drop;
    b.rx = o.rx;
    const uint64_t burst = o.burst_bytes != 0 ? o.burst_bytes : Shaper::default_burst_bytes(o.rate);
    b.shaper = o.rate.bps() == 0 ? Shaper() : Shaper(o.rate, burst, clock_.now());
    return n_ports_++;
  }

  // One iteration at clock.now(). Returns true when anything happened.
  bool poll_once() { return iterate(clock_.now()); }

  // Iterates until stop(now) is true (checked every stop_check_interval
  // iterations, and every iteration with no work), backing off when idle.
  template <typename StopPred>
  void run(StopPred&& stop) {
    uint32_t since_check = 0;
    for (;;) {
      const TimeNs now = clock_.now();
      const bool work = iterate(now);
      if (work) {
        backoff_.on_work();
        if (++since_check < opts_.stop_check_interval) continue;
      }
      since_check = 0;
      if (stop(now)) return;
      if (!work) idle(now);
    }
  }

  // Offers buffered tx packets to the io until empty or `timeout` of clock
  // time passed (control path, after run()). Returns packets still buffered.
  uint32_t drain(TimeNs timeout) {
    const TimeNs end = sat_add(clock_.now(), timeout);
    for (;;) {
      uint32_t left = 0;
      const TimeNs now = clock_.now();
      for (size_t i = 0; i < n_ports_; ++i) left += flush(ports_[i], now);
      if (left == 0 || now >= end) return left;
      rte_pause();
    }
  }

  // Frees whatever is still buffered, counted as tx_drops_at_stop.
  void release() {
    for (size_t i = 0; i < n_ports_; ++i) {
      Binding& b = ports_[i];
      if (b.pending > 0) {
        rte_pktmbuf_free_bulk(b.tx_buf.data(), b.pending);
        b.counters.tx_drops_at_stop += b.pending;
        b.pending = 0;
        b.pending_bytes = 0;
      }
    }
  }

  size_t num_ports() const { return n_ports_; }
  const LoopPortCounters& counters(size_t i) const { return ports_[i].counters; }
  uint16_t tx_buffered(size_t i) const { return ports_[i].pending; }
  const Shaper& shaper(size_t i) const { return ports_[i].shaper; }
  uint64_t iterations() const { return iterations_; }
  uint64_t idle_sleeps() const { return idle_sleeps_; }  // until_due sleeps
  TimeNs earliest_wakeup() const { return earliest_wakeup_; }
  TimeNs shaper_wakeup() const { return shaper_wakeup_; }

 private:
  struct Binding {
    Io* io = nullptr;
    Node* node = nullptr;
    PortId node_port = 0;
    Shaper shaper{};
    uint32_t est_wire_bytes = wire_bytes(0);  // size of the last packet sent: allowance estimate
    uint16_t pending = 0;                     // packets in tx_buf[0..pending)
    uint64_t pending_bytes = 0;               // their pkt_len summed
    TimeNs pending_since = TimeNs::zero();
    TimeNs stall_drop = TimeNs::max();
    bool rx = true;
    TimeNs last_now = TimeNs::zero();
    LoopPortCounters counters{};
    std::array<rte_mbuf*, kTxBufferPkts> tx_buf{};
  };

  bool iterate(TimeNs now) {
    // One lcore owns the loop (STYLE G7); checked in debug builds.
    if (owner_lcore_ == LCORE_ID_ANY) owner_lcore_ = rte_lcore_id();
    assert(owner_lcore_ == rte_lcore_id());
    ++iterations_;
    bool work = false;
    std::array<rte_mbuf*, kMaxBurst> burst;
    // RX.
    for (size_t i = 0; i < n_ports_; ++i) {
      Binding& b = ports_[i];
      if (!b.rx) continue;
      const uint16_t n = b.io->rx_burst(std::span<rte_mbuf*>(burst.data(), opts_.burst));
      if (n == 0) continue;
      work = true;
      b.counters.rx_pkts += n;
      if (opts_.byte_counters) {
        uint64_t bytes = 0;
        uint64_t segs = 0;
        for (uint16_t k = 0; k < n; ++k) {
          bytes += rte_pktmbuf_pkt_len(burst[k]);
          segs += burst[k]->nb_segs;  // same cache line as pkt_len
        }
        b.counters.rx_bytes += bytes;
        b.counters.rx_segs += segs;
      }
      b.node->receive(b.node_port, std::span<rte_mbuf*>(burst.data(), n), now);
    }
    // Timers.
    earliest_wakeup_ = TimeNs::max();
    for (size_t i = 0; i < n_nodes_; ++i) {
      TimeNs w = nodes_[i]->next_wakeup(now);
      if (now >= w) {
        nodes_[i]->advance(now);
        work = true;
        w = nodes_[i]->next_wakeup(now);
      }
      earliest_wakeup_ = std::min(earliest_wakeup_, w);
    }
    // TX.
    shaper_wakeup_ = TimeNs::max();
    for (size_t i = 0; i < n_ports_; ++i) work |= transmit(ports_[i], now);
    return work;
  }

  // Returns true when packets moved.
  bool transmit(Binding& b, TimeNs now) {
    const TimeNs dt = now > b.last_now ? now - b.last_now : TimeNs::zero();
    b.last_now = now;
    bool work = false;
    if (b.pending > 0) {
      const uint16_t before = b.pending;
      flush(b, now);
      work = b.pending != before;
      if (b.pending > 0) {
        if (now - b.pending_since >= b.stall_drop) {
          rte_pktmbuf_free_bulk(b.tx_buf.data(), b.pending);
          b.counters.tx_drops_stalled += b.pending;
          b.pending = 0;
          b.pending_bytes = 0;
        }
        return work;  // back-pressure: do not ask the node while the io is full
      }
    }
    b.shaper.refill(now);
    const uint16_t allow = b.shaper.allowance(b.est_wire_bytes, opts_.burst);
    if (allow == 0) {
      b.counters.shaper_held += dt;
      shaper_wakeup_ = std::min(shaper_wakeup_, now + b.shaper.time_until(b.est_wire_bytes));
      return work;
    }
    const uint16_t got = b.node->transmit(b.node_port, std::span<rte_mbuf*>(b.tx_buf.data(), allow), now);
    if (got == 0) return work;
    // One pass over the packets: the shaper's wire bytes and the bytes
    // flush() counts when they all go (none without byte counters on an
    // unshaped port).
    uint64_t bytes = 0;
    if (opts_.byte_counters || !b.shaper.unlimited()) {
      uint64_t wire = 0;
      uint32_t len = 0;
      for (uint16_t k = 0; k < got; ++k) {
        len = rte_pktmbuf_pkt_len(b.tx_buf[k]);
        bytes += len;
        wire += wire_bytes(len);
      }
      b.shaper.charge(wire);
      b.est_wire_bytes = wire_bytes(len);
      if (opts_.byte_counters) {
        b.counters.tx_wire_bytes += wire;
      } else {
        bytes = 0;
      }
    }
    b.pending = got;
    b.pending_bytes = bytes;
    b.pending_since = now;
    flush(b, now);
    return true;
  }

  // Offers the retry buffer to the io; keeps the unsent tail. Returns pending.
  uint16_t flush(Binding& b, TimeNs now) {
    if (b.pending == 0) return 0;
    const uint16_t sent = b.io->tx_burst(std::span<rte_mbuf*>(b.tx_buf.data(), b.pending));
    if (sent > 0) {
      uint64_t bytes = b.pending_bytes;  // all sent: known
      if (sent < b.pending && opts_.byte_counters) {
        bytes = 0;
        for (uint16_t k = 0; k < sent; ++k) bytes += rte_pktmbuf_pkt_len(b.tx_buf[k]);
      }
      b.pending_bytes -= bytes;
      b.counters.tx_pkts += sent;
      b.counters.tx_bytes += bytes;
      if (b.counters.first_tx == TimeNs::max()) b.counters.first_tx = now;
      b.counters.last_tx = now;
      std::copy(b.tx_buf.begin() + sent, b.tx_buf.begin() + b.pending, b.tx_buf.begin());
      b.pending = static_cast<uint16_t>(b.pending - sent);
      b.pending_since = now;
    }
    if (b.pending > 0) ++b.counters.tx_retries;
    return b.pending;
  }

  void idle(TimeNs now) {
    if (opts_.backoff.until_due) {
      // Sleep until just before the earliest node timer or held port's next
      // send, then spin to it (the thread's timer slack should be low:
      // prctl(PR_SET_TIMERSLACK) or a real-time policy).
      const TimeNs d = until_due_sleep(now, std::min(earliest_wakeup_, shaper_wakeup_), opts_.backoff);
      if (d > TimeNs::zero()) {
        timespec ts{static_cast<time_t>(d.ns() / 1000000000), static_cast<long>(d.ns() % 1000000000)};
        nanosleep(&ts, nullptr);
        ++idle_sleeps_;
      }
      return;
    }
    switch (backoff_.on_idle()) {
      case IdleAction::kSpin:
        return;
      case IdleAction::kPause:
        rte_pause();
        return;
      case IdleAction::kSleep: {
        // Never sleep past a node's timer or a held port's next send time
        // (a shaped port must not lose credit to oversleeping). Shorter
        // waits than kMinSleep (timer slack) just pause. A sleep here is the
        // real-time driver yielding a shared core; node logic never sleeps.
        TimeNs d = backoff_.sleep_time();
        const TimeNs due = std::min(earliest_wakeup_, shaper_wakeup_);
        if (due != TimeNs::max()) d = std::min(d, due - now);
        if (d < kMinSleep) {
          rte_pause();
          return;
        }
        timespec ts{static_cast<time_t>(d.ns() / 1000000000), static_cast<long>(d.ns() % 1000000000)};
        nanosleep(&ts, nullptr);
        return;
      }
    }
  }

  C& clock_;
  LoopOptions opts_;
  IdleBackoff backoff_;
  std::array<Binding, kMaxPorts> ports_{};
  size_t n_ports_ = 0;
  std::array<Node*, kMaxNodes> nodes_{};
  size_t n_nodes_ = 0;
  uint64_t iterations_ = 0;
  uint64_t idle_sleeps_ = 0;
  unsigned owner_lcore_ = LCORE_ID_ANY;
  TimeNs earliest_wakeup_ = TimeNs::max();
  TimeNs shaper_wakeup_ = TimeNs::max();  // earliest time a held port may send again
};

}  // namespace sf::dpdk
