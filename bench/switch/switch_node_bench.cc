// SwitchNode pipeline cost in process, without any PMD: bursts of 32 RoCEv2
// frames (1024 UDP source ports, DSCP 26 ECT(0), one static FDB destination)
// are copied into fresh mbufs, handed to receive() on port 0 and taken back
// with transmit() on port 1, then freed. The reference in the same run is the
// same loop without the switch (alloc, copy, free: what a pcap -> null port
// pair costs testpmd io at least), so ratio = sf / ref says how much of the
// packet budget the pipeline leaves. Also the loop's instructions per packet
// are stable under callgrind (run with --iters and valgrind --tool=callgrind).
//
// Prints one JSON line per frame size:
//  {"bench":"switch_node","frame":64,"value":Mpps,"unit":"Mpps","ref":Mpps,"ratio":..,"ns_per_pkt":..}
// --mode l3: the frames are addressed to the router MAC instead and routed
// (LPM on 10.0.0.2 -> 10.0.0.0/24 via Ethernet4: TTL, checksum, MAC rewrite);
// the JSON line then says "mode":"l3". --mode l3_rif: the same route, its
// next hop resolved at run time by the router interfaces (INTERFACE
// Ethernet4|10.0.0.1/24, no NEIGH; a gratuitous ARP from 10.0.0.254 before
// the run): the l3 and l3_rif lines of one run compare the resolved-MAC load.
// Usage: switch_node_bench [--seconds S] [--iters N] [--frames 64,1082] [--mode l2,l3,l3_rif]
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/config/json_loader.h"
#include "common/dpdk/eal.h"
#include "common/wire/arp_nd.h"
#include "common/wire/frame_builder.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint16_t kBurst = 32;
constexpr uint32_t kFlows = 1024;
constexpr uint32_t kMixDsts = 16;  // --flows multi: destinations x ...
constexpr uint32_t kMixSports = kFlows / kMixDsts;  // ... UDP source ports

// The full-pipeline config of bench/switch/switch_bench.py (lossless PG 3
// with PFC, WRED/ECN on queue 3, DWRR), ports without devargs.
const char* kConfig = R"({
 "DEVICE_METADATA": {"localhost": {"mmu_size": "32MiB", "cell_size": 256, "seed": 1}},
 "PORT": {"Ethernet0": {"devargs": "a", "speed": 100, "mtu": 1500},
          "Ethernet4": {"devargs": "b", "speed": 100, "mtu": 1500}},
 "BUFFER_POOL": {
  "ingress_lossless_pool": {"type": "ingress", "mode": "static", "size": "16777216"},
  "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic", "size": "4194304"},
  "egress_lossless_pool": {"type": "egress", "mode": "static", "size": "16777216"},
  "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": "4194304"}},
 "BUFFER_PROFILE": {
  "pg_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "491520",
                          "xoff": "262144", "xon": "18432", "xon_offset": "18432"},
  "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"},
  "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "16777216"},
  "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1518", "dynamic_th": "3"}},
 "BUFFER_PG": {"Ethernet0,Ethernet4|0-2": {"profile": "ingress_lossy_profile"},
               "Ethernet0,Ethernet4|3": {"profile": "pg_lossless_profile"},
               "Ethernet0,Ethernet4|4-7": {"profile": "ingress_lossy_profile"}},
 "BUFFER_QUEUE": {"Ethernet0,Ethernet4|0-2": {"profile": "egress_lossy_profile"},
                  "Ethernet0,Ethernet4|3": {"profile": "egress_lossless_profile"},
                  "Ethernet0,Ethernet4|4-7": {"profile": "egress_lossy_profile"}},
 "DSCP_TO_TC_MAP": {"ROCE": {"26": "3", "48": "6", "46": "5", "0": "0"}},
 "TC_TO_PRIORITY_GROUP_MAP": {"ROCE": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "TC_TO_QUEUE_MAP": {"ROCE": {"0":"0","1":"1","2":"2","3":"3","4":"4","5":"5","6":"6","7":"7"}},
 "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "ROCE", "tc_to_pg_map": "ROCE", "tc_to_queue_map": "ROCE",
                             "pfc_enable": "3"}},
 "WRED_PROFILE": {"ROCE_LOSSLESS": {"ecn": "ecn_all", "wred_green_enable": "false",
                  "green_min_threshold": "122880", "green_max_threshold": "368640",
                  "green_drop_probability": "20"}},
 "SCHEDULER": {"scheduler.lossy": {"type": "DWRR", "weight": "14"},
               "scheduler.roce": {"type": "DWRR", "weight": "15"},
               "scheduler.cnp": {"type": "STRICT", "priority": "5"}},
 "QUEUE": {"Ethernet0,Ethernet4|0-2": {"scheduler": "scheduler.lossy"},
           "Ethernet0,Ethernet4|3": {"scheduler": "scheduler.roce", "wred_profile": "ROCE_LOSSLESS"},
           "Ethernet0,Ethernet4|4-5": {"scheduler": "scheduler.lossy"},
           "Ethernet0,Ethernet4|6": {"scheduler": "scheduler.cnp"},
           "Ethernet0,Ethernet4|7": {"scheduler": "scheduler.lossy"}},
 "FDB": {"02:00:00:00:00:02": {"port": "Ethernet4"}},
 "NEIGH": {"Ethernet4|10.0.0.254": {"neigh": "02:00:00:00:00:02"}},
 "STATIC_ROUTE": {"10.0.0.0/24": {"nexthop": "10.0.0.254", "ifname": "Ethernet4"}}
})";

// Every port's own (router) MAC.
constexpr std::array<uint8_t, 6> kRouterMac{2, 0x53, 0x46, 0, 0, 1};

std::vector<std::vector<uint8_t>> make_frames(uint32_t frame_bytes, bool l3, bool multi) {
  static_assert(kMixDsts * kMixSports == kFlows);
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t i = 0; i < kFlows; ++i) {
    sf::wire::RoceFrameSpec s;
    const auto k = static_cast<uint8_t>(i % kMixDsts);
    const sf::wire::MacAddr dst{l3      ? kRouterMac
                                : multi ? std::array<uint8_t, 6>{2, 0, 0, 0, 0x10, k}
                                        : std::array<uint8_t, 6>{2, 0, 0, 0, 0, 2}};
    s.l2 = {dst, sf::wire::MacAddr{{2, 0, 0, 0, 0, 1}}, std::nullopt};
    sf::wire::Ipv4Spec ip;
    ip.src.bytes = {10, 0, 0, 1};
    ip.dst.bytes = {10, 0, 0, static_cast<uint8_t>(multi ? 16 + k : 2)};
    ip.dscp = 26;
    ip.ecn = sf::wire::Ecn::kEct0;
    s.l3 = ip;
    s.udp_src_port = static_cast<uint16_t>(0xC000 + (multi ? i / kMixDsts : i));
    std::vector<uint8_t> buf(frame_bytes + 256);
    // Payload so that the whole frame (with ICRC) is frame_bytes long.
    const uint32_t overhead = 14 + 20 + 8 + 12 + 4;
    std::vector<uint8_t> payload(frame_bytes > overhead ? frame_bytes - overhead : 0, 0x5A);
    const auto r = sf::wire::build_roce_frame(buf, s, payload);
    if (!r.ok()) {
      std::fprintf(stderr, "switch_node_bench: cannot build a %u B frame\n", frame_bytes);
      std::exit(1);
    }
    buf.resize(r.frame_bytes);
    frames.push_back(std::move(buf));
  }
  return frames;
}

// One burst: alloc + copy (the PMD's share), optionally through the switch.
template <bool kSwitch>
uint32_t burst(rte_mempool* pool, sf::sw::SwitchNode* node, const std::vector<std::vector<uint8_t>>& frames,
               uint32_t& next, sf::TimeNs now) {
  rte_mbuf* pkts[kBurst];
  if (rte_pktmbuf_alloc_bulk(pool, pkts, kBurst) != 0) return 0;
  for (uint16_t i = 0; i < kBurst; ++i) {
    const std::vector<uint8_t>& f = frames[next++ % kFlows];
    char* d = rte_pktmbuf_append(pkts[i], static_cast<uint16_t>(f.size()));
    std::memcpy(d, f.data(), f.size());
  }
  uint16_t n = kBurst;
  if constexpr (kSwitch) {
    node->receive(0, {pkts, kBurst}, now);
    n = node->transmit(1, {pkts, kBurst}, now);
  }
  rte_pktmbuf_free_bulk(pkts, n);
  return n;
}

struct Run {
  double mpps = 0;
  double ns_per_pkt = 0;
  uint64_t pkts = 0;
};

template <bool kSwitch>
Run measure(rte_mempool* pool, sf::sw::SwitchNode* node, const std::vector<std::vector<uint8_t>>& frames,
            double seconds, uint64_t iters) {
  uint32_t next = 0;
  uint64_t pkts = 0;
  uint64_t t_ns = 1;
  const auto t0 = Clock::now();
  for (uint64_t it = 0;; ++it) {
    // Virtual time advances 1 us per burst: the switch never reads a clock.
    pkts += burst<kSwitch>(pool, node, frames, next, sf::TimeNs(t_ns));
    t_ns += 1000;
    if (iters != 0) {
      if (it + 1 >= iters) break;
    } else if ((it & 1023) == 0 && std::chrono::duration<double>(Clock::now() - t0).count() >= seconds) {
      break;
    }
  }
  const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
  return {pkts / sec / 1e6, sec * 1e9 / static_cast<double>(pkts), pkts};
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  uint64_t iters = 0;
  std::vector<uint32_t> sizes{64, 1082};
  std::vector<std::string> modes{"l2"};
  bool multi = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--iters" && i + 1 < argc) {
      iters = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--frames" && i + 1 < argc) {
      sizes.clear();
      for (char* tok = std::strtok(argv[++i], ","); tok != nullptr; tok = std::strtok(nullptr, ",")) {
        sizes.push_back(static_cast<uint32_t>(std::atoi(tok)));
      }
    } else if (a == "--mode" && i + 1 < argc) {
      modes.clear();
      for (char* tok = std::strtok(argv[++i], ","); tok != nullptr; tok = std::strtok(nullptr, ",")) {
        modes.emplace_back(tok);
        if (modes.back() != "l2" && modes.back() != "l3" && modes.back() != "l3_rif") {
          std::fprintf(stderr, "switch_node_bench: --mode takes l2, l3 and/or l3_rif\n");
          return 2;
        }
      }
    } else if (a == "--flows" && i + 1 < argc) {
      const std::string f = argv[++i];
      if (f != "single" && f != "multi") {
        std::fprintf(stderr, "switch_node_bench: --flows takes single or multi\n");
        return 2;
      }
      multi = f == "multi";
    } else {
      std::fprintf(stderr,
                   "usage: switch_node_bench [--seconds S] [--iters N] [--frames 64,1082] [--mode l2,l3,l3_rif] "
                   "[--flows single|multi]\n");
      return 2;
    }
  }
  auto eal = sf::dpdk::init_eal({argv[0], "--no-huge", "--no-pci", "--log-level", "*:error", "--no-telemetry"});
  if (!eal) {
    std::fprintf(stderr, "switch_node_bench: EAL: %s\n", eal.error().c_str());
    return 1;
  }
  rte_mempool* pool = rte_pktmbuf_pool_create("bench", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (pool == nullptr) {
    std::fprintf(stderr, "switch_node_bench: no mempool\n");
    return 1;
  }
  std::string text = kConfig;
  if (multi) {  // the 16 destinations of --flows multi, each a static entry to Ethernet4
    const std::string fdb = R"("FDB": {"02:00:00:00:00:02": {"port": "Ethernet4"}},)";
    std::string entries = R"("FDB": {)";
    for (uint32_t k = 0; k < kMixDsts; ++k) {
      char e[64];
      std::snprintf(e, sizeof(e), R"(%s"02:00:00:00:10:%02x": {"port": "Ethernet4"})", k == 0 ? "" : ", ", k);
      entries += e;
    }
    text.replace(text.find(fdb), fdb.size(), entries + "},");
  }
  const sf::sw::SwitchConfig cfg = sf::sw::parse_switch_config(sf::config::parse_text(text));
  std::string rif_text = text;
  const std::string neigh = R"("NEIGH": {"Ethernet4|10.0.0.254": {"neigh": "02:00:00:00:00:02"}},)";
  rif_text.replace(rif_text.find(neigh), neigh.size(), R"("INTERFACE": {"Ethernet4|10.0.0.1/24": {}},)");
  const sf::sw::SwitchConfig rif_cfg = sf::sw::parse_switch_config(sf::config::parse_text(rif_text));
  std::vector<std::array<uint8_t, 6>> macs(cfg.ports.ports.size(), kRouterMac);
  for (const std::string& mode : modes) {
  for (const uint32_t size : sizes) {
    const bool l3 = mode != "l2";
    const auto frames = make_frames(size, l3, multi);
    sf::sw::SwitchNode node(mode == "l3_rif" ? rif_cfg : cfg, macs, pool);
    if (mode == "l3_rif") {  // the next hop announces itself: resolved before the run
      uint8_t f[sf::wire::kNeighborFrameMax];
      const sf::wire::MacAddr nh{{2, 0, 0, 0, 0, 2}};
      const sf::wire::Ipv4Addr ip{{10, 0, 0, 254}};
      const size_t len = sf::wire::write_arp(f, {sf::wire::kBroadcastMac, nh, std::nullopt}, sf::wire::kArpOpRequest,
                                             nh, ip, {}, ip);
      rte_mbuf* m = rte_pktmbuf_alloc(pool);
      std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(len)), f, len);
      node.receive(1, {&m, 1}, sf::TimeNs(0));
    }
    const Run ref = measure<false>(pool, nullptr, frames, seconds, iters);
    const Run sw = measure<true>(pool, &node, frames, seconds, iters);
    const uint64_t tx = node.counters(1).tx_packets;
    std::printf(
        "{\"bench\":\"switch_node\",\"mode\":\"%s\",\"flows\":\"%s\",\"frame\":%u,\"value\":%.3f,\"unit\":\"Mpps\",\"ref\":%.3f,\"ratio\":%.3f,"
        "\"ns_per_pkt\":%.1f,\"ref_ns_per_pkt\":%.1f,\"switch_ns_per_pkt\":%.1f,\"forwarded\":%llu,\"sent\":%llu}\n",
        mode.c_str(), multi ? "multi" : "single", size, sw.mpps, ref.mpps, sw.mpps / ref.mpps, sw.ns_per_pkt, ref.ns_per_pkt, sw.ns_per_pkt - ref.ns_per_pkt,
        static_cast<unsigned long long>(tx), static_cast<unsigned long long>(sw.pkts));
    if (tx != sw.pkts) {
      std::fprintf(stderr, "switch_node_bench: %llu of %llu frames not forwarded\n",
                   static_cast<unsigned long long>(sw.pkts - tx), static_cast<unsigned long long>(sw.pkts));
      return 1;
    }
  }
  }
  rte_mempool_free(pool);
  sf::dpdk::cleanup_eal();
  return 0;
}
