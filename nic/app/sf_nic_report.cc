// sf-nic's output. See sf_nic_report.h.
#include "nic/app/sf_nic_report.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>

#include "nic/app/perftest_report.h"
#include "nic/mrc/transport.h"

namespace sf::nic::app {

namespace {

PerftestVerb verb_of(WorkloadType t) {
  if (is_read(t)) return PerftestVerb::kRead;
  if (is_send(t)) return PerftestVerb::kSend;
  return PerftestVerb::kWrite;
}

PerftestTest test_of(WorkloadType t) {
  return {verb_of(t), is_latency(t) ? PerftestKind::kLat : PerftestKind::kBw};
}

// A latency workload's samples (ns of round trip) and when each began:
// perftest's (the time between successive posts of the ping-pong) when back
// to back, each round trip's post -> reply when paced (interval_us).
struct LatSamples {
  std::vector<int64_t> ns;
  std::vector<TimeNs> at;
};

LatSamples lat_samples(const Workload& w) {
  const WorkloadResult& r = w.result();
  LatSamples s;
  if (w.config().interval_us == 0) {
    for (size_t i = 1; i < r.lat_posts.size(); ++i) {
      s.ns.push_back((r.lat_posts[i] - r.lat_posts[i - 1]).ns());
      s.at.push_back(r.lat_posts[i - 1]);
    }
  } else {
    for (size_t i = 0; i < std::min(r.lat_posts.size(), r.lat_replies.size()); ++i) {
      s.ns.push_back((r.lat_replies[i] - r.lat_posts[i]).ns());
      s.at.push_back(r.lat_posts[i]);
    }
  }
  return s;
}

// Summed counters of the QPs of host h.
rc::QpCounters qp_sum(const Host& host) {
  rc::QpCounters s;
  for (uint32_t i = 0; i < host.qp_capacity(); ++i) {
    const rc::Qp& qp = host.qp_slot(i);
    if (!qp.in_use()) continue;
    const rc::QpCounters& c = qp.counters();
    for (size_t a = 0; a < s.rx.size(); ++a) s.rx[a] += c.rx[a];
    s.tx_data_pkts += c.tx_data_pkts;
    s.tx_data_bytes += c.tx_data_bytes;
    s.tx_retransmit_pkts += c.tx_retransmit_pkts;
    s.tx_acks += c.tx_acks;
    s.tx_naks += c.tx_naks;
    s.tx_rnr_naks += c.tx_rnr_naks;
    s.tx_cnps += c.tx_cnps;
    s.rx_cnps += c.rx_cnps;
    s.rx_ce += c.rx_ce;
    s.timeouts += c.timeouts;
    s.go_back += c.go_back;
    s.rnr_waits += c.rnr_waits;
    s.pace_lost_ns += c.pace_lost_ns;
    s.pace_idle_ns += c.pace_idle_ns;
    s.pace_burst_bytes += c.pace_burst_bytes;
  }
  return s;
}

// The MRC QPs of host h, summed: transport counters, and per EV index and
// per plane what the QPs sent on them (each QP's EV i is its own path, but
// the same index is the same UDP source port on every QP with the same
// ev_base, so per index is per path through an ECMP fabric).
struct MrcSum {
  uint32_t qps = 0;
  mrc::MrcCounters c;
  std::vector<uint64_t> ev_sent, ev_rtx, ev_retired;
  std::vector<uint64_t> plane_pkts;  // first transmissions + retransmissions per plane
  uint32_t evs_assumed_bad = 0;      // now
  uint64_t retire_refused = 0;       // losses that skipped, not retired, an EV at its plane's floor
};

MrcSum mrc_sum(const Host& host) {
  MrcSum s;
  for (uint32_t i = 0; i < host.qp_capacity(); ++i) {
    const rc::Qp& qp = host.qp_slot(i);
    if (!qp.in_use() || !qp.is_mrc()) continue;
    ++s.qps;
    const mrc::MrcCounters& c = qp.mrc()->counters();
    for (size_t a = 0; a < s.c.rx.size(); ++a) s.c.rx[a] += c.rx[a];
    s.c.tx_data_pkts += c.tx_data_pkts;
    s.c.tx_retransmits += c.tx_retransmits;
    s.c.rtx_sack += c.rtx_sack;
    s.c.rtx_nack += c.rtx_nack;
    s.c.rtx_timeout += c.rtx_timeout;
    s.c.tx_sacks += c.tx_sacks;
    s.c.tx_rcv_pen_sacks += c.tx_rcv_pen_sacks;
    s.c.tx_nacks += c.tx_nacks;
    s.c.tx_probes += c.tx_probes;
    s.c.tx_ev_probes += c.tx_ev_probes;
    s.c.tx_port_status += c.tx_port_status;
    s.c.timeouts += c.timeouts;
    s.c.stall_timeouts += c.stall_timeouts;
    s.c.down_timeouts += c.down_timeouts;
    s.c.ooo_arrivals += c.ooo_arrivals;
    s.c.ce_arrivals += c.ce_arrivals;
    s.c.no_usable_ev += c.no_usable_ev;
    s.c.probe_holes += c.probe_holes;
    s.c.rtx_alive_ev += c.rtx_alive_ev;
    const mrc::EvSet* ev = qp.mrc()->ev_set();
    if (ev == nullptr) continue;  // not yet RTR
    s.retire_refused += ev->retire_refused();
    if (s.ev_sent.size() < ev->size()) {
      s.ev_sent.resize(ev->size());
      s.ev_rtx.resize(ev->size());
      s.ev_retired.resize(ev->size());
    }
    if (s.plane_pkts.size() < ev->num_planes()) s.plane_pkts.resize(ev->num_planes());
    for (uint16_t e = 0; e < ev->size(); ++e) {
      const mrc::EvCounters& ec = ev->counters(e);
      s.ev_sent[e] += ec.sent;
      s.ev_rtx[e] += ec.retransmitted;
      s.ev_retired[e] += ec.retired;
      s.plane_pkts[ev->plane(e)] += ec.sent + ec.retransmitted;
      if (ev->state(e) == mrc::EvState::kAssumedBad) ++s.evs_assumed_bad;
    }
  }
  return s;
}

nlohmann::json mrc_json(const MrcSum& m, bool per_ev) {
  nlohmann::json rx = nlohmann::json::object();
  for (int a = 0; a < mrc::kNumMrcRx; ++a) {
    if (m.c.rx[a] != 0) rx[mrc::to_string(static_cast<mrc::MrcRx>(a))] = m.c.rx[a];
  }
  nlohmann::json j = {{"qps", m.qps},
                      {"tx_data_packets", m.c.tx_data_pkts},
                      {"retransmits", m.c.tx_retransmits},
                      {"rtx_sack", m.c.rtx_sack},
                      {"rtx_nack", m.c.rtx_nack},
                      {"rtx_timeout", m.c.rtx_timeout},
                      {"sacks_sent", m.c.tx_sacks},
                      {"rcv_pen_sacks_sent", m.c.tx_rcv_pen_sacks},
                      {"nacks_sent", m.c.tx_nacks},
                      {"probes_sent", m.c.tx_probes},
                      {"ev_probes_sent", m.c.tx_ev_probes},
                      {"port_status_sent", m.c.tx_port_status},
                      {"timeouts", m.c.timeouts},
                      {"stall_timeouts", m.c.stall_timeouts},
                      {"down_timeouts", m.c.down_timeouts},
                      {"ooo_arrivals", m.c.ooo_arrivals},
                      {"ce_arrivals", m.c.ce_arrivals},
                      {"no_usable_ev", m.c.no_usable_ev},
                      {"probe_holes", m.c.probe_holes},
                      {"rtx_alive_ev", m.c.rtx_alive_ev},
                      {"evs_assumed_bad", m.evs_assumed_bad},
                      {"retire_refused", m.retire_refused},
                      {"plane_packets", m.plane_pkts},
                      {"rx", rx}};
  if (per_ev) j["evs"] = {{"sent", m.ev_sent}, {"retransmitted", m.ev_rtx}, {"retired", m.ev_retired}};
  return j;
}

// The pacing rate of the host's first QP in use, Gb/s (line rate when unpaced).
double first_qp_rate_gbps(const NicNode& node, size_t h) {
  const Host& host = node.host(h);
  for (uint32_t i = 0; i < host.qp_capacity(); ++i) {
    const rc::Qp& qp = host.qp_slot(i);
    if (!qp.in_use()) continue;
    const BitRate r = qp.rate();
    return r.bps() == 0 ? 0.0 : r.gbps_value();
  }
  return 0.0;
}

// One QP's congestion control (docs/cc.md "Counters"): the algorithm, the
// rate and window in force, the RTT samples of the ACK-driven ones, and the
// algorithm's own state. Null for a QP without CC.
nlohmann::json qp_cc_json(const rc::Qp& qp) {
  if (!qp.cc_active()) return nullptr;
  const CongestionControl& cc = qp.congestion_control();
  nlohmann::json j = {{"qpn", qp.qp_num()},
                      {"cc", std::string(to_string(cc_algorithm(cc)))},
                      {"rate_gbps", qp.rate().bps() == 0 ? 0.0 : qp.rate().gbps_value()}};
  if (qp.cc_window() != kNoWindow) {
    const rc::QpCcStats& s = qp.cc_stats();
    j["window_bytes"] = qp.cc_window();
    j["inflight_bytes"] = qp.cc_inflight_bytes();
    j["acks"] = s.acks;
    j["rtt_samples"] = s.rtt_samples;
    j["rtt_last_us"] = s.rtt_last.us();
    j["rtt_min_us"] = s.rtt_samples == 0 ? 0.0 : s.rtt_min.us();
    j["rtt_avg_us"] = s.rtt_avg().us();
    j["rtt_max_us"] = s.rtt_max.us();
    j["rtos"] = s.rtos;
    j["lost_bytes"] = s.lost_bytes;
    j["int_acks"] = s.int_acks;
  }
  if (const auto* d = std::get_if<Dcqcn>(&cc)) {
    j["state"] = std::string(to_string(d->stage()));
    j["alpha"] = d->alpha();
    j["target_rate_gbps"] = d->target_rate().gbps_value();
  } else if (const auto* sw = std::get_if<Swift>(&cc)) {
    j["fcwnd_pkts"] = sw->fcwnd();
    j["ecwnd_pkts"] = sw->ecwnd();
    j["srtt_us"] = sw->srtt().us();
    j["decreases"] = sw->counters().fabric_decreases + sw->counters().endpoint_decreases;
    j["remote_delay_samples"] = qp.cc_stats().remote_delay_samples;  // cc_params remote_delay
    j["remote_delay_avg_us"] = qp.cc_stats().remote_delay_avg().us();
  } else if (const auto* b = std::get_if<Bbr>(&cc)) {
    j["state"] = std::string(to_string(b->phase()));
    j["btl_bw_gbps"] = static_cast<double>(b->btl_bw_bps()) / 1e9;
    j["rtprop_us"] = b->rtprop().us();
    j["pacing_gain"] = b->pacing_gain();
  } else if (const auto* h = std::get_if<Hpcc>(&cc)) {
    j["utilisation"] = h->utilisation();
    j["inc_stage"] = h->inc_stage();
    j["hops"] = h->hops();
    j["commits"] = h->counters().commits;
    j["md_steps"] = h->counters().md_steps;
  } else if (const auto* ns = std::get_if<Nscc>(&cc)) {
    const NsccCounters& k = ns->counters();
    j["quadrant"] = std::string(to_string(ns->last_quadrant()));
    j["base_rtt_us"] = ns->base_rtt().us();
    j["avg_delay_us"] = ns->avg_delay().us();
    j["proportional"] = k.proportional;
    j["fair"] = k.fair;
    j["decreases"] = k.decreases;
    j["no_change"] = k.no_change;
    j["trims"] = k.trims;
    j["quick_adapts"] = k.quick_adapts;
    j["penalties"] = k.penalties;
  }
  return j;
}

// The CC entries of the host's QPs that run one.
nlohmann::json qps_cc_json(const Host& host) {
  nlohmann::json a = nlohmann::json::array();
  for (uint32_t i = 0; i < host.qp_capacity(); ++i) {
    const rc::Qp& qp = host.qp_slot(i);
    if (!qp.in_use()) continue;
    if (nlohmann::json q = qp_cc_json(qp); !q.is_null()) a.push_back(std::move(q));
  }
  return a;
}

}  // namespace

std::string perftest_text(const Workload& w) {
  const AppWorkload& c = w.config();
  const WorkloadResult& r = w.result();
  PerftestBanner b;
  b.test = test_of(c.type);
  b.role = c.role == Role::kClient ? PerftestRole::kClient : PerftestRole::kServer;
  b.device = "sf-nic:" + w.host().name;
  b.num_qps = c.qps;
  if (c.transport == Transport::kMrc) b.connection_type = "MRC";  // perftest's row for the QP type
  b.tx_depth = c.tx_depth;
  b.cq_moderation = w.cq_moderation();
  b.mtu_bytes = w.path_mtu_bytes();
  b.gid_index = w.port().ipv4 ? 0 : 1;
  std::string out = format_banner(b);
  for (size_t i = 0; i < w.num_qps(); ++i) {
    out += format_qp_address(w.local_info()[i], false, b.test.verb, b.gid_index);
    out += format_qp_address(w.peer_info(i), true, b.test.verb, b.gid_index);
  }
  out += std::string(result_line());
  if (r.failed) {
    out += " " + c.name + " failed: " + r.status + "\n";
    return out + std::string(result_line());
  }
  if (c.role == Role::kServer && !is_latency(c.type) && !is_send(c.type)) {
    // write_bw / read_bw server: perftest prints the client's BW table, which
    // the client sent after DONE (xchg_bw_reports); none came (the client
    // failed or was stopped): the banner only.
    const auto& p = w.peer_bw();
    if (p && p->messages > 0 && p->elapsed.ns() > 0) {
      out += bw_header(BwUnits::kGbps) +
             format_bw_row(compute_bw({c.size_bytes, p->messages, p->elapsed, p->best_msg_time}, BwUnits::kGbps)) +
             std::string(result_line());
    }
    return out;
  }
  if (c.role == Role::kServer && r.messages == 0) return out;  // passive side: perftest prints the banner only
  if (is_latency(c.type)) {
    const std::vector<int64_t> d = lat_samples(w).ns;
    if ((c.duration_s > 0 && c.interval_us == 0) || d.size() < 3) {
      LatDurationResults lr{c.size_bytes, r.lat_round_trips, verb_of(c.type), r.last_completion - r.first_post};
      if (lr.iterations > 0 && lr.elapsed.ns() > 0) {
        out += lat_duration_header() + format_lat_duration_row(compute_lat_duration(lr));
      }
    } else {
      const uint64_t iters = c.interval_us != 0 ? r.lat_round_trips : c.iterations;
      const LatReport lr = compute_lat({c.size_bytes, iters, verb_of(c.type), d});
      out += lat_header() + format_lat_row(lr);
    }
  } else if (const Workload::PeerBw b = bw_result(w); b.messages > 0) {
    out += bw_header(BwUnits::kGbps) +
           format_bw_row(compute_bw({c.size_bytes, b.messages, b.elapsed, b.best_msg_time}, BwUnits::kGbps));
  }
  return out + std::string(result_line());
}

Workload::PeerBw bw_result(const Workload& w) {
  const WorkloadResult& r = w.result();
  Workload::PeerBw b;
  if (r.failed || r.messages == 0 || !(r.last_completion > r.first_post)) return b;
  b.messages = r.messages;
  b.elapsed = r.last_completion - r.first_post;
  // The peak over the first messages both lists recorded (kMaxPeakMessages).
  const size_t n = std::min(r.posted.size(), r.completed.size());
  if (n > 0) {
    b.best_msg_time = perftest_peak_msg_time(std::span<const TimeNs>(r.posted.data(), n),
                                             std::span<const TimeNs>(r.completed.data(), n));
  }
  return b;
}

nlohmann::json workload_json(const Workload& w) {
  const AppWorkload& c = w.config();
  const WorkloadResult& r = w.result();
  const double sec = r.first_post != TimeNs::max() && r.last_completion > r.first_post
                         ? (r.last_completion - r.first_post).sec()
                         : 0.0;
  nlohmann::json j = {{"name", c.name},
                      {"host", w.host().name},
                      {"port", w.config().port},
                      {"type", std::string(to_string(c.type))},
                      {"role", std::string(to_string(c.role))},
                      {"transport", std::string(to_string(c.transport))},
                      {"bytes", r.bytes},
                      {"messages", r.messages},
                      {"seconds", sec},
                      {"goodput_gbps", sec > 0 ? static_cast<double>(r.bytes) * 8 / sec / 1e9 : 0.0},
                      {"msg_rate_mpps", sec > 0 ? static_cast<double>(r.messages) / sec / 1e6 : 0.0},
                      {"completion_s", sec},
                      {"latency_us", nullptr},
                      {"status", r.status},
                      {"verify_errors", r.verify_errors}};
  // Times since connect() (the origin of start_ms, about the same moment in
  // every process of a run; virtual 0 in sf-sim).
  if (r.first_post != TimeNs::max()) {
    const TimeNs end = std::max(r.last_completion, r.first_post);
    j["start_s"] = (r.first_post - r.connected_at).sec();
    j["end_s"] = (end - r.connected_at).sec();
  }
  if (is_latency(c.type)) {
    const LatSamples ls = lat_samples(w);
    std::vector<int64_t> d = ls.ns;
    // One-way for WRITE/SEND (half the round trip), as perftest reports.
    const double f = is_read(c.type) ? 1e3 : 2e3;
    if (c.samples) {
      nlohmann::json t = nlohmann::json::array(), us = nlohmann::json::array();
      for (size_t i = 0; i < d.size(); ++i) {
        t.push_back((ls.at[i] - r.connected_at).sec());
        us.push_back(static_cast<double>(d[i]) / f);
      }
      j["latency_samples"] = {{"t_s", t}, {"us", us}};
    }
    if (!d.empty()) {
      std::sort(d.begin(), d.end());
      double sum = 0;
      for (int64_t x : d) sum += static_cast<double>(x);
      auto pct = [&](double p) { return static_cast<double>(d[std::min(d.size() - 1, static_cast<size_t>(p * d.size()))]) / f; };
      j["latency_us"] = {{"min", static_cast<double>(d.front()) / f},
                         {"p50", pct(0.50)},
                         {"p99", pct(0.99)},
                         {"max", static_cast<double>(d.back()) / f},
                         {"avg", sum / static_cast<double>(d.size()) / f},
                         {"samples", d.size()}};
    }
  }
  return j;
}

HostPortSum port_sum(const NicNode& node, const Host& host) {
  HostPortSum s;
  for (uint8_t k = 1; k <= host.num_ports(); ++k) {
    const PortId port = host.node_port(k);
    const NicPortCounters& pc = node.counters(port);
    s.c.rx_pkts += pc.rx_pkts;
    s.c.rx_bytes += pc.rx_bytes;
    s.c.tx_pkts += pc.tx_pkts;
    s.c.tx_bytes += pc.tx_bytes;
    s.c.tx_ctrl_pkts += pc.tx_ctrl_pkts;
    s.c.tx_pfc_frames += pc.tx_pfc_frames;
    s.c.rx_pfc_frames += pc.rx_pfc_frames;
    s.c.rx_int_frames += pc.rx_int_frames;
    s.c.paused_skips += pc.paused_skips;
    for (int d = 0; d < kNumRxDrops; ++d) s.c.drops[d] += pc.drops[d];
    const PfcRxCounters& rx = node.pfc_rx(port).counters();
    const PfcTxCounters& tx = node.pfc_tx(port).counters();
    for (int p = 0; p < kPfcPrios; ++p) {
      s.rx.pause_frames[p] += rx.pause_frames[p];
      s.tx.pause_frames[p] += tx.pause_frames[p];
    }
  }
  return s;
}

namespace {

nlohmann::json drops_json(const NicPortCounters& pc) {
  nlohmann::json drops = nlohmann::json::object();
  for (int d = 0; d < kNumRxDrops; ++d) {
    if (pc.drops[d] != 0) drops[to_string(static_cast<RxDrop>(d))] = pc.drops[d];
  }
  return drops;
}

std::string mac_text(const wire::MacAddr& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m.bytes[0], m.bytes[1], m.bytes[2], m.bytes[3],
                m.bytes[4], m.bytes[5]);
  return b;
}

std::string ip_text(const rc::LocalAddr& a) {
  char b[INET6_ADDRSTRLEN] = {};
  if (a.has_ipv4) return inet_ntop(AF_INET, a.ipv4.bytes.data(), b, sizeof b) != nullptr ? b : "";
  if (a.has_ipv6) return inet_ntop(AF_INET6, a.ipv6.bytes.data(), b, sizeof b) != nullptr ? b : "";
  return "";
}

}  // namespace

nlohmann::json host_json(const NicNode& node, size_t h) {
  const Host& host = node.host(h);
  const HostPortSum ps = port_sum(node, host);
  const NicPortCounters& pc = ps.c;
  const rc::QpCounters q = qp_sum(host);
  nlohmann::json j = {{"name", host.config().name},
                      {"tx_packets", pc.tx_pkts},
                      {"rx_packets", pc.rx_pkts},
                      {"tx_bytes", pc.tx_bytes},
                      {"rx_bytes", pc.rx_bytes},
                      {"cnp_sent", q.tx_cnps},
                      {"cnp_received", q.rx_cnps},
                      {"ecn_ce_received", q.rx_ce},
                      {"retransmits", q.tx_retransmit_pkts},
                      {"timeouts", q.timeouts},
                      {"go_back", q.go_back},
                      {"naks_sent", q.tx_naks + q.tx_rnr_naks},
                      {"rx_pfc_frames", pc.rx_pfc_frames},
                      {"tx_pfc_frames", pc.tx_pfc_frames},
                      // Frames for a QP from another source address / partition: dropped.
                      {"rx_bad_src", q.rx[static_cast<int>(rc::RxAction::kBadSrc)]},
                      {"rx_bad_pkey", q.rx[static_cast<int>(rc::RxAction::kBadPkey)]}};
  for (int p = 0; p < kPfcPrios; ++p) {
    j["rx_prio" + std::to_string(p) + "_pause"] = ps.rx.pause_frames[p];
    j["tx_prio" + std::to_string(p) + "_pause"] = ps.tx.pause_frames[p];
  }
  j["drops"] = drops_json(pc);
  if (const MrcSum m = mrc_sum(host); m.qps > 0) {
    j["mrc"] = mrc_json(m, true);
    j["retransmits"] = q.tx_retransmit_pkts + m.c.tx_retransmits;
    j["timeouts"] = q.timeouts + m.c.timeouts;
  }
  j["rx_int_frames"] = pc.rx_int_frames;
  if (nlohmann::json cc = qps_cc_json(host); !cc.empty()) j["qp_cc"] = std::move(cc);
  // Per verbs port: its address and its node port's counters (the host's
  // figures above are their sums).
  nlohmann::json ports = nlohmann::json::array();
  for (uint8_t k = 1; k <= host.num_ports(); ++k) {
    const PortId port = host.node_port(k);
    const NicPortCounters& c = node.counters(port);
    const rc::LocalAddr& a = host.local(k);
    nlohmann::json e = {{"port", k},
                        {"mac", mac_text(a.mac)},
                        {"ip", ip_text(a)},
                        {"tx_packets", c.tx_pkts},
                        {"rx_packets", c.rx_pkts},
                        {"tx_bytes", c.tx_bytes},
                        {"rx_bytes", c.rx_bytes},
                        {"tx_ctrl_packets", c.tx_ctrl_pkts},
                        {"rx_pfc_frames", c.rx_pfc_frames},
                        {"tx_pfc_frames", c.tx_pfc_frames},
                        {"paused_skips", c.paused_skips},
                        {"drops", drops_json(c)}};
    if (a.has_gateway) e["gateway_mac"] = mac_text(a.gateway);
    // ARP / ND and the gateway's resolution (routed ports; docs/nic-app.md "Routed fabrics").
    const Neighbors& nb = node.neighbors();
    const NeighborCounters& n = nb.counters(static_cast<uint16_t>(port));
    if (nb.l3(static_cast<uint16_t>(port)).routed() || n.rx_arp + n.rx_nd > 0) {
      nlohmann::json ne = {{"rx_arp", n.rx_arp},
                           {"rx_nd", n.rx_nd},
                           {"tx_arp_replies", n.tx_arp_replies},
                           {"tx_arp_requests", n.tx_arp_requests},
                           {"tx_announcements", n.tx_garp},
                           {"tx_na", n.tx_na},
                           {"tx_ns", n.tx_ns},
                           {"gateway_changes", n.gateway_changes},
                           {"probe_failures", n.probe_failures}};
      for (const bool v6 : {false, true}) {
        const Neighbors::State st = nb.gateway_state(static_cast<uint16_t>(port), v6);
        if (st != Neighbors::State::kNone) ne[v6 ? "gateway6_state" : "gateway_state"] = Neighbors::to_string(st);
      }
      e["neighbors"] = ne;
    }
    ports.push_back(e);
  }
  j["ports"] = ports;
  return j;
}

nlohmann::json report_json(const NicNode& node, const std::vector<Workload*>& workloads) {
  nlohmann::json j = {{"workloads", nlohmann::json::array()}, {"hosts", nlohmann::json::array()}};
  for (const Workload* w : workloads) j["workloads"].push_back(workload_json(*w));
  for (size_t h = 0; h < node.num_hosts(); ++h) j["hosts"].push_back(host_json(node, h));
  return j;
}

nlohmann::json timeseries_sample(const NicNode& node, double t_s) {
  nlohmann::json hosts = nlohmann::json::object();
  for (size_t h = 0; h < node.num_hosts(); ++h) {
    const Host& host = node.host(h);
    const HostPortSum ps = port_sum(node, host);  // over the host's ports
    const NicPortCounters& pc = ps.c;
    const rc::QpCounters q = qp_sum(host);
    uint64_t rx_pause = 0, tx_pause = 0;
    for (int p = 0; p < kPfcPrios; ++p) {
      rx_pause += ps.rx.pause_frames[p];
      tx_pause += ps.tx.pause_frames[p];
    }
    hosts[host.config().name] = {{"pfc_pause_sent", tx_pause},
                                 {"pfc_pause_received", rx_pause},
                                 {"tx_packets", pc.tx_pkts},
                                 {"tx_bytes", pc.tx_bytes},
                                 {"rx_bytes", pc.rx_bytes},
                                 {"cnp_sent", q.tx_cnps},
                                 {"cnp_received", q.rx_cnps},
                                 {"retransmits", q.tx_retransmit_pkts},
                                 {"pace_lost_ns", q.pace_lost_ns},
                                 {"pace_idle_ns", q.pace_idle_ns},
                                 {"pace_burst_bytes", q.pace_burst_bytes},
                                 {"rate_gbps", first_qp_rate_gbps(node, h)}};
    if (const MrcSum m = mrc_sum(host); m.qps > 0) {
      // Per EV too: the load of every path over time (docs/nic-app.md).
      hosts[host.config().name]["mrc"] = mrc_json(m, true);
      hosts[host.config().name]["retransmits"] = q.tx_retransmit_pkts + m.c.tx_retransmits;
    }
    if (nlohmann::json cc = qps_cc_json(host); !cc.empty()) hosts[host.config().name]["qp_cc"] = std::move(cc);
    if (host.num_ports() > 1) {
      // A multi-port host: each port's (plane's) own traffic too.
      nlohmann::json ports = nlohmann::json::array();
      for (uint8_t k = 1; k <= host.num_ports(); ++k) {
        const NicPortCounters& c = node.counters(host.node_port(k));
        ports.push_back({{"port", k}, {"tx_packets", c.tx_pkts}, {"tx_bytes", c.tx_bytes}, {"rx_bytes", c.rx_bytes}});
      }
      hosts[host.config().name]["ports"] = ports;
    }
  }
  return {{"t_s", t_s}, {"hosts", hosts}};
}

}  // namespace sf::nic::app
