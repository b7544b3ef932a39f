// sf-nic's telemetry commands and metrics. See nic_ops.h.
#include "nic/app/nic_ops.h"

#include <rte_telemetry.h>

#include <cstdlib>
#include <string>
#include <variant>

#include "common/app/metrics_server.h"
#include "nic/app/sf_nic_report.h"
#include "nic/verbs/verbs.h"

namespace sf::nic::app {
namespace {

NicOps* g_ops = nullptr;  // DPDK 22.11's telemetry callbacks carry no user pointer

using sf::app::MetricsText;
constexpr auto kCounter = MetricsText::Type::kCounter;
constexpr auto kGauge = MetricsText::Type::kGauge;

int find_host(const NicNode& node, const std::string& s) {
  for (size_t h = 0; h < node.num_hosts(); ++h) {
    if (node.host(h).config().name == s) return static_cast<int>(h);
  }
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0 || static_cast<size_t>(v) >= node.num_hosts()) return -1;
  return static_cast<int>(v);
}


uint32_t in_use_qps(const Host& host) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < host.qp_capacity(); ++i) n += host.qp_slot(i).in_use() ? 1 : 0;
  return n;
}

const rc::Qp* find_qp(const Host& host, uint32_t qpn) {
  for (uint32_t i = 0; i < host.qp_capacity(); ++i) {
    const rc::Qp& qp = host.qp_slot(i);
    if (qp.in_use() && qp.qp_num() == qpn) return &qp;
  }
  return nullptr;
}

// PSNs sent and not yet acknowledged (the requester's window in use).
uint32_t unacked_psns(const rc::Qp& qp) {
  return (qp.sent_next_psn().value() - qp.acked_psn().value() - 1) & wire::Psn::kMask;
}

const char* cc_name(const rc::Qp& qp) {
  if (!qp.cc_active()) return "none";
  return to_string(cc_algorithm(qp.congestion_control())).data();  // static, NUL-terminated names
}

int cmd_hosts(const char*, const char*, rte_tel_data* d) {
  std::lock_guard lock(g_ops->mutex());
  if (!g_ops->node_live()) return -1;
  const NicNode& node = g_ops->node();
  rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
  for (size_t h = 0; h < node.num_hosts(); ++h) rte_tel_data_add_array_string(d, node.host(h).config().name.c_str());
  return 0;
}

int cmd_host(const char*, const char* params, rte_tel_data* d) {
  std::lock_guard lock(g_ops->mutex());
  if (!g_ops->node_live()) return -1;
  const NicNode& node = g_ops->node();
  const int hi = find_host(node, params == nullptr ? "" : params);
  if (hi < 0) return -1;
  const Host& host = node.host(static_cast<size_t>(hi));
  const HostPortSum s = port_sum(node, host);
  uint64_t rx_pause = 0;
  for (const uint64_t n : s.rx.pause_frames) rx_pause += n;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "name", host.config().name.c_str());
  rte_tel_data_add_dict_u64(d, "ports", host.num_ports());
  rte_tel_data_add_dict_u64(d, "rx_packets", s.c.rx_pkts);
  rte_tel_data_add_dict_u64(d, "rx_bytes", s.c.rx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_packets", s.c.tx_pkts);
  rte_tel_data_add_dict_u64(d, "tx_bytes", s.c.tx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_ctrl_packets", s.c.tx_ctrl_pkts);
  rte_tel_data_add_dict_u64(d, "tx_pfc_frames", s.c.tx_pfc_frames);
  rte_tel_data_add_dict_u64(d, "rx_pfc_frames", s.c.rx_pfc_frames);
  rte_tel_data_add_dict_u64(d, "rx_pause_frames", rx_pause);
  rte_tel_data_add_dict_u64(d, "dropped", s.c.dropped());
  for (int i = 0; i < kNumRxDrops; ++i) {
    const std::string key = std::string("drop_") + to_string(static_cast<RxDrop>(i));
    rte_tel_data_add_dict_u64(d, key.c_str(), s.c.drops[static_cast<size_t>(i)]);
  }
  rte_tel_data_add_dict_u64(d, "qps", g_ops->qps_live() ? in_use_qps(host) : 0);
  return 0;
}

int cmd_qps(const char*, const char*, rte_tel_data* d) {
  std::lock_guard lock(g_ops->mutex());
  if (!g_ops->node_live()) return -1;
  const NicNode& node = g_ops->node();
  rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
  if (!g_ops->qps_live()) return 0;
  for (size_t h = 0; h < node.num_hosts(); ++h) {
    const Host& host = node.host(h);
    for (uint32_t i = 0; i < host.qp_capacity(); ++i) {
      const rc::Qp& qp = host.qp_slot(i);
      if (!qp.in_use()) continue;
      const std::string row = host.config().name + "|" + std::to_string(qp.qp_num());
      rte_tel_data_add_array_string(d, row.c_str());
    }
  }
  return 0;
}

int cmd_qp(const char*, const char* params, rte_tel_data* d) {
  std::lock_guard lock(g_ops->mutex());
  if (!g_ops->node_live() || !g_ops->qps_live()) return -1;
  const NicNode& node = g_ops->node();
  const std::string p = params == nullptr ? "" : params;
  const size_t comma = p.find(',');
  if (comma == std::string::npos) return -1;
  const int hi = find_host(node, p.substr(0, comma));
  char* end = nullptr;
  const std::string qs = p.substr(comma + 1);
  const unsigned long qpn = std::strtoul(qs.c_str(), &end, 0);
  if (hi < 0 || qs.empty() || *end != '\0') return -1;
  const Host& host = node.host(static_cast<size_t>(hi));
  const rc::Qp* qp = find_qp(host, static_cast<uint32_t>(qpn));
  if (qp == nullptr) return -1;
  const rc::QpCounters& c = qp->counters();
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "host", host.config().name.c_str());
  rte_tel_data_add_dict_u64(d, "qpn", qp->qp_num());
  rte_tel_data_add_dict_u64(d, "dest_qpn", qp->dest_qp());
  rte_tel_data_add_dict_string(d, "state", verbs::to_string(qp->state()));
  rte_tel_data_add_dict_u64(d, "port", qp->port_num());
  rte_tel_data_add_dict_u64(d, "priority", qp->priority());
  rte_tel_data_add_dict_u64(d, "next_psn", qp->next_psn().value());
  rte_tel_data_add_dict_u64(d, "sent_next_psn", qp->sent_next_psn().value());
  rte_tel_data_add_dict_u64(d, "acked_psn", qp->acked_psn().value());
  rte_tel_data_add_dict_u64(d, "expected_psn", qp->expected_psn().value());
  rte_tel_data_add_dict_u64(d, "unacked_psns", unacked_psns(*qp));
  rte_tel_data_add_dict_u64(d, "sq_outstanding", qp->sq_outstanding());
  rte_tel_data_add_dict_u64(d, "retry_left", qp->retry_left());
  rte_tel_data_add_dict_u64(d, "tx_data_packets", c.tx_data_pkts);
  rte_tel_data_add_dict_u64(d, "tx_data_bytes", c.tx_data_bytes);
  rte_tel_data_add_dict_u64(d, "retransmitted_packets", c.tx_retransmit_pkts);
  rte_tel_data_add_dict_u64(d, "timeouts", c.timeouts);
  rte_tel_data_add_dict_u64(d, "go_back", c.go_back);
  rte_tel_data_add_dict_u64(d, "tx_acks", c.tx_acks);
  rte_tel_data_add_dict_u64(d, "tx_naks", c.tx_naks);
  rte_tel_data_add_dict_u64(d, "rnr_waits", c.rnr_waits);
  rte_tel_data_add_dict_u64(d, "tx_cnps", c.tx_cnps);
  rte_tel_data_add_dict_u64(d, "rx_cnps", c.rx_cnps);
  rte_tel_data_add_dict_u64(d, "rx_ce", c.rx_ce);
  rte_tel_data_add_dict_string(d, "cc", cc_name(*qp));
  rte_tel_data_add_dict_u64(d, "rate_bps", qp->rate().bps());
  rte_tel_data_add_dict_u64(d, "rate_limit_bps", qp->rate_limit().bps());
  if (const Dcqcn* dc = std::get_if<Dcqcn>(&qp->congestion_control()); dc != nullptr && qp->cc_active()) {
    rte_tel_data_add_dict_string(d, "cc_stage", std::string(to_string(dc->stage())).c_str());
    rte_tel_data_add_dict_u64(d, "cc_target_rate_bps", dc->target_rate().bps());
    rte_tel_data_add_dict_u64(d, "cc_alpha_ppm", static_cast<uint64_t>(dc->alpha() * 1e6));
  }
  return 0;
}

}  // namespace

bool NicOps::register_telemetry() {
  g_ops = this;
  bool ok = rte_telemetry_register_cmd("/softfabric/nic/hosts", cmd_hosts, "Host names. Takes no parameters") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/nic/host", cmd_host,
                                   "A host's port counters, drops by cause, PFC. Parameter: host index or name") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/nic/qps", cmd_qps, "HOST|QPN of every QP. Takes no parameters") == 0;
  ok &= rte_telemetry_register_cmd("/softfabric/nic/qp", cmd_qp,
                                   "One QP: state, PSNs, retransmissions, CC. Parameters: host, QPN") == 0;
  return ok;
}

std::string NicOps::metrics() {
  MetricsText m;
  m.add("softfabric_info", kGauge, "The process serving these metrics (always 1).", {{"app", "sf-nic"}}, uint64_t{1});
  std::lock_guard lock(mu_);
  if (!node_live_) return m.str();
  for (size_t h = 0; h < node_.num_hosts(); ++h) {
    const Host& host = node_.host(h);
    const std::string& name = host.config().name;
    for (uint8_t k = 1; k <= host.num_ports(); ++k) {
      const PortId p = host.node_port(k);
      const NicPortCounters& c = node_.counters(p);
      const MetricsText::Labels l = {{"host", name}, {"port", std::to_string(k)}};
      m.add("softfabric_nic_rx_packets_total", kCounter, "Frames received.", l, c.rx_pkts);
      m.add("softfabric_nic_rx_bytes_total", kCounter, "Bytes received.", l, c.rx_bytes);
      m.add("softfabric_nic_tx_packets_total", kCounter, "Frames sent.", l, c.tx_pkts);
      m.add("softfabric_nic_tx_bytes_total", kCounter, "Bytes sent.", l, c.tx_bytes);
      m.add("softfabric_nic_pfc_tx_frames_total", kCounter, "PFC frames sent.", l, c.tx_pfc_frames);
      m.add("softfabric_nic_pfc_rx_frames_total", kCounter, "PFC frames received.", l, c.rx_pfc_frames);
      for (int i = 0; i < kNumRxDrops; ++i) {
        m.add("softfabric_nic_rx_dropped_packets_total", kCounter, "Received frames dropped, by cause.",
              {{"host", name}, {"port", std::to_string(k)}, {"cause", to_string(static_cast<RxDrop>(i))}},
              c.drops[static_cast<size_t>(i)]);
      }
      const PfcRxCounters& prx = node_.pfc_rx(p).counters();
      for (int i = 0; i < kPfcPrios; ++i) {
        const MetricsText::Labels pl = {{"host", name}, {"port", std::to_string(k)}, {"priority", std::to_string(i)}};
        m.add("softfabric_nic_pfc_rx_pause_seconds_total", kCounter, "Time the priority was paused by the peer.", pl,
              static_cast<double>(prx.pause_duration[static_cast<size_t>(i)].ns()) / 1e9);
      }
    }
  }
  if (!qps_live_) return m.str();
  for (size_t h = 0; h < node_.num_hosts(); ++h) {
    const Host& host = node_.host(h);
    for (uint32_t i = 0; i < host.qp_capacity(); ++i) {
      const rc::Qp& qp = host.qp_slot(i);
      if (!qp.in_use()) continue;
      const rc::QpCounters& c = qp.counters();
      const MetricsText::Labels l = {{"host", host.config().name}, {"qpn", std::to_string(qp.qp_num())}};
      m.add("softfabric_qp_rate_bytes_per_second", kGauge, "The QP's pacing rate (CC rate, limit or line rate).", l,
            static_cast<double>(qp.rate().bps()) / 8);
      m.add("softfabric_qp_unacked_psns", kGauge, "PSNs sent and not yet acknowledged (window in use).", l,
            uint64_t{unacked_psns(qp)});
      m.add("softfabric_qp_tx_data_packets_total", kCounter, "Data frames sent.", l, c.tx_data_pkts);
      m.add("softfabric_qp_tx_data_bytes_total", kCounter, "Data frame bytes sent.", l, c.tx_data_bytes);
      m.add("softfabric_qp_retransmitted_packets_total", kCounter, "Data frames sent again.", l, c.tx_retransmit_pkts);
      m.add("softfabric_qp_timeouts_total", kCounter, "Retransmit timer expiries.", l, c.timeouts);
      m.add("softfabric_qp_go_back_total", kCounter, "Rewinds (NAK, timeout, RNR, lost read response).", l, c.go_back);
      m.add("softfabric_qp_rx_cnps_total", kCounter, "CNPs received.", l, c.rx_cnps);
      m.add("softfabric_qp_tx_cnps_total", kCounter, "CNPs sent.", l, c.tx_cnps);
      m.add("softfabric_qp_rx_ce_packets_total", kCounter, "CE-marked data frames received.", l, c.rx_ce);
      if (const Dcqcn* dc = std::get_if<Dcqcn>(&qp.congestion_control()); dc != nullptr && qp.cc_active()) {
        m.add("softfabric_qp_dcqcn_alpha", kGauge, "DCQCN's congestion estimate alpha.", l, dc->alpha());
        m.add("softfabric_qp_dcqcn_target_rate_bytes_per_second", kGauge, "DCQCN's target rate Rt.", l,
              static_cast<double>(dc->target_rate().bps()) / 8);
      }
    }
  }
  return m.str();
}

}  // namespace sf::nic::app
