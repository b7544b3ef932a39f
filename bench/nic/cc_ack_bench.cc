// CPU cost of congestion control per ACK (issue 16: goal < 50 ns, so CC never
// limits the NIC). Each ACK-driven algorithm (Swift, BBR, HPCC with a 2-hop
// INT stack, NSCC) is fed the same hand-made trace through the
// CongestionControl variant, as a QP would: fill the AckEvent, cc_on_ack(),
// then read cc_window_bytes() and cc_rate(). The reference, in the same run,
// is what a QP pays per packet for DCQCN today: cc_on_tx_bytes() + cc_rate()
// (its per-packet byte counter), with the same AckEvent stores.
// The trace alternates calm and congested phases (RTT 8 / 60 us, ECN marks,
// queue in the INT records) so that every branch of every algorithm runs.
//
// Prints one JSON line per algorithm:
//   {"bench":"cc_ack","algo":"swift","value":..,"unit":"ns/ack","ref":..,"ratio":..,"fill_ns":..,"goal_ns":50}
// value and ref are each the fastest of `batches` batches, interleaved
// (noise only slows); fill_ns is the AckEvent / INT-record stores alone.
//
// usage: cc_ack_bench [--acks N] [--batches N]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "nic/cc/congestion_control.h"

namespace {

using sf::BitRate;
using sf::TimeNs;
using namespace sf::nic;

constexpr std::size_t kTrace = 4096;
constexpr int64_t kAckSpacingNs = 400;  // one 4 KiB ACK per 400 ns: ~80 Gb/s

struct Trace {
  std::vector<AckEvent> acks;
  std::vector<std::array<sf::wire::IntHop, 2>> hops;
  std::vector<uint64_t> port_tx;
};

sf::wire::IntHop hop(int64_t ts, uint64_t tx, uint64_t q, uint32_t mbps) {
  sf::wire::IntHop h;
  h.ts_ns.set(static_cast<uint32_t>(ts));
  h.tx_units.set(static_cast<uint32_t>(tx / sf::wire::IntHop::kTxUnitBytes));
  h.qlen_bytes.set(static_cast<uint32_t>(q));
  h.rate_mbps.set(mbps);
  return h;
}

Trace make_trace() {
  Trace t;
  t.acks.resize(kTrace);
  t.hops.resize(kTrace);
  t.port_tx.resize(kTrace);
  uint64_t tx = 0;
  for (std::size_t k = 0; k < kTrace; ++k) {
    const bool congested = (k / 512) % 2 == 1;
    tx += congested ? 5'000 : 3'000;
    t.port_tx[k] = tx;
    AckEvent& a = t.acks[k];
    a.acked_bytes = 4096;
    a.inflight_bytes = congested ? 400'000 : 60'000;
    a.rtt = TimeNs::from_us(congested ? 60 : 8);
    a.remote_delay = TimeNs::from_us(1);
    a.hops = 2;
    a.delivered_bytes = 64 * 4096;
    a.delivery_interval = TimeNs::from_us(congested ? 40 : 25);
    a.ecn_echo = congested && k % 3 == 0;
    a.int_hops = t.hops[k];
  }
  return t;
}

volatile uint64_t g_sink = 0;

struct Options {
  uint64_t acks = 200'000;
  uint32_t batches = 25;
};

// ns per event of the fastest of o.batches batches; `i` is the running ACK
// index of the controller (its virtual time), kept across calls.
template <class Fn>
double best_ns(const Options& o, int64_t& i, Fn&& per_ack) {
  double best = 1e30;
  for (uint32_t b = 0; b < o.batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t n = 0; n < o.acks; ++n, ++i) per_ack(i);
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(o.acks));
  }
  return best;
}

// The per-ACK stores a QP makes (sequence numbers, this ACK's INT records).
inline AckEvent& fill(Trace& t, int64_t i) {
  const std::size_t k = static_cast<std::size_t>(i) % kTrace;
  AckEvent& a = t.acks[k];
  a.ack_seq = static_cast<uint64_t>(i) * 4096;
  a.snd_nxt = a.ack_seq + 64 * 4096;
  const int64_t now = i * kAckSpacingNs;
  const uint64_t tx = static_cast<uint64_t>(i / static_cast<int64_t>(kTrace)) * t.port_tx[kTrace - 1] + t.port_tx[k];
  const bool congested = (k / 512) % 2 == 1;
  t.hops[k][0] = hop(now, tx, congested ? 300'000 : 0, 100'000);
  t.hops[k][1] = hop(now, tx / 2, 0, 400'000);
  return a;
}

[[noreturn]] void usage(const char* what) {
  std::fprintf(stderr, "cc_ack_bench: %s\nusage: cc_ack_bench [--acks N] [--batches N]\n", what);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view f = argv[i];
    if (i + 1 >= argc) usage("a flag needs a value");
    char* end = nullptr;
    const unsigned long long v = std::strtoull(argv[++i], &end, 10);
    if (end == argv[i] || *end != '\0' || v == 0 || v > 1'000'000'000ull) usage("expected a positive integer");
    if (f == "--acks") {
      o.acks = v;
    } else if (f == "--batches") {
      o.batches = static_cast<uint32_t>(v);
    } else {
      usage("unknown flag");
    }
  }
  const BitRate line = BitRate::gbps(100);
  Trace t = make_trace();

  // Batches interleaved (ref, fill, swift, bbr, hpcc, nscc, ref, ...) so that
  // all see the same machine; the fastest batch of each counts.
  constexpr std::array<const char*, 4> kNames{"swift", "bbr", "hpcc", "nscc"};
  CongestionControl ref_cc = make_congestion_control(CcChoice{CcAlgorithm::kDcqcn}, line);
  std::array<CongestionControl, kNames.size()> ccs{
      make_congestion_control(*cc_choice_from_string(kNames[0], CcEvents::kAckDriven), line),
      make_congestion_control(*cc_choice_from_string(kNames[1], CcEvents::kAckDriven), line),
      make_congestion_control(*cc_choice_from_string(kNames[2], CcEvents::kAckDriven), line),
      make_congestion_control(*cc_choice_from_string(kNames[3], CcEvents::kAckDriven), line)};
  double ref = 1e30, fill_ns = 1e30;
  std::array<double, kNames.size()> best{};
  best.fill(1e30);
  std::array<int64_t, kNames.size() + 2> next{};  // each controller's own ACK count (time never goes back)
  const Options one{o.acks, 1};
  for (uint32_t b = 0; b < o.batches; ++b) {
    ref = std::min(ref, best_ns(one, next[0], [&](int64_t i) {
      const AckEvent& a = fill(t, i);
      cc_on_tx_bytes(ref_cc, a.acked_bytes, TimeNs(i * kAckSpacingNs));
      g_sink = g_sink + cc_rate(ref_cc).bps();
    }));
    fill_ns = std::min(fill_ns, best_ns(one, next[1], [&](int64_t i) {
      const AckEvent& a = fill(t, i);
      g_sink = g_sink + a.ack_seq;
    }));
    for (std::size_t k = 0; k < kNames.size(); ++k) {
      CongestionControl& cc = ccs[k];
      best[k] = std::min(best[k], best_ns(one, next[k + 2], [&](int64_t i) {
        const AckEvent& a = fill(t, i);
        cc_on_ack(cc, a, TimeNs(i * kAckSpacingNs));
        g_sink = g_sink + cc_window_bytes(cc) + cc_rate(cc).bps();
      }));
    }
  }
  for (std::size_t k = 0; k < kNames.size(); ++k) {
    std::printf(
        "{\"bench\":\"cc_ack\",\"algo\":\"%s\",\"value\":%.2f,\"unit\":\"ns/ack\",\"ref\":%.2f,"
        "\"ref_name\":\"dcqcn_on_tx_bytes\",\"ratio\":%.3f,\"fill_ns\":%.2f,\"goal_ns\":50,\"acks\":%llu,"
        "\"batches\":%u}\n",
        kNames[k], best[k], ref, best[k] / ref, fill_ns, static_cast<unsigned long long>(o.acks), o.batches);
  }
  return 0;
}
