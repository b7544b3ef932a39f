// Port state of a switch (docs/switch.md "Port state"): admin status (PORT
// admin_status, telemetry), link status (the driver: memif peer connected,
// NIC link; the simulator's link events), and the fault knobs blackhole and
// random loss. A port is operationally up when admin up AND link up; only
// then does it take part in flooding and ECMP and transmit.
//
// PortStates is shared by the shards of a sharded switch (as the FDB is):
// the shard that owns a port writes its state on its own lcore (set_*),
// every shard reads it on the packet path (relaxed loads of one byte), and
// the control plane reads it for telemetry. Requests from other threads
// (telemetry commands, the app's link poller) go through request_*(): they
// are absolute values, picked up by the owning shard's advance() (its
// next_wakeup() says "now" while a request is new), so applying one twice is
// harmless and the latest value wins.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

#include "common/node.h"

namespace sf::sw {

enum PortStateBit : uint8_t {
  kPortAdminUp = 1,
  kPortLinkUp = 2,
  kPortBlackhole = 4,
  kPortLossy = 8,
};
inline constexpr uint8_t kPortPlainUp = kPortAdminUp | kPortLinkUp;  // up, no fault knob

class PortStates {
 public:
  explicit PortStates(size_t ports) : n_(ports), st_(std::make_unique<State[]>(ports)) {}

  size_t size() const { return n_; }
  // Ports that are not plainly up (down, blackholed or lossy): 0 is the fast path.
  uint32_t faulty() const { return faulty_.load(std::memory_order_relaxed); }
  uint8_t bits(PortId p) const { return st_[p].bits.load(std::memory_order_relaxed); }
  bool oper_up(PortId p) const { return (bits(p) & kPortPlainUp) == kPortPlainUp; }
  double loss(PortId p) const { return std::bit_cast<double>(st_[p].loss.load(std::memory_order_relaxed)); }

  // ---- the owning shard only
  void set_bits(PortId p, uint8_t b) {
    const uint8_t old = bits(p);
    if (old == b) return;
    st_[p].bits.store(b, std::memory_order_relaxed);
    if ((old == kPortPlainUp) != (b == kPortPlainUp)) {
      if (b == kPortPlainUp) {
        faulty_.fetch_sub(1, std::memory_order_relaxed);
      } else {
        faulty_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  void set_loss(PortId p, double rate) { st_[p].loss.store(std::bit_cast<uint64_t>(rate), std::memory_order_relaxed); }

  // ---- requests, any thread
  enum class Field : uint8_t { kAdmin, kLink, kBlackhole };
  void request(PortId p, Field f, bool on) {
    std::atomic<uint8_t>& w = f == Field::kAdmin ? st_[p].want_admin : f == Field::kLink ? st_[p].want_link : st_[p].want_blackhole;
    w.store(on ? kWantOn : kWantOff, std::memory_order_relaxed);
    seq_.fetch_add(1, std::memory_order_release);
  }
  void request_loss(PortId p, double rate) {
    st_[p].want_loss.store(std::bit_cast<uint64_t>(rate), std::memory_order_relaxed);
    seq_.fetch_add(1, std::memory_order_release);
  }
  // A reset (reboot) of the whole switch; each shard resets what it owns.
  void request_reset() { reset_seq_.fetch_add(1, std::memory_order_relaxed), seq_.fetch_add(1, std::memory_order_release); }
  uint64_t seq() const { return seq_.load(std::memory_order_acquire); }
  uint64_t reset_seq() const { return reset_seq_.load(std::memory_order_relaxed); }
  // The requested value of a field: -1 none, 0 off, 1 on.
  int wanted(PortId p, Field f) const {
    const std::atomic<uint8_t>& w =
        f == Field::kAdmin ? st_[p].want_admin : f == Field::kLink ? st_[p].want_link : st_[p].want_blackhole;
    const uint8_t v = w.load(std::memory_order_relaxed);
    return v == kWantNone ? -1 : v == kWantOn ? 1 : 0;
  }
  // The requested loss rate, or < 0 when none.
  double wanted_loss(PortId p) const { return std::bit_cast<double>(st_[p].want_loss.load(std::memory_order_relaxed)); }

 private:
  static constexpr uint8_t kWantNone = 0, kWantOff = 1, kWantOn = 2;
  struct State {
    std::atomic<uint8_t> bits{kPortPlainUp};
    std::atomic<uint64_t> loss{std::bit_cast<uint64_t>(0.0)};
    std::atomic<uint8_t> want_admin{kWantNone};
    std::atomic<uint8_t> want_link{kWantNone};
    std::atomic<uint8_t> want_blackhole{kWantNone};
    std::atomic<uint64_t> want_loss{std::bit_cast<uint64_t>(-1.0)};
  };
  size_t n_;
  std::unique_ptr<State[]> st_;
  std::atomic<uint32_t> faulty_{0};
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> reset_seq_{0};
};

}  // namespace sf::sw
