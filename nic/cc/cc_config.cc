// nic.json "cc" / "cc_params" (cc_config.h).
#include "nic/cc/cc_config.h"

#include <string>

namespace sf::nic {

namespace {

using config::ConfigNode;
using config::in_range;

double opt_frac(ConfigNode& n, std::string_view key, double def, double lo, double hi) {
  const double v = n.opt<double>(key, def);
  if (!(v >= lo && v <= hi)) {
    n.fail_key(key, "must be within [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

// "field: why" from validate() -> "path.field: why".
template <typename P>
void check(ConfigNode& n, const P& p) {
  if (const auto err = p.validate()) {
    const std::string_view e = *err;
    const size_t colon = e.find(':');
    if (colon == std::string_view::npos) n.fail(e);
    const std::string_view why = e.substr(colon + 1);
    n.fail_key(e.substr(0, colon), why.starts_with(' ') ? why.substr(1) : why);
  }
}

SwiftParams parse_swift(ConfigNode& n) {
  SwiftParams p;
  p.ai = opt_frac(n, "ai", p.ai, 0, 1e6);
  p.endpoint_ai = opt_frac(n, "endpoint_ai", p.endpoint_ai, 0, 1e6);
  p.beta = opt_frac(n, "beta", p.beta, 0, 1);
  p.max_mdf = opt_frac(n, "max_mdf", p.max_mdf, 0, 1);
  p.min_cwnd = opt_frac(n, "min_cwnd", p.min_cwnd, 0, 1e9);
  p.max_cwnd = opt_frac(n, "max_cwnd", p.max_cwnd, 0, 1e9);
  p.min_ecwnd = opt_frac(n, "min_ecwnd", p.min_ecwnd, 0, 1e9);
  p.max_ecwnd = opt_frac(n, "max_ecwnd", p.max_ecwnd, 0, 1e9);
  p.initial_cwnd = opt_frac(n, "initial_cwnd", p.initial_cwnd, 0, 1e9);
  p.base_target = n.opt_duration("base_target", p.base_target);
  p.per_hop = n.opt_duration("per_hop", p.per_hop);
  p.fs_range = n.opt_duration("fs_range", p.fs_range);
  p.fs_min_cwnd = opt_frac(n, "fs_min_cwnd", p.fs_min_cwnd, 0, 1e9);
  p.fs_max_cwnd = opt_frac(n, "fs_max_cwnd", p.fs_max_cwnd, 0, 1e9);
  p.endpoint_target = n.opt_duration("endpoint_target", p.endpoint_target);
  p.rtt_ewma_old = opt_frac(n, "rtt_ewma_old", p.rtt_ewma_old, 0, 1);
  p.retx_reset_threshold = n.opt<uint32_t>("retx_reset_threshold", p.retx_reset_threshold, in_range<uint32_t>(1, 1000));
  p.remote_delay = n.opt<bool>("remote_delay", p.remote_delay);
  return p;
}

BbrParams parse_bbr(ConfigNode& n) {
  BbrParams p;
  p.high_gain = opt_frac(n, "high_gain", p.high_gain, 0, 100);
  p.drain_gain = opt_frac(n, "drain_gain", p.drain_gain, 0, 100);
  p.cwnd_gain = opt_frac(n, "cwnd_gain", p.cwnd_gain, 0, 100);
  if (n.has("probe_bw_gains")) {
    ConfigNode g = n.child("probe_bw_gains");
    const auto el = g.elements();
    if (el.size() != kBbrCycleLen) g.fail("must have " + std::to_string(kBbrCycleLen) + " gains");
    for (size_t i = 0; i < el.size(); ++i) {
      const double v = el[i].as<double>();
      if (!(v > 0 && v <= 100)) el[i].fail("must be within (0, 100]");
      p.probe_bw_gains[i] = v;
    }
  }
  p.probe_bw_start_phase = n.opt<uint32_t>("probe_bw_start_phase", p.probe_bw_start_phase,
                                           in_range<uint32_t>(0, kBbrCycleLen - 1));
  p.bw_window_rounds = n.opt<uint32_t>("bw_window_rounds", p.bw_window_rounds, in_range<uint32_t>(1, 1000));
  p.rtprop_window = n.opt_duration("rtprop_window", p.rtprop_window);
  p.probe_rtt_time = n.opt_duration("probe_rtt_time", p.probe_rtt_time);
  p.full_bw_thresh = opt_frac(n, "full_bw_thresh", p.full_bw_thresh, 1, 100);
  p.full_bw_cnt = n.opt<uint32_t>("full_bw_cnt", p.full_bw_cnt, in_range<uint32_t>(1, 1000));
  p.min_cwnd_pkts = n.opt<uint32_t>("min_cwnd_pkts", p.min_cwnd_pkts, in_range<uint32_t>(1, 1u << 20));
  p.pacing_margin = opt_frac(n, "pacing_margin", p.pacing_margin, 0, 1);
  p.initial_cwnd_pkts = n.opt<uint32_t>("initial_cwnd_pkts", p.initial_cwnd_pkts, in_range<uint32_t>(1, 1u << 20));
  if (n.has("initial_rate")) p.initial_rate = n.req_rate("initial_rate");
  return p;
}

HpccParams parse_hpcc(ConfigNode& n) {
  HpccParams p;
  p.base_rtt = n.opt_duration("base_rtt", p.base_rtt);
  p.eta = opt_frac(n, "eta", p.eta, 0, 1);
  p.max_stage = n.opt<uint32_t>("max_stage", p.max_stage, in_range<uint32_t>(0, 1000));
  if (n.has("rate_ai")) p.rate_ai = n.req_rate("rate_ai");
  if (n.has("min_rate")) p.min_rate = n.req_rate("min_rate");
  p.update_hops_every_ack = n.opt<bool>("update_hops_every_ack", p.update_hops_every_ack);
  if (n.has("initial_rate")) p.initial_rate = n.req_rate("initial_rate");
  return p;
}

NsccParams parse_nscc(ConfigNode& n) {
  NsccParams p;
  p.base_rtt_from_qp = !n.has("base_rtt");
  p.base_rtt = n.opt_duration("base_rtt", p.base_rtt);
  p.target_qdelay = n.opt_duration("target_qdelay", p.target_qdelay);
  p.max_cwnd_bdp = opt_frac(n, "max_cwnd_bdp", p.max_cwnd_bdp, 0, 1000);
  p.initial_cwnd_bdp = opt_frac(n, "initial_cwnd_bdp", p.initial_cwnd_bdp, 0, 1000);
  p.min_cwnd_bytes = static_cast<uint32_t>(n.opt_bytes("min_cwnd_bytes", p.min_cwnd_bytes, {0, UINT32_MAX}));
  p.pi_bdp = opt_frac(n, "pi_bdp", p.pi_bdp, 0, 1000);
  p.fi_mtus = opt_frac(n, "fi_mtus", p.fi_mtus, 0, 1e6);
  p.gamma = opt_frac(n, "gamma", p.gamma, 0, 1);
  p.max_md = opt_frac(n, "max_md", p.max_md, 0, 1);
  p.qa_threshold_targets = opt_frac(n, "qa_threshold_targets", p.qa_threshold_targets, 0, 1e6);
  p.delay_ewma = opt_frac(n, "delay_ewma", p.delay_ewma, 0, 1);
  return p;
}

template <typename P, typename F>
void parse_into(ConfigNode& parent, CcChoice& c, F parse) {
  if (!parent.has("cc_params")) return;
  ConfigNode n = parent.child("cc_params");
  n.expect_object();
  P p = parse(n);
  n.finish();
  check(n, p);
  c.params = p;
}

}  // namespace

CcChoice parse_cc_choice(ConfigNode& n) {
  const auto name = n.opt<std::string>("cc", "none");
  const auto choice = cc_choice_from_string(name, CcEvents::kAckDriven);
  if (!choice) n.fail_key("cc", "\"" + name + "\" is not one of " + std::string(kCcChoiceNamesAckDriven));
  CcChoice c = *choice;
  switch (c.algorithm) {
    case CcAlgorithm::kSwift: parse_into<SwiftParams>(n, c, parse_swift); break;
    case CcAlgorithm::kBbr: parse_into<BbrParams>(n, c, parse_bbr); break;
    case CcAlgorithm::kHpcc: parse_into<HpccParams>(n, c, parse_hpcc); break;
    case CcAlgorithm::kNscc: parse_into<NsccParams>(n, c, parse_nscc); break;
    case CcAlgorithm::kNone:
    case CcAlgorithm::kDcqcn:
      if (n.has("cc_params")) n.fail_key("cc_params", "\"" + name + "\" has no cc_params (swift, bbr, hpcc, nscc do)");
      break;
  }
  return c;
}

}  // namespace sf::nic
