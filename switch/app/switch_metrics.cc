// sf-switch's Prometheus metrics. See switch_metrics.h; the names are listed
// in docs/ops.md.
#include "switch/app/switch_metrics.h"

#include <arpa/inet.h>

#include "common/app/metrics_server.h"

namespace sf::sw {
namespace {

using app::MetricsText;
constexpr auto kCounter = MetricsText::Type::kCounter;
constexpr auto kGauge = MetricsText::Type::kGauge;

double seconds(TimeNs t) { return static_cast<double>(t.ns()) / 1e9; }

}  // namespace

std::string switch_metrics(const SwitchView& v, const SwitchConfig& cfg) {
  MetricsText m;
  m.add("softfabric_info", kGauge, "The process serving these metrics (always 1).", {{"app", "sf-switch"}},
        uint64_t{1});
  for (PortId p = 0; p < v.num_ports(); ++p) {
    const std::string& name = cfg.ports.ports[p].name;
    const SwitchNode& node = v.owner(p);
    const PortCounters c = v.counters(p);
    const Mmu& mmu = node.mmu();
    const uint64_t cell = mmu.cell_bytes();
    const MetricsText::Labels pl = {{"port", name}};
    m.add("softfabric_port_oper_up", kGauge, "1 if the port is operationally up (admin up and link up).", pl,
          uint64_t{node.port_states().oper_up(p) ? 1u : 0u});
    m.add("softfabric_port_down_events_total", kCounter, "Operational up to down transitions.", pl, c.down_events);
    m.add("softfabric_port_rx_packets_total", kCounter, "Packets received.", pl, c.rx_packets);
    m.add("softfabric_port_rx_bytes_total", kCounter, "Bytes received.", pl, c.rx_bytes);
    m.add("softfabric_port_tx_packets_total", kCounter, "Packets transmitted.", pl, c.tx_packets);
    m.add("softfabric_port_tx_bytes_total", kCounter, "Bytes transmitted.", pl, c.tx_bytes);
    for (size_t i = 0; i < kNumDropCauses; ++i) {
      m.add("softfabric_port_dropped_packets_total", kCounter,
            "Packets dropped, charged to the ingress port, by cause (docs/switch.md).",
            {{"port", name}, {"cause", std::string(to_string(static_cast<DropCause>(i)))}}, c.drops[i]);
    }
    m.add("softfabric_port_rx_mac_control_total", kCounter, "PAUSE / PFC frames received.", pl, c.rx_mac_control);
    m.add("softfabric_port_pfc_tx_frames_total", kCounter, "PFC frames sent (XOFF, refresh, XON).", pl,
          c.tx_pfc_frames);
    m.add("softfabric_port_held_packets_total", kCounter, "Lossless arrivals held at ingress.", pl, c.held);
    m.add("softfabric_port_trimmed_packets_total", kCounter, "Packets trimmed to headers instead of dropped.", pl,
          c.trimmed);
    // Router interfaces (docs/switch.md "Router interfaces"): router ports only.
    if (const RouterIf* rif = node.router_if(); rif != nullptr && rif->port_on(p)) {
      const RouterIfCounters& rc = rif->counters(p);
      const std::pair<const char*, uint64_t> rx[] = {{"arp_request", rc.rx_arp_request}, {"arp_reply", rc.rx_arp_reply},
                                                     {"ns", rc.rx_ns}, {"na", rc.rx_na}, {"not_ours", rc.not_ours}};
      for (const auto& [kind, n] : rx) {
        m.add("softfabric_router_rx_neighbor_frames_total", kCounter,
              "ARP / ND frames a router port took: for its addresses by kind, or for another address (not_ours).",
              {{"port", name}, {"kind", kind}}, n);
      }
      m.add("softfabric_router_tx_neighbor_answers_total", kCounter, "ARP replies / NAs the router port sent.",
            {{"port", name}, {"kind", "arp_reply"}}, rc.tx_arp_reply);
      m.add("softfabric_router_tx_neighbor_answers_total", kCounter, "ARP replies / NAs the router port sent.",
            {{"port", name}, {"kind", "na"}}, rc.tx_na);
      for (size_t e = 0; e < wire::kNumNeighborErrors; ++e) {
        const auto err = static_cast<wire::NeighborError>(e);
        if (err == wire::NeighborError::kNone || err == wire::NeighborError::kNotNeighbor) continue;
        m.add("softfabric_router_bad_neighbor_frames_total", kCounter, "Malformed ARP / ND dropped, by reason.",
              {{"port", name}, {"reason", std::string(wire::to_string(err))}}, rc.bad_by[e]);
      }
      m.add("softfabric_router_neighbor_solicits_total", kCounter,
            "Routed packets to an unresolved next hop sent as its ARP request / NS instead.", pl, c.neighbor_solicits);
      for (const RouterIf::NeighborView& n : rif->neighbors()) {
        if (n.port != p) continue;
        char ip[INET6_ADDRSTRLEN] = {};
        inet_ntop(n.v6 ? AF_INET6 : AF_INET, n.ip.data(), ip, sizeof ip);
        m.add("softfabric_router_neighbor_resolved", kGauge,
              "1 once the next hop's MAC is known (gleaned from its ARP / ND, or answered).",
              {{"port", name}, {"ip", ip}}, uint64_t{n.resolved ? 1u : 0u});
      }
    }
    const PfcRxCounters& prx = node.pfc_rx(p).counters();
    const PfcTxCounters& ptx = node.pfc_tx(p).counters();
    for (uint8_t i = 0; i < 8; ++i) {
      const MetricsText::Labels l = {{"port", name}, {"priority", std::to_string(i)}};
      m.add("softfabric_pfc_rx_pause_frames_total", kCounter, "PFC frames received pausing the priority.", l,
            prx.pause_frames[i]);
      m.add("softfabric_pfc_rx_pause_seconds_total", kCounter, "Time the priority was paused by the peer.", l,
            seconds(prx.pause_duration[i]));
      m.add("softfabric_pfc_tx_pause_frames_total", kCounter, "PFC frames sent pausing the priority.", l,
            ptx.pause_frames[i]);
      m.add("softfabric_pfc_tx_pause_seconds_total", kCounter, "Time this port kept the peer's priority paused.", l,
            seconds(ptx.pause_duration[i]));
    }
    const uint8_t paused = node.paused(p);
    const PfcWatchdog* wd = node.pfc_wd(p);
    for (uint8_t q = 0; q < kNumQueues; ++q) {
      const MetricsText::Labels l = {{"port", name}, {"queue", std::to_string(q)}};
      const QueueCounters& qc = c.queues[q];
      m.add("softfabric_queue_tx_packets_total", kCounter, "Packets transmitted from the egress queue.", l,
            qc.tx_packets);
      m.add("softfabric_queue_tx_bytes_total", kCounter, "Bytes transmitted from the egress queue.", l, qc.tx_bytes);
      m.add("softfabric_queue_ecn_marked_total", kCounter, "Packets ECN-marked (CE) by the queue's WRED profile.", l,
            qc.ecn_marked);
      m.add("softfabric_queue_dropped_packets_total", kCounter, "Packets dropped, charged to the egress queue.", l,
            qc.dropped);
      m.add("softfabric_queue_depth_bytes", kGauge, "Bytes in the egress queue now.", l,
            uint64_t{node.queue_bytes(p, q)});
      m.add("softfabric_queue_watermark_bytes", kGauge, "Most bytes the egress queue held since start.", l,
            qc.watermark_bytes);
      m.add("softfabric_queue_paused", kGauge, "1 if PFC from the peer pauses the queue now.", l,
            uint64_t{(paused >> q) & 1u});
      if (wd != nullptr) {
        m.add("softfabric_pfcwd_storms_total", kCounter, "PFC storms the watchdog detected on the queue.", l,
              wd->counters().storms[q]);
        m.add("softfabric_pfcwd_restores_total", kCounter, "Queues the watchdog restored after a storm.", l,
              wd->counters().restores[q]);
        m.add("softfabric_pfcwd_tx_dropped_packets_total", kCounter, "Packets dropped for the queue while stormed.",
              l, wd->counters().tx_dropped[q]);
        m.add("softfabric_pfcwd_stormed", kGauge, "1 if the watchdog holds the queue stormed now.", l,
              uint64_t{(wd->stormed() >> q) & 1u});
      }
    }
    for (uint8_t g = 0; g < 8; ++g) {
      const MetricsText::Labels l = {{"port", name}, {"pg", std::to_string(g)}};
      const auto use = mmu.pg_use(p, g);
      m.add("softfabric_pg_shared_bytes", kGauge, "Shared buffer the ingress priority group holds now.", l,
            uint64_t{use.used} * cell);
      m.add("softfabric_pg_headroom_bytes", kGauge, "Headroom the ingress priority group holds now.", l,
            uint64_t{use.hdrm} * cell);
      m.add("softfabric_pg_watermark_bytes", kGauge, "Most shared buffer the priority group held since start.", l,
            uint64_t{use.watermark} * cell);
    }
    if (const CreditPort* cp = node.credit(p)) {
      const CreditCounters cc = cp->counters();
      m.add("softfabric_credit_stalls_total", kCounter, "Times the port ran out of credit (CREDIT_FC).", pl,
            cc.credit_stalls);
      m.add("softfabric_credit_stalled_seconds_total", kCounter, "Time the port waited for credit (CREDIT_FC).", pl,
            seconds(cc.stalled_time));
    }
  }
  const Mmu& mmu = v.shard(0).mmu();
  const uint64_t cell = mmu.cell_bytes();
  m.add("softfabric_buffer_size_bytes", kGauge, "The switch's shared buffer.", {}, uint64_t{mmu.total_cells()} * cell);
  m.add("softfabric_buffer_used_bytes", kGauge, "Buffer in use now.", {}, uint64_t{mmu.total_used()} * cell);
  for (size_t i = 0; i < cfg.mmu.pools.size(); ++i) {
    const auto pool = static_cast<uint16_t>(i);
    const MetricsText::Labels l = {{"pool", cfg.mmu.pools[i].name}};
    m.add("softfabric_buffer_pool_shared_used_bytes", kGauge, "Shared bytes the pool holds now.", l,
          uint64_t{mmu.pool_shared_used(pool)} * cell);
    m.add("softfabric_buffer_pool_shared_free_bytes", kGauge, "Shared bytes the pool has left.", l,
          uint64_t{mmu.pool_free(pool)} * cell);
    m.add("softfabric_buffer_pool_watermark_bytes", kGauge, "Most shared bytes the pool held since start.", l,
          uint64_t{mmu.pool_watermark(pool)} * cell);
    m.add("softfabric_buffer_pool_headroom_used_bytes", kGauge, "Headroom bytes the pool holds now.", l,
          uint64_t{mmu.hdrm_pool_used(pool)} * cell);
  }
  const Fdb& fdb = v.shard(0).fdb();
  const FdbStats fs = fdb.stats();
  m.add("softfabric_fdb_entries", kGauge, "FDB entries in use.", {}, uint64_t{fdb.size()});
  m.add("softfabric_fdb_learned_total", kCounter, "MAC addresses learned.", {}, fs.learned);
  m.add("softfabric_fdb_moved_total", kCounter, "Learned MAC addresses seen on another port.", {}, fs.moved);
  m.add("softfabric_fdb_aged_total", kCounter, "Learned entries aged out.", {}, fs.aged);
  m.add("softfabric_fdb_table_full_total", kCounter, "Learning refused for want of room.", {}, fs.table_full);
  return m.str();
}

}  // namespace sf::sw
