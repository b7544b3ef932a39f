// INT insertion cost in SwitchNode (docs/switch.md "INT"): the loop of
// switch_node_bench (bursts of 32 RoCEv2 frames copied into fresh mbufs,
// receive() on port 0, transmit() on port 1, free), run three ways in the same
// process: INT off (the reference), INT on Ethernet4 with frames that do not
// ask for it (the cost of the check), and INT on with HPCC frames (BTH INT
// flag + empty shim: one record appended per frame). ratio = ns per packet
// with INT / without. Instructions per packet (stable on a loaded machine):
//   bench/switch/instr_per_pkt.sh build/bench/switch/switch_int_bench --mode off|noflag|int
// Prints one JSON line per (frame size, mode):
//  {"bench":"switch_int","mode":"int","frame":64,"value":ns_per_pkt,"unit":"ns/pkt","ref":..,"ratio":..}
// Usage: switch_int_bench [--seconds S] [--iters N] [--frames 64,1082] [--mode off,noflag,int]
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
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/int_shim.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint16_t kBurst = 32;
constexpr uint32_t kFlows = 1024;

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
 "STATIC_ROUTE": {"10.0.0.0/24": {"nexthop": "10.0.0.254", "ifname": "Ethernet4"}}%s
})";
const char* kIntTable = R"(, "INT": {"Ethernet4|0-7": {}})";

// Every port's own (router) MAC.
constexpr std::array<uint8_t, 6> kRouterMac{2, 0x53, 0x46, 0, 0, 1};

std::vector<std::vector<uint8_t>> make_frames(uint32_t frame_bytes, bool l3, bool hpcc) {
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t i = 0; i < kFlows; ++i) {
    sf::wire::RoceFrameSpec s;
    const sf::wire::MacAddr dst{l3 ? kRouterMac : std::array<uint8_t, 6>{2, 0, 0, 0, 0, 2}};
    s.l2 = {dst, sf::wire::MacAddr{{2, 0, 0, 0, 0, 1}}, std::nullopt};
    sf::wire::Ipv4Spec ip;
    ip.src.bytes = {10, 0, 0, 1};
    ip.dst.bytes = {10, 0, 0, 2};
    ip.dscp = 26;
    ip.ecn = sf::wire::Ecn::kEct0;
    s.l3 = ip;
    s.udp_src_port = static_cast<uint16_t>(0xC000 + i);
    std::vector<uint8_t> buf(frame_bytes + 256);
    // Payload so that the whole frame (with ICRC) is frame_bytes long.
    const uint32_t overhead = 14 + 20 + 8 + 12 + 4;
    std::vector<uint8_t> payload(frame_bytes > overhead ? frame_bytes - overhead : 0, 0x5A);
    const auto r = sf::wire::build_roce_frame(buf, s, payload);
    if (!r.ok()) {
      std::fprintf(stderr, "switch_node_bench: cannot build a %u B frame\n", frame_bytes);
      std::exit(1);
    }
    uint32_t len = static_cast<uint32_t>(r.frame_bytes);
    if (hpcc) {  // what an HPCC sender sends: INT flag, ICRC, empty shim (4 bytes more)
      const sf::wire::FrameInfo f = sf::wire::parse_frame(std::span<const uint8_t>(buf.data(), len));
      sf::wire::set_bth_int_flag(*const_cast<sf::wire::Bth*>(f.bth), true);
      sf::wire::icrc_store(std::span<uint8_t>(buf.data(), len), f);
      if (sf::wire::int_open(buf, len, sf::wire::int_frame_ref(f)) != sf::wire::IntStatus::kOk) std::exit(1);
    }
    buf.resize(len);
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
  std::vector<std::string> modes{"off", "noflag", "int"};
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
        if (modes.back() != "off" && modes.back() != "noflag" && modes.back() != "int") {
          std::fprintf(stderr, "switch_int_bench: --mode takes off, noflag and/or int\n");
          return 2;
        }
      }
    } else {
      std::fprintf(stderr, "usage: switch_int_bench [--seconds S] [--iters N] [--frames 64,1082] [--mode off,noflag,int]\n");
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
  char doc_off[8192], doc_on[8192];
  std::snprintf(doc_off, sizeof doc_off, kConfig, "");
  std::snprintf(doc_on, sizeof doc_on, kConfig, kIntTable);
  const sf::sw::SwitchConfig cfg_off = sf::sw::parse_switch_config(sf::config::parse_text(doc_off));
  const sf::sw::SwitchConfig cfg_on = sf::sw::parse_switch_config(sf::config::parse_text(doc_on));
  std::vector<std::array<uint8_t, 6>> macs(cfg_off.ports.ports.size(), kRouterMac);
  for (const uint32_t size : sizes) {
    double ref_ns = 0;
    for (const std::string& mode : modes) {
      const bool on = mode != "off";
      const auto frames = make_frames(size, false, mode == "int");
      sf::sw::SwitchNode node(on ? cfg_on : cfg_off, macs, pool);
      const Run base = measure<false>(pool, nullptr, frames, seconds, iters);  // alloc + copy + free
      const Run sw = measure<true>(pool, &node, frames, seconds, iters);
      const sf::sw::PortCounters& c = node.counters(1);
      const double ns = sw.ns_per_pkt - base.ns_per_pkt;  // the switch's share
      if (mode == "off" || ref_ns == 0) ref_ns = ns;
      std::printf(
          "{\"bench\":\"switch_int\",\"mode\":\"%s\",\"frame\":%u,\"value\":%.1f,\"unit\":\"ns/pkt\",\"ref\":%.1f,"
          "\"ratio\":%.3f,\"mpps\":%.3f,\"int_records\":%llu,\"forwarded\":%llu,\"sent\":%llu}\n",
          mode.c_str(), size, ns, ref_ns, ns / ref_ns, sw.mpps, static_cast<unsigned long long>(c.int_records),
          static_cast<unsigned long long>(c.tx_packets), static_cast<unsigned long long>(sw.pkts));
      if (c.tx_packets != sw.pkts || (mode == "int") != (c.int_records == sw.pkts)) {
        std::fprintf(stderr, "switch_int_bench: %s: %llu sent, %llu forwarded, %llu records\n", mode.c_str(),
                     static_cast<unsigned long long>(sw.pkts), static_cast<unsigned long long>(c.tx_packets),
                     static_cast<unsigned long long>(c.int_records));
        return 1;
      }
    }
  }
  rte_mempool_free(pool);
  sf::dpdk::cleanup_eal();
  return 0;
}
