// Simulator throughput: events per second for a two-node ping-pong of 64 B
// frames over one 100 Gb/s link (1 frame in flight, then 64 in flight for a
// fuller event heap). Prints one JSON line per figure. There is no in-process
// reference engine, so `ref` is the design goal (10 M events/s). EAL runs with
// --no-huge --no-shconf (--no-huge excludes --in-memory) for the mbuf pool.
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/sim/simulator.h"

namespace {

constexpr double kGoalEventsPerSec = 10e6;
constexpr uint32_t kFrameBytes = 64;

// One port; sends back every frame it receives (fixed ring, no allocation).
class PingPongNode : public sf::Node {
 public:
  uint16_t num_ports() const override { return 1; }
  void receive(sf::PortId, std::span<rte_mbuf*> pkts, sf::TimeNs) override {
    for (rte_mbuf* m : pkts) ring_[(head_ + count_++) % kRing] = m;
  }
  uint16_t transmit(sf::PortId, std::span<rte_mbuf*> out, sf::TimeNs) override {
    if (count_ == 0) return 0;
    out[0] = ring_[head_];
    head_ = (head_ + 1) % kRing;
    --count_;
    return 1;
  }
  sf::TimeNs next_wakeup(sf::TimeNs) const override { return sf::TimeNs::max(); }
  void advance(sf::TimeNs) override {}
  ~PingPongNode() override {
    for (; count_ > 0; --count_, head_ = (head_ + 1) % kRing) rte_pktmbuf_free(ring_[head_]);
  }

 private:
  static constexpr uint32_t kRing = 256;
  std::array<rte_mbuf*, kRing> ring_{};
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

// Events per wall-clock second with `in_flight` frames circulating.
double measure(rte_mempool* pool, uint32_t in_flight) {
  PingPongNode a;
  PingPongNode b;
  for (uint32_t i = 0; i < in_flight; ++i) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr || rte_pktmbuf_append(m, kFrameBytes) == nullptr) return 0;
    std::array<rte_mbuf*, 1> one{m};
    a.receive(0, one, sf::TimeNs(0));
  }
  sf::sim::Simulator sim(1);
  sf::sim::LinkParams p;
  p.rate = sf::BitRate::gbps(100);
  p.delay = sf::TimeNs(500);
  sim.connect(sim.add_node(a, "a"), 0, sim.add_node(b, "b"), 0, p);
  sim.run_for(sf::TimeNs::from_ms(1));  // warm up (heap at its high-water mark)
  const uint64_t events0 = sim.events_processed();
  const auto t0 = std::chrono::steady_clock::now();
  double wall_s = 0;
  do {
    sim.run_for(sf::TimeNs::from_ms(10));
    wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (wall_s < 1.0);
  return static_cast<double>(sim.events_processed() - events0) / wall_s;
}

void print(const char* name, double value, const char* note) {
  std::printf(
      "{\"bench\":\"%s\",\"value\":%.0f,\"unit\":\"events/s\",\"ref\":%.0f,\"ratio\":%.3f,\"note\":\"%s\"}\n", name,
      value, kGoalEventsPerSec, value / kGoalEventsPerSec, note);
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  const std::string prefix = "sf-bench-sim-" + std::to_string(getpid());
  std::vector<std::string> args = {argv[0], "--no-huge", "--no-shconf", "--no-pci", "-m", "256",
                                   "--file-prefix", prefix, "--log-level", "*:warning", "--no-telemetry"};
  std::vector<char*> cargs;
  for (auto& s : args) cargs.push_back(s.data());
  if (rte_eal_init(static_cast<int>(cargs.size()), cargs.data()) < 0) {
    std::fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  rte_mempool* pool = rte_pktmbuf_pool_create("sf_bench_sim", 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (pool == nullptr) {
    std::fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  print("sim_pingpong_64B", measure(pool, 1), "ref is the design goal; no in-process reference engine");
  print("sim_pingpong_64B_64inflight", measure(pool, 64), "ref is the design goal; no in-process reference engine");
  rte_mempool_free(pool);
  rte_eal_cleanup();
  return 0;
}
