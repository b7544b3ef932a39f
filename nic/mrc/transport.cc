// mrc::Transport: the MRC QP's protocol engine. See transport.h and
// docs/mrc.md "Transport".
#include "nic/mrc/transport.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <span>
#include <string>
#include <variant>

#include "common/wire/icrc.h"
#include "common/wire/srv6.h"
#include "nic/rc/chain_copy.h"
#include "nic/rc/chain_writer.h"
#include "nic/rc/identifiers.h"
#include "nic/rc/qp.h"

namespace sf::nic::mrc {

using verbs::QpState;
using verbs::WcStatus;
using wire::MrcNackReason;
using wire::MrcOp;
using wire::Psn;

namespace {

constexpr uint32_t kRecRing = 128;       // send records at least; 2 x mpr rounded up to a power of two above
constexpr uint32_t kFrameScratch = 8192;  // one frame: MTU 4096 + every header
constexpr uint16_t kEvProbeFlag = 0x8000;  // probe id of a retired-EV probe: flag | EV index

bool is_ce(const wire::FrameInfo& fi) {
  // SRv6: the switches mark the outer header (RFC 6040: a CE outer is CE).
  if (fi.outer_ipv6 != nullptr && fi.outer_ipv6->ecn() == wire::Ecn::kCe) return true;
  if (fi.ipv4 != nullptr) return fi.ipv4->ecn() == wire::Ecn::kCe;
  if (fi.ipv6 != nullptr) return fi.ipv6->ecn() == wire::Ecn::kCe;
  return false;
}

uint8_t dscp_of(const wire::FrameInfo& fi) {
  if (fi.outer_ipv6 != nullptr) return fi.outer_ipv6->dscp();
  if (fi.ipv4 != nullptr) return fi.ipv4->dscp();
  if (fi.ipv6 != nullptr) return fi.ipv6->dscp();
  return 0;
}

// Copies a built frame into an mbuf (chained past the first segment's room;
// the headers always fit the first).
rte_mbuf* to_mbuf(rte_mempool* pool, const uint8_t* p, uint32_t n) {
  rte_mbuf* head = rte_pktmbuf_alloc(pool);
  if (head == nullptr) return nullptr;
  rte_mbuf* tail = head;
  while (n > 0) {
    uint32_t room = rte_pktmbuf_tailroom(tail);
    if (room == 0) {
      rte_mbuf* seg = rte_pktmbuf_alloc(pool);
      if (seg == nullptr) {
        rte_pktmbuf_free(head);
        return nullptr;
      }
      tail->next = seg;
      tail = seg;
      head->nb_segs++;
      room = rte_pktmbuf_tailroom(seg);
    }
    const uint32_t k = std::min(room, n);
    rc::copy_bytes(rte_pktmbuf_mtod_offset(tail, uint8_t*, tail->data_len), p, k);
    tail->data_len = static_cast<uint16_t>(tail->data_len + k);
    head->pkt_len += k;
    p += k;
    n -= k;
  }
  return head;
}

MrcOp data_op(bool first, bool last, bool imm) {
  if (first && last) return imm ? MrcOp::kWriteOnlyImm : MrcOp::kWriteOnly;
  if (first) return MrcOp::kWriteFirst;
  if (last) return imm ? MrcOp::kWriteLastImm : MrcOp::kWriteLast;
  return MrcOp::kWriteMiddle;
}

}  // namespace

const char* to_string(MrcRx r) {
  switch (r) {
    case MrcRx::kPlaced: return "placed";
    case MrcRx::kDuplicate: return "duplicate";
    case MrcRx::kOutOfWindow: return "out_of_window";
    case MrcRx::kMsgWindow: return "msg_window";
    case MrcRx::kTrimmed: return "trimmed";
    case MrcRx::kAccessError: return "access_error";
    case MrcRx::kInvalid: return "invalid_request";
    case MrcRx::kWrongState: return "wrong_state";
    case MrcRx::kBadSrc: return "bad_src";
    case MrcRx::kBadPkey: return "bad_pkey";
    case MrcRx::kNotMrc: return "not_mrc";
    case MrcRx::kUnexpectedOp: return "unexpected_op";
    case MrcRx::kSack: return "sack";
    case MrcRx::kSackInvalid: return "sack_invalid";
    case MrcRx::kNack: return "nack";
    case MrcRx::kNackStale: return "nack_stale";
    case MrcRx::kProbe: return "probe";
    case MrcRx::kProbeResponse: return "probe_response";
    case MrcRx::kPortStatus: return "port_status";
    case MrcRx::kPortStatusAnswered: return "port_status_answered";
    case MrcRx::kEvProbe: return "ev_probe";
    case MrcRx::kEvProbeAnswered: return "ev_probe_answered";
    case MrcRx::kCount: break;
  }
  return "?";
}

// ---------------------------------------------------------------- control path

int Transport::modify(const verbs::MrcQpAttr& a, int mask, QpState state) {
  using namespace verbs;
  error_ = "";
  auto bad = [&](const char* why) {
    error_ = why;
    return EINVAL;
  };
  if ((mask & ~kMrcAllAttrs) != 0) return bad("mrc_modify_qp: unknown mask bits");
  if ((mask & kMrcProfile) != 0 && state != QpState::kReset && state != QpState::kInit) {
    return bad("mrc_modify_qp: the EV profile (num_evs, num_planes, backup_per_plane, ev_base, "
               "probes_to_readmit, mpr, ev_mode, seed) may change in RESET or INIT only");
  }
  MrcQpAttr n = attr_;
  if (mask & kMrcNumEvs) n.num_evs = a.num_evs;
  if (mask & kMrcNumPlanes) n.num_planes = a.num_planes;
  if (mask & kMrcBackupPerPlane) n.backup_per_plane = a.backup_per_plane;
  if (mask & kMrcEvBase) n.ev_base = a.ev_base;
  if (mask & kMrcProbesToReadmit) n.probes_to_readmit = a.probes_to_readmit;
  if (mask & kMrcMpr) n.mpr = a.mpr;
  if (mask & kMrcEvMode) n.ev_mode = a.ev_mode;
  if (mask & kMrcSeed) n.seed = a.seed;
  if (mask & kMrcSrv6Path) n.srv6 = a.srv6;
  if (mask & kMrcWindowBytes) n.window_bytes = a.window_bytes;
  if (mask & kMrcBaseRtt) n.base_rtt_ns = a.base_rtt_ns;
  if (mask & kMrcRto) n.rto_ns = a.rto_ns;
  if (mask & kMrcOooTolerance) n.ooo_tolerance_ns = a.ooo_tolerance_ns;
  if (mask & kMrcProbeInterval) n.probe_interval_ns = a.probe_interval_ns;
  if (mask & kMrcEvProbeInterval) n.ev_probe_interval_ns = a.ev_probe_interval_ns;
  if (mask & kMrcSackCoalesce) {
    n.sack_every_pkts = a.sack_every_pkts;
    n.sack_delay_ns = a.sack_delay_ns;
  }
  if (mask & kMrcMaxTimeouts) n.max_timeouts = a.max_timeouts;
  if (mask & kMrcTrimLastHopDscp) n.trim_lasthop_dscp = a.trim_lasthop_dscp;
  if (mask & kMrcEvProbeEndpoint) n.ev_probe_endpoint = a.ev_probe_endpoint;
  if (mask & kMrcSackAlign) n.sack_align = a.sack_align;
  if (mask & kMrcRcvPenalty) {
    n.rcv_pen_rq = a.rcv_pen_rq;
    n.rcv_pen_ooo_pct = a.rcv_pen_ooo_pct;
  }
  if (mask & kMrcPeerPorts) {
    n.num_peer_ports = a.num_peer_ports;
    for (int i = 0; i < 32; ++i) {
      n.peer_gid[i] = a.peer_gid[i];
      for (int j = 0; j < 6; ++j) n.peer_mac[i][j] = a.peer_mac[i][j];
    }
  }

  if (n.num_evs < 1 || n.num_evs > kMaxEvs) return bad("mrc_modify_qp: num_evs: must be 1..256");
  if (n.num_planes > q_.env_.num_ports) return bad("mrc_modify_qp: num_planes: more planes than the host has ports");
  const uint16_t planes = n.num_planes == 0 ? q_.env_.num_ports : n.num_planes;
  if (n.num_evs % planes != 0) return bad("mrc_modify_qp: num_evs: must be a multiple of num_planes");
  if (n.backup_per_plane >= n.num_evs / planes) {
    return bad("mrc_modify_qp: backup_per_plane: must be below num_evs / num_planes");
  }
  if (n.probes_to_readmit < 1) return bad("mrc_modify_qp: probes_to_readmit: must be >= 1");
  if (n.mpr < 1 || n.mpr > SackTracker::kMaxWindow) return bad("mrc_modify_qp: mpr: must be 1..256");
  if (n.sack_align != 1 && n.sack_align != 8) return bad("mrc_modify_qp: sack_align: 1 (CACK + 1) or 8 (UET)");
  if (n.ev_mode != MrcEvMode::kUdpSport && n.ev_mode != MrcEvMode::kSrv6) return bad("mrc_modify_qp: ev_mode: unknown mode");
  if (n.ev_mode == MrcEvMode::kSrv6) {
    if (const char* e = srv6_error(n, planes)) return bad(e);
  }
  if (n.base_rtt_ns < 100 || n.base_rtt_ns > 10'000'000) return bad("mrc_modify_qp: base_rtt_ns: must be 100..10,000,000");
  if (n.rto_ns < 1000 || n.rto_ns > 1'000'000'000) return bad("mrc_modify_qp: rto_ns: must be 1,000..1,000,000,000");
  if (n.ooo_tolerance_ns > n.rto_ns) return bad("mrc_modify_qp: ooo_tolerance_ns: must not exceed rto_ns");
  if (n.probe_interval_ns < 1000 || n.probe_interval_ns > n.rto_ns) {
    return bad("mrc_modify_qp: probe_interval_ns: must be 1,000..rto_ns");
  }
  if (n.ev_probe_interval_ns < 1000 || n.ev_probe_interval_ns > 1'000'000'000) {
    return bad("mrc_modify_qp: ev_probe_interval_ns: must be 1,000..1,000,000,000");
  }
  if (n.sack_every_pkts < 1 || n.sack_every_pkts > 64) return bad("mrc_modify_qp: sack_every_pkts: must be 1..64");
  if (n.sack_delay_ns > 1'000'000) return bad("mrc_modify_qp: sack_delay_ns: must be 0..1,000,000");
  if (n.max_timeouts < 1) return bad("mrc_modify_qp: max_timeouts: must be >= 1");
  if (n.trim_lasthop_dscp > 63 && n.trim_lasthop_dscp != 0xFF) {
    return bad("mrc_modify_qp: trim_lasthop_dscp: a DSCP 0..63 or 0xFF (never)");
  }
  if (n.num_peer_ports != 0 && n.num_peer_ports != planes) {
    return bad("mrc_modify_qp: num_peer_ports: 0 or the number of planes");
  }
  if (n.rcv_pen_rq > wire::MrcCcState::kMaxRcvCwndPen) return bad("mrc_modify_qp: rcv_pen_rq: must be 0..127");
  if (n.rcv_pen_ooo_pct < 1 || n.rcv_pen_ooo_pct > 100) {
    return bad("mrc_modify_qp: rcv_pen_ooo_pct: must be 1..100 (100 = never)");
  }
  if (n.window_bytes != 0 && n.window_bytes < q_.mtu_) {
    // Checked against the MTU once it is known (RTR) too; here against the current one.
    return bad("mrc_modify_qp: window_bytes: below one MTU");
  }
  attr_ = n;
  invalidate_deadline();  // attr_.rto_ns
  if (ev_ && (mask & kMrcWindowBytes)) window_ = n.window_bytes != 0 ? n.window_bytes : window_;
  if (st_ && (mask & kMrcSackAlign)) st_->set_align(n.sack_align);
  return 0;
}

const char* Transport::srv6_error(const verbs::MrcQpAttr& n, uint16_t planes) {
  const verbs::MrcSrv6Path& t = n.srv6;
  auto fail = [&](std::string why) {
    error_buf_ = "mrc_modify_qp: " + std::move(why);
    return error_buf_.c_str();
  };
  if (t.num_planes != planes) {
    return fail("srv6.num_planes: the SRv6 path template has " + std::to_string(t.num_planes) +
                " plane(s), the QP has " + std::to_string(planes) + " (ev_mode srv6 needs one per plane, kMrcSrv6Path)");
  }
  if (t.block[0] == 0 && t.block[1] == 0 && t.block[2] == 0 && t.block[3] == 0) {
    return fail("srv6.block: the SRv6 locator block must not be 0 (e.g. fcbb:bbbb)");
  }
  if (t.hop_limit == 0) return fail("srv6.hop_limit: must be 1..255");
  for (uint16_t p = 0; p < planes; ++p) {
    const verbs::MrcSrv6Plane& pl = t.plane[p];
    const std::string at = "srv6.planes[" + std::to_string(p) + "]";
    if (pl.num_uplinks < 1 || pl.num_uplinks > verbs::kMrcSrv6MaxUplinks) {
      return fail(at + ".uplinks: " + std::to_string(pl.num_uplinks) + " SRv6 uplink uSID(s), must be 1..16");
    }
    if (pl.num_before + 1 + pl.num_after > verbs::kMrcSrv6MaxUsids) {
      return fail(at + ": before (" + std::to_string(pl.num_before) + ") + 1 uplink + after (" +
                  std::to_string(pl.num_after) + ") uSIDs: at most 6 fit one SRv6 address after a 32-bit block");
    }
    if (pl.num_uplinks > n.num_evs / planes) {
      return fail(at + ".uplinks: " + std::to_string(pl.num_uplinks) + " SRv6 uplinks but only " +
                  std::to_string(n.num_evs / planes) + " EV(s) per plane: some would never be used");
    }
    auto zero = [](const uint16_t* u, uint8_t k) { return std::find(u, u + k, uint16_t{0}) != u + k; };
    if (zero(pl.before, pl.num_before)) return fail(at + ".before: uSID 0 (the end of the list) inside the SRv6 path");
    if (zero(pl.uplinks, pl.num_uplinks)) return fail(at + ".uplinks: uSID 0 (the end of the list) inside the SRv6 path");
    if (zero(pl.after, pl.num_after)) return fail(at + ".after: uSID 0 (the end of the list) inside the SRv6 path");
  }
  return nullptr;
}

namespace {

// block | before | uplinks[uplink] | after | 0 (srv6_error checked the template).
wire::Ipv6Addr srv6_address(const verbs::MrcSrv6Path& t, uint8_t plane, uint16_t uplink) {
  const verbs::MrcSrv6Plane& pl = t.plane[plane];
  std::array<uint16_t, verbs::kMrcSrv6MaxUsids> u{};
  size_t k = 0;
  for (uint8_t i = 0; i < pl.num_before; ++i) u[k++] = pl.before[i];
  u[k++] = pl.uplinks[uplink % pl.num_uplinks];
  for (uint8_t i = 0; i < pl.num_after; ++i) u[k++] = pl.after[i];
  wire::Ipv6Addr a{};
  wire::make_usid_address(a, std::span<const uint8_t>(t.block, 4), std::span<const uint16_t>(u.data(), k));
  return a;
}

}  // namespace

const wire::Ipv6Addr& Transport::srv6_da(uint32_t ev, uint8_t plane) const {
  const uint32_t index = ev - attr_.ev_base;  // a peer's EV outside our profile still maps to a path (mod)
  const uint16_t nu = attr_.srv6.plane[plane].num_uplinks;
  return srv6_das_[size_t{plane} * verbs::kMrcSrv6MaxUplinks + (index / planes_) % nu];
}

uint8_t Transport::port_of_plane(uint8_t plane) const {
  return spray_ ? static_cast<uint8_t>(plane + 1) : q_.attr_.port_num;
}

int Transport::check_rtr(uint32_t path_mtu_bytes, const verbs::AhAttr& ah) {
  const uint16_t planes = attr_.num_planes == 0 ? q_.env_.num_ports : attr_.num_planes;
  if (attr_.num_evs % planes != 0 || attr_.backup_per_plane >= attr_.num_evs / planes) {
    error_ = "modify_qp(RTR): the MRC EV profile does not fit the host's ports (num_evs / num_planes)";
    return EINVAL;
  }
  if (attr_.num_peer_ports != 0 && attr_.num_peer_ports != planes) {
    error_ = "modify_qp(RTR): mrc num_peer_ports does not match the planes";
    return EINVAL;
  }
  if (attr_.window_bytes != 0 && attr_.window_bytes < path_mtu_bytes) {
    error_ = "modify_qp(RTR): mrc window_bytes below the path MTU";
    return EINVAL;
  }
  if (attr_.ev_mode == verbs::MrcEvMode::kSrv6) {
    // The inner header of an SRv6 frame is IPv6 (Srv6Spec): IPv6 addresses at both ends, every plane.
    bool v6 = !verbs::gid_is_ipv4(ah.grh.dgid);
    for (uint8_t p = 0; p < attr_.num_peer_ports; ++p) v6 = v6 && !verbs::gid_is_ipv4(attr_.peer_gid[p]);
    for (uint16_t p = 0; p < planes; ++p) {
      const uint8_t port = planes > 1 ? static_cast<uint8_t>(p + 1) : q_.attr_.port_num;
      v6 = v6 && q_.local_of(port).has_ipv6;
    }
    if (!v6) {
      error_ = "modify_qp(RTR): mrc ev_mode srv6 needs IPv6 addresses (the peer's GIDs and this host's ports): "
               "the SRv6 inner header is IPv6";
      return EINVAL;
    }
    if (attr_.srv6.num_planes != planes) {
      error_ = "modify_qp(RTR): mrc srv6.num_planes does not match the planes";
      return EINVAL;
    }
  }
  return 0;
}

void Transport::on_rtr(TimeNs now) {
  invalidate_deadline();
  planes_ = static_cast<uint8_t>(attr_.num_planes == 0 ? q_.env_.num_ports : attr_.num_planes);
  spray_ = planes_ > 1;
  q_.pace_per_port_ = spray_;
  pace_next_port_.fill(TimeNs(0));
  pace_filed_port_.fill(TimeNs(0));
  EvSetConfig c;
  c.num_evs = attr_.num_evs;
  c.num_planes = planes_;
  c.backup_per_plane = attr_.backup_per_plane;
  c.ev_base = attr_.ev_base;
  c.probes_to_readmit = attr_.probes_to_readmit;
  ev_.emplace(c);
  sport_share_.assign((attr_.ev_base & 0xFFu) == 0 ? 0 : c.num_evs, 0);  // sport_share(): per EV when unaligned
  fill_sport_share(wire::crc32_impl());
  local_up_ = planes_ >= 32 ? ~0u : (1u << planes_) - 1;
  const uint64_t seed = attr_.seed != 0 ? attr_.seed
                                        : rc::mix64(q_.env_.cfg->seed ^ (uint64_t{q_.qpn_} << 24) ^ 0x4D5243);
  rng_ = Rng(seed);
  st_.emplace(Psn(q_.attr_.rq_psn), attr_.mpr, attr_.sack_align);
  mt_.emplace(0, q_.mtu_, 256);
  payload_.assign(kFrameScratch, 0);
  frame_.assign(kFrameScratch, 0);
  // PSNs in flight are at most mpr past the oldest unacknowledged: a ring
  // of twice that never wraps onto a live record.
  const uint32_t ring = std::max<uint32_t>(kRecRing, std::bit_ceil(2u * attr_.mpr));
  recs_.assign(ring, SendRec{});
  rec_mask_ = ring - 1;
  rtxq_.assign(ring, Psn(0));
  rtx_head_ = rtx_count_ = 0;
  nack_head_ = nack_count_ = 0;
  probe_resp_head_ = probe_resp_count_ = 0;
  sack_due_ = false;
  unsacked_ = 0;
  sack_deadline_ = TimeNs::max();
  rcvd_bytes_ = 0;
  ecn_count_ = 0;
  trig_ = Trigger{};
  // Window: one BDP (all planes' line rates x base RTT) unless set.
  uint64_t bdp = 0;
  for (uint8_t p = 0; p < planes_; ++p) {
    const uint8_t port = port_of_plane(p);
    const BitRate r = q_.env_.port_rate != nullptr ? q_.env_.port_rate[port - 1] : BitRate::gbps(100);
    bdp += r.bps() / 8 * attr_.base_rtt_ns / 1'000'000'000ull;
  }
  window_ = attr_.window_bytes != 0 ? attr_.window_bytes
                                    : static_cast<uint32_t>(std::clamp<uint64_t>(bdp, q_.mtu_, 1u << 30));
  // Frame template: the peer, our port's addresses (patched per plane).
  const verbs::AhAttr& ah = q_.attr_.ah_attr;
  const rc::LocalAddr& local = q_.local_of(q_.attr_.port_num);
  spec_ = wire::MrcFrameSpec{};
  rc::peer_addressing(ah, local, q_.env_.cfg->ecn_capable, &spec_.l2, &spec_.l3);
  srv6_das_.clear();
  if (attr_.ev_mode == verbs::MrcEvMode::kSrv6 && std::holds_alternative<wire::Ipv6Spec>(spec_.l3)) {
    // IPv6-in-IPv6: every (plane, uplink) outer DA precomputed; the inner
    // header is the QP's (check_rtr: IPv6). address() picks the DA per EV.
    srv6_das_.assign(size_t{planes_} * verbs::kMrcSrv6MaxUplinks, wire::Ipv6Addr{});
    for (uint8_t p = 0; p < planes_; ++p) {
      for (uint16_t u = 0; u < attr_.srv6.plane[p].num_uplinks; ++u) {
        srv6_das_[size_t{p} * verbs::kMrcSrv6MaxUplinks + u] = srv6_address(attr_.srv6, p, u);
      }
    }
    wire::Srv6Spec sr;
    sr.inner = std::get<wire::Ipv6Spec>(spec_.l3);
    sr.outer = sr.inner;
    sr.outer.hop_limit = attr_.srv6.hop_limit;
    sr.outer.dst = srv6_das_[0];
    spec_.l3 = sr;
  }
  tx_hdr_.assign(size_t{kDataOps} * planes_, TxHdr{});
  sack_hdr_.assign(planes_, TxHdr{});
  hdr_v4_ = std::holds_alternative<wire::Ipv4Spec>(spec_.l3);
  hdr_sr_ = std::holds_alternative<wire::Srv6Spec>(spec_.l3);
  hdr_outer_off_ = static_cast<uint32_t>(wire::EthHeader::kSize + (spec_.l2.vlan ? wire::VlanTag::kSize : 0));
  hdr_ip_off_ = hdr_outer_off_ + (hdr_sr_ ? static_cast<uint32_t>(wire::Ipv6Header::kSize) : 0u);
  spec_.bth.dest_qp = q_.attr_.dest_qp_num;
  spec_.bth.pkey = q_.pkey_;
  last_feedback_ = now;
}

void Transport::on_rts(TimeNs now) {
  invalidate_deadline();
  sb_.emplace(Psn(q_.attr_.sq_psn), static_cast<uint32_t>(recs_.size()));
  for (SendRec& r : recs_) r = SendRec{};
  inflight_bytes_ = 0;
  cc_snd_nxt_ = cc_ack_seq_ = 0;
  cc_rto_ = false;
  peer_mpr_ = attr_.mpr;
  imm_sent_ = 0;
  rto_deadline_ = TimeNs::max();
  last_feedback_ = now;
  probe_pending_ = probe_out_ = false;
  next_probe_at_ = TimeNs::max();
  ev_probe_pending_ = ev_probe_out_ = -1;
  next_ev_probe_at_ = now;
  retired_ = 0;
  plane_sent_.fill(0);
  alive_ev_.fill(-1);
}

void Transport::on_reset() {
  invalidate_deadline();
  ev_.reset();
  sb_.reset();
  st_.reset();
  mt_.reset();
  rtx_count_ = nack_count_ = probe_resp_count_ = ev_probe_resp_count_ = 0;
  sack_due_ = probe_pending_ = port_status_pending_ = ep_resp_pending_ = false;
  ev_probe_pending_ = ev_probe_out_ = -1;
  rto_deadline_ = sack_deadline_ = port_status_repeat_ = next_probe_at_ = TimeNs::max();
  local_up_ = peer_up_ = ~0u;
}

void Transport::on_error() {
  invalidate_deadline();
  rtx_count_ = nack_count_ = probe_resp_count_ = ev_probe_resp_count_ = 0;
  sack_due_ = probe_pending_ = port_status_pending_ = ep_resp_pending_ = false;
  ev_probe_pending_ = ev_probe_out_ = -1;
  rto_deadline_ = sack_deadline_ = port_status_repeat_ = next_probe_at_ = TimeNs::max();
  inflight_bytes_ = 0;
}

void Transport::fail(WcStatus st, uint64_t wqe, TimeNs now) {
  invalidate_deadline();
  q_.to_error(st, wqe, WcStatus::kWrFlushErr, now);
  on_error();
}

// ---------------------------------------------------------------- frames

void Transport::address(wire::MrcFrameSpec& s, uint32_t ev, uint8_t plane) const {
  s.udp_src_port = static_cast<uint16_t>(0xC000u | (ev & 0x3FFFu));
  if (auto* v6 = std::get_if<wire::Ipv6Spec>(&s.l3)) v6->flow_label = ev & 0xFFFFFu;
  if (auto* sr = std::get_if<wire::Srv6Spec>(&s.l3)) {
    sr->outer.flow_label = sr->inner.flow_label = ev & 0xFFFFFu;
    sr->outer.dst = srv6_da(ev, plane);
    if (spray_) {
      const rc::LocalAddr& l = q_.local_of(port_of_plane(plane));
      s.l2.src = l.mac;
      if (attr_.num_peer_ports > plane) {
        for (int i = 0; i < 6; ++i) s.l2.dst.bytes[i] = attr_.peer_mac[plane][i];
        sr->inner.dst = attr_.peer_gid[plane];
      }
      if (l.has_gateway) s.l2.dst = l.gateway;
      sr->outer.src = sr->inner.src = l.ipv6;
    }
    return;
  }
  if (spray_) {
    // Plane p: our port p + 1's addresses, the peer's plane-p address.
    const rc::LocalAddr& l = q_.local_of(port_of_plane(plane));
    const bool peer = attr_.num_peer_ports > plane;
    s.l2.src = l.mac;
    if (peer) {
      for (int i = 0; i < 6; ++i) s.l2.dst.bytes[i] = attr_.peer_mac[plane][i];
    }
    if (l.has_gateway) s.l2.dst = l.gateway;
    if (auto* v4 = std::get_if<wire::Ipv4Spec>(&s.l3)) {
      v4->src = l.ipv4;
      if (peer) v4->dst = verbs::gid_to_ipv4(attr_.peer_gid[plane]);
    } else if (auto* v6b = std::get_if<wire::Ipv6Spec>(&s.l3)) {
      v6b->src = l.ipv6;
      if (peer) v6b->dst = attr_.peer_gid[plane];
    }
  }
}

rte_mbuf* Transport::emit(wire::MrcFrameSpec& s, uint32_t payload_bytes, uint32_t ev, uint8_t plane) {
  address(s, ev, plane);
  const wire::BuildResult r =
      wire::build_mrc_frame(frame_, s, std::span<const uint8_t>(payload_.data(), payload_bytes));
  if (!r.ok()) {
    ++q_.ctr_.alloc_failures;
    return nullptr;
  }
  rte_mbuf* m = to_mbuf(q_.env_.pool, frame_.data(), static_cast<uint32_t>(r.frame_bytes));
  if (m == nullptr) ++q_.ctr_.alloc_failures;
  return m;
}

wire::MrcFrameSpec Transport::data_spec(const DataFields& f, uint8_t plane) const {
  wire::MrcFrameSpec s = spec_;
  s.op = f.op;
  s.bth.psn = f.psn;
  s.bth.se = f.se;
  s.meth.rtx = f.rtx;
  s.meth.ts_valid = true;
  s.meth.rqmsn = f.rqmsn;
  s.meth.msn = f.msn;
  s.meth.msg_offset = f.msg_offset;
  s.meth.ev = f.ev;
  s.meth.tx_ts = f.tx_ts;
  s.reth_va = f.reth_va;
  s.reth_rkey = f.reth_rkey;
  s.reth_dma_length = f.reth_dma_length;
  s.immdt = f.imm;
  address(s, f.ev, plane);
  return s;
}

void Transport::fill_sport_share(wire::Crc32Impl impl) {
  sport_share_impl_ = impl;
  // ev_base with its low 8 bits 0: index i (< kMaxEvs = 256) is the port's
  // low byte, the rest of the port the same for every EV (sport_share()).
  sport_nib_ok_ = (attr_.ev_base & 0xFFu) == 0;
  if (sport_nib_ok_) {
    sport_k_ = wire::IcrcAccumulator::udp_sport_share(static_cast<uint16_t>(0xC000u | (attr_.ev_base & 0x3F00u)), impl);
    for (uint16_t k = 0; k < 16; ++k) {
      sport_nib_[k] = wire::IcrcAccumulator::udp_sport_share(k, impl);
      sport_nib_[16u + k] = wire::IcrcAccumulator::udp_sport_share(static_cast<uint16_t>(k << 4), impl);
    }
    return;
  }
  for (size_t i = 0; i < sport_share_.size(); ++i) {
    const uint32_t ev = ev_->ev(static_cast<uint16_t>(i));
    sport_share_[i] = wire::IcrcAccumulator::udp_sport_share(static_cast<uint16_t>(0xC000u | (ev & 0x3FFFu)), impl);
  }
}

rte_mbuf* Transport::emit_data(const DataFields& f, uint64_t wqe, uint32_t off, uint32_t n, uint8_t plane,
                               bool* lkey_failed) {
  *lkey_failed = false;
  rte_mbuf* m = rte_pktmbuf_alloc(q_.env_.pool);
  if (m == nullptr) {
    ++q_.ctr_.alloc_failures;
    return nullptr;
  }
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const wire::IcrcLayout layout{hdr_v4_ ? wire::IpVersion::kV4 : wire::IpVersion::kV6, hdr_v4_ ? 20u : 40u};
  // SRv6: the outer IPv6 header, then the inner one (ip_off): the ICRC's.
  const uint32_t outer_off = hdr_outer_off_;
  const uint32_t ip_off = hdr_ip_off_;
  const bool imm = wire::mrc_has_imm(f.op);
  const uint32_t udp_off = ip_off + layout.ip_header_bytes;
  const uint32_t bth_off = udp_off + static_cast<uint32_t>(wire::UdpHeader::kSize);
  const uint32_t meth_off = bth_off + static_cast<uint32_t>(wire::Bth::kSize);
  const uint32_t reth_off = meth_off + static_cast<uint32_t>(wire::Meth::kSize);
  const uint32_t end_off = reth_off + static_cast<uint32_t>(wire::Reth::kSize) + (imm ? 4u : 0u);
  const auto sport = static_cast<uint16_t>(0xC000u | (f.ev & 0x3FFFu));
  // Headers: a copy of the last ones of this kind (op, plane; SE and payload
  // bytes checked: everything else in them is the QP's) with the
  // per-packet fields written over, else built and kept.
  TxHdr& h = tx_hdr_[static_cast<size_t>(static_cast<uint8_t>(f.op) - static_cast<uint8_t>(MrcOp::kWriteFirst)) *
                         planes_ +
                     plane];
  uint32_t hb = 0;
  // The ICRC so far and the first header byte it has not seen.
  wire::IcrcAccumulator acc;
  uint32_t icrc_from = 0;
  if (h.valid && h.se == f.se && h.n == n && h.bytes <= rte_pktmbuf_tailroom(m)) [[likely]] {
    std::memcpy(data, h.b.data(), h.bytes);
    hb = h.bytes;
    data[udp_off] = static_cast<uint8_t>(sport >> 8);
    data[udp_off + 1] = static_cast<uint8_t>(sport);
    if (!hdr_v4_) {
      const uint32_t fl = f.ev & 0xFFFFFu;
      data[ip_off + 1] = static_cast<uint8_t>((data[ip_off + 1] & 0xF0) | (fl >> 16));
      data[ip_off + 2] = static_cast<uint8_t>(fl >> 8);
      data[ip_off + 3] = static_cast<uint8_t>(fl);
      if (hdr_sr_) {
        // The outer header: the EV's flow label and uSID destination.
        data[outer_off + 1] = static_cast<uint8_t>((data[outer_off + 1] & 0xF0) | (fl >> 16));
        data[outer_off + 2] = static_cast<uint8_t>(fl >> 8);
        data[outer_off + 3] = static_cast<uint8_t>(fl);
        std::memcpy(data + outer_off + 24, srv6_da(f.ev, plane).bytes.data(), 16);
      }
    }
    const uint32_t psn = f.psn.value();
    data[bth_off + wire::Bth::kOffPsn] = static_cast<uint8_t>(psn >> 16);
    data[bth_off + wire::Bth::kOffPsn + 1] = static_cast<uint8_t>(psn >> 8);
    data[bth_off + wire::Bth::kOffPsn + 2] = static_cast<uint8_t>(psn);
    auto* me = reinterpret_cast<wire::Meth*>(data + meth_off);
    me->flags = static_cast<uint8_t>((f.rtx ? wire::Meth::kFlagRtx : 0) |
                                     (wire::mrc_is_last(f.op) ? wire::Meth::kFlagLast : 0) | wire::Meth::kFlagTs);
    me->reserved = 0;
    me->rqmsn = wire::Be16(f.rqmsn);
    me->msn = wire::Be32(f.msn);
    me->msg_offset = wire::Be32(f.msg_offset);
    me->ev = wire::Be32(f.ev);
    me->tx_ts = wire::Be32(f.tx_ts);
    auto* reth = reinterpret_cast<wire::Reth*>(data + reth_off);
    reth->va.set(f.reth_va);
    reth->rkey.set(f.reth_rkey);
    reth->dma_length.set(f.reth_dma_length);
    if (imm) reinterpret_cast<wire::ImmDt*>(data + end_off - wire::ImmDt::kSize)->imm.set(f.imm);
    acc = h.icrc;
    if (acc.impl() != sport_share_impl_) [[unlikely]] fill_sport_share(acc.impl());
    acc.xor_udp_sport_share(sport_share(f.ev_index));  // = xor_udp_sport(sport)
    icrc_from = h.icrc_from;
  } else {
    const wire::MrcFrameSpec s = data_spec(f, plane);
    const wire::BuildResult r = wire::build_mrc_headers({data, rte_pktmbuf_tailroom(m)}, s, n);
    hb = static_cast<uint32_t>(r.header_bytes);
    h.valid = false;
    if (!r.ok() || hb < ip_off + layout.masked_bytes()) {
      rte_pktmbuf_free(m);
      ++q_.ctr_.alloc_failures;
      return nullptr;
    }
    if (hb == end_off && hb <= kTxHdrBytes && h.icrc.begin_prefix({data + ip_off, hb - ip_off}, layout)) {
      // (Every data frame this QP builds has the layout above.)
      h.icrc.xor_udp_sport(sport);  // kept with source port 0
      h.icrc_from = static_cast<uint16_t>(ip_off + layout.constant_bytes());
      h.valid = true;
      h.se = f.se;
      h.n = n;
      h.bytes = static_cast<uint16_t>(hb);
      std::memcpy(h.b.data(), data, hb);
      acc = h.icrc;
      acc.xor_udp_sport(sport);
      icrc_from = h.icrc_from;
    } else {
      acc.begin({data + ip_off, hb - ip_off}, layout);
      icrc_from = ip_off + layout.masked_bytes();
    }
  }
  m->data_len = static_cast<uint16_t>(hb);
  m->pkt_len = hb;
  // The rest of the headers, the payload and the pad are folded as one run
  // where they lie together in the mbuf.
  rc::ChainWriter cw(q_.env_.pool, m);
  cw.fold(&acc, data + icrc_from, hb - icrc_from);
  // The payload straight from the SGEs into the chain, each piece checked
  // with the MR table in the packet that reads it.
  const rc::Qp::SendWqe& w = q_.sq_at(wqe);
  uint32_t skip = off;
  uint32_t left = n;
  bool ok = true;
  for (uint32_t i = 0; i < w.num_sge && left > 0 && ok; ++i) {
    const verbs::Sge& g = w.sge[i];
    if (skip >= g.length) {
      skip -= g.length;
      continue;
    }
    const uint32_t k = std::min(g.length - skip, left);
    if (q_.env_.mrs->check(g.lkey, false, q_.pd_, g.addr + skip, k, 0) != verbs::MrCheck::kOk) {
      rte_pktmbuf_free(m);
      *lkey_failed = true;
      return nullptr;
    }
    ok = cw.append(reinterpret_cast<const uint8_t*>(g.addr) + skip, k, &acc);
    left -= k;
    skip = 0;
  }
  if (ok && left != 0) {
    rte_pktmbuf_free(m);
    *lkey_failed = true;
    return nullptr;
  }
  const uint32_t pad = (4 - (n & 3u)) & 3u;
  if (ok && pad > 0) ok = cw.append(nullptr, pad, &acc);
  if (ok) {
    cw.flush();
    ok = cw.append_icrc(acc.value());
  }
  if (!ok) {
    rte_pktmbuf_free(m);
    ++q_.ctr_.alloc_failures;
    return nullptr;
  }
  return m;
}

bool Transport::gather(uint64_t wqe, uint32_t off, uint32_t n) {
  const rc::Qp::SendWqe& w = q_.sq_at(wqe);
  uint32_t skip = off;
  uint8_t* dst = payload_.data();
  for (uint32_t i = 0; i < w.num_sge && n > 0; ++i) {
    const verbs::Sge& s = w.sge[i];
    if (skip >= s.length) {
      skip -= s.length;
      continue;
    }
    const uint32_t k = std::min(s.length - skip, n);
    // Checked again per packet: the MR may have been deregistered since post_send.
    if (q_.env_.mrs->check(s.lkey, false, q_.pd_, s.addr + skip, k, 0) != verbs::MrCheck::kOk) return false;
    rc::copy_bytes(dst, reinterpret_cast<const uint8_t*>(s.addr) + skip, k);
    dst += k;
    n -= k;
    skip = 0;
  }
  return n == 0;
}

uint64_t Transport::wqe_of(const SendRec& r) const {
  return q_.sq_next_ - static_cast<uint32_t>(static_cast<uint32_t>(q_.sq_next_) - r.wqe);
}

inline rte_mbuf* Transport::build_data(Psn psn, uint64_t wqe, uint32_t offset, uint32_t len, uint16_t ev, bool rtx,
                                      TimeNs now) {
  const rc::Qp::SendWqe& w = q_.sq_at(wqe);
  const bool first = offset == 0;
  const bool last = offset + len == w.length;
  const bool imm = w.opcode == verbs::WrOpcode::kRdmaWriteWithImm;
  DataFields f;
  f.op = data_op(first, last, imm);
  f.psn = psn;
  f.se = w.solicited && last;
  f.rtx = rtx;
  f.rqmsn = w.mrc_rqmsn;
  f.msn = static_cast<uint32_t>(wqe);
  f.msg_offset = offset;
  f.ev = ev_->ev(ev);
  f.ev_index = ev;
  f.tx_ts = now_ts(now);
  f.reth_va = w.remote_addr + offset;
  f.reth_rkey = w.rkey;
  f.reth_dma_length = w.length;
  f.imm = w.imm;
  bool lkey_failed = false;
  rte_mbuf* m = emit_data(f, wqe, offset, len, ev_->plane(ev), &lkey_failed);
  if (lkey_failed) fail(WcStatus::kLocProtErr, wqe, now);
  return m;
}

// ---------------------------------------------------------------- requester

uint8_t Transport::tx_plane() const {
  return spray_ && q_.tx_port_ >= 1 && q_.tx_port_ <= planes_ ? static_cast<uint8_t>(q_.tx_port_ - 1) : 0;
}

uint8_t Transport::ctrl_plane() const {
  if (!spray_ || !ev_) return 0;
  for (uint8_t p = 0; p < planes_; ++p) {
    if (((local_up_ >> p) & 1u) != 0 && ev_->plane_up(p)) return p;
  }
  for (uint8_t p = 0; p < planes_; ++p) {
    if (((local_up_ >> p) & 1u) != 0) return p;
  }
  return 0;
}

bool Transport::sends_on(uint8_t port_num) const {
  if (!spray_) return port_num == q_.attr_.port_num;
  const uint8_t p = static_cast<uint8_t>(port_num - 1);
  return port_num >= 1 && p < planes_ && ((local_up_ >> p) & 1u) != 0 && ev_->plane_up(p);
}

uint32_t Transport::sending_planes() const {
  const uint32_t all = planes_ >= 32 ? ~0u : (1u << planes_) - 1;
  uint32_t m = 0;
  for (uint8_t p = 0; p < planes_; ++p) m |= ev_->plane_up(p) ? (1u << p) : 0u;
  return m & local_up_ & all;
}

void Transport::swap_pace(uint8_t from, uint8_t to, TimeNs& next, TimeNs& filed) {
  if (from >= 1 && from <= wire::kMrcMaxPorts) {
    pace_next_port_[from - 1] = next;
    pace_filed_port_[from - 1] = filed;
  }
  const bool ok = to >= 1 && to <= wire::kMrcMaxPorts;
  next = ok ? pace_next_port_[to - 1] : TimeNs(0);
  filed = ok ? pace_filed_port_[to - 1] : TimeNs(0);
}

uint32_t Transport::pace_planes() const {
  return spray_ ? std::max<uint32_t>(1, static_cast<uint32_t>(std::popcount(sending_planes()))) : 1;
}

bool Transport::plane_in_share(uint8_t p) const {
  if (!spray_ || planes_ <= 1) return true;
  const uint32_t m = sending_planes();
  uint32_t least = plane_sent_[p];
  for (uint8_t k = 0; k < planes_; ++k) {
    if (((m >> k) & 1u) != 0) least = std::min(least, plane_sent_[k]);
  }
  return plane_sent_[p] - least < kPlaneLead;
}

void Transport::count_plane_send(uint8_t p) {
  if (!spray_ || planes_ <= 1) return;
  ++plane_sent_[p];
  const uint32_t m = sending_planes();
  uint32_t least = plane_sent_[p];
  for (uint8_t k = 0; k < planes_; ++k) {
    if (((m >> k) & 1u) != 0) least = std::min(least, plane_sent_[k]);
  }
  if (least == 0) return;
  for (uint8_t k = 0; k < planes_; ++k) plane_sent_[k] = plane_sent_[k] > least ? plane_sent_[k] - least : 0;
}

uint8_t Transport::ctrl_port() const { return spray_ ? static_cast<uint8_t>(ctrl_plane() + 1) : q_.attr_.port_num; }

bool Transport::peer_ok(const wire::FrameInfo& fi) const {
  const rc::RxAction a = q_.check_peer(fi);  // the P_Key first, then the peer's address
  if (a == rc::RxAction::kAccepted) return true;
  if (a == rc::RxAction::kBadPkey) return false;
  for (uint8_t p = 0; p < attr_.num_peer_ports; ++p) {
    const verbs::Gid& g = attr_.peer_gid[p];
    if (fi.ipv4 != nullptr ? (verbs::gid_is_ipv4(g) && fi.ipv4->src == verbs::gid_to_ipv4(g))
                           : (fi.ipv6 != nullptr && !verbs::gid_is_ipv4(g) && fi.ipv6->src == g)) {
      return true;
    }
  }
  return false;
}

bool Transport::has_data(TimeNs) const {
  if (q_.state_ != QpState::kRts || !sb_) return false;
  const uint8_t plane = tx_plane();
  if (spray_ && !sends_on(static_cast<uint8_t>(plane + 1))) return false;
  if (ev_probe_pending_ >= 0 && ev_->plane(static_cast<uint16_t>(ev_probe_pending_)) == plane) return true;
  if (probe_pending_) return true;
  if (rtx_count_ > 0) return true;
  if (q_.sq_next_ == q_.sq_posted_) return false;
  const rc::Qp::SendWqe& w = q_.sq_at(q_.sq_next_);
  if (w.local_err != WcStatus::kSuccess) return true;
  const Psn psn = w.first_psn + q_.tx_pkt_;
  if (Psn::diff(psn, sb_->una()) >= static_cast<int32_t>(peer_mpr_) || !sb_->can_send()) return false;
  if (!plane_in_share(plane)) return false;
  const uint32_t off = q_.tx_pkt_ << q_.mtu_shift_;
  const uint32_t n = std::min(q_.mtu_, w.length - off);
  return inflight_bytes_ == 0 || inflight_bytes_ + n <= effective_window();
}

uint64_t Transport::effective_window() const {
  if (!q_.cc_acks_) return window_;
  // The CC's window, capped by window_bytes when the profile names one.
  return attr_.window_bytes != 0 ? std::min<uint64_t>(q_.cc_window_, attr_.window_bytes) : q_.cc_window_;
}

void Transport::cc_feedback(AckKind kind, uint64_t acked, std::optional<uint32_t> ts_echo, uint16_t service_ns,
                            bool ce, uint8_t pen, TimeNs now) {
  AckEvent ev;
  ev.kind = kind;
  ev.acked_bytes = acked;
  cc_ack_seq_ += acked;
  ev.ack_seq = cc_ack_seq_;
  ev.snd_nxt = cc_snd_nxt_;
  ev.inflight_bytes = inflight_bytes_;
  ev.ecn_echo = ce;
  ev.rcv_cwnd_pen = pen;
  if (ts_echo) {
    // The echoed METH / PETH tx_ts of the packet that triggered the
    // feedback: an RTT of that very transmission (no Karn ambiguity), less
    // the time the responder held it (SACK coalescing). 32-bit ns, wraps
    // every 4.3 s; a sample that is negative or beyond 1 s is not one, nor
    // one the service time covers: in real time each side stamps with its
    // poll loop's `now` (once per iteration), so a frame received late in a
    // long iteration counts the rest of it as service time (seen: 3.4 us
    // raw against 65 us of service); a 0 sample would drag NSCC's base RTT
    // to 0.
    const auto raw = static_cast<int32_t>(now_ts(now) - *ts_echo);
    if (raw > service_ns && raw < 1'000'000'000) {
      ev.rtt = TimeNs(raw - service_ns);
      rc::QpCcStats& st = q_.cc_stats_;
      ++st.rtt_samples;
      st.rtt_sum_ns += static_cast<uint64_t>(ev.rtt.ns());
      st.rtt_last = ev.rtt;
      if (ev.rtt < st.rtt_min) st.rtt_min = ev.rtt;
      if (ev.rtt > st.rtt_max) st.rtt_max = ev.rtt;
    }
  }
  ++q_.cc_stats_.acks;
  q_.cc_inflight_ = inflight_bytes_;
  nic::cc_on_ack(q_.cc_, ev, now);
  q_.cc_window_ = nic::cc_window_bytes(q_.cc_);
}

rte_mbuf* Transport::make_probe(uint8_t plane, TimeNs now) {
  invalidate_deadline();  // ev_probe_out_ / _sent_ / _pending_
  const bool evp = ev_probe_pending_ >= 0 && ev_->plane(static_cast<uint16_t>(ev_probe_pending_)) == plane;
  wire::MrcFrameSpec s = spec_;
  s.op = MrcOp::kProbe;
  s.bth.psn = sb_->next();
  uint32_t ev = 0;
  if (evp) {
    const auto index = static_cast<uint16_t>(ev_probe_pending_);
    ev = ev_->ev(index);
    s.probe.probe_id = static_cast<uint16_t>(kEvProbeFlag | index);
    if (attr_.ev_probe_endpoint) {
      // The connectionless EV_PROBE on that EV's path (DestQP 2, PSN 0).
      s.op = MrcOp::kEndpointRequest;
      s.ep_request.op = wire::MrcEndpointOp::kEvProbe;
      s.ep_request.num_ports = planes_;
      s.ep_request.request_id = s.probe.probe_id;
      s.ep_request.ev = ev;
      s.ep_request.port_status_mask = local_up_;
      s.ep_request.tx_ts = now_ts(now);
    }
  } else {
    const std::optional<EvPick> pk = pick(plane);
    if (!pk) {
      ++ctr_.no_usable_ev;
      return nullptr;
    }
    ev = pk->ev;
    probe_id_ = static_cast<uint16_t>((probe_id_ + 1) & 0x7FFF);
    s.probe.probe_id = probe_id_;
  }
  s.probe.ev = ev;
  s.probe.tx_ts = now_ts(now);
  rte_mbuf* m = emit(s, 0, ev, plane);
  if (m == nullptr) return nullptr;
  if (evp) {
    ev_->on_probe_sent(static_cast<uint16_t>(ev_probe_pending_));
    ev_probe_out_ = ev_probe_pending_;
    ev_probe_sent_ = now;
    ev_probe_pending_ = -1;
    ++ctr_.tx_ev_probes;
  } else {
    probe_pending_ = false;
    probe_out_ = true;
    probe_sent_ = now;
    ++ctr_.tx_probes;
  }
  return m;
}

void Transport::queue_rtx(Psn p) {
  SendRec& r = rec(p);
  if (r.queued || rtx_count_ == rtxq_.size()) return;
  r.queued = true;
  rtxq_[(rtx_head_ + rtx_count_) & rec_mask_] = p;
  ++rtx_count_;
}

void Transport::lost(Psn p, bool timeout, TimeNs now) {
  invalidate_deadline();  // retired_
  SendRec& r = rec(p);
  if (!r.live || r.queued) return;
  r.missing = false;
  // A timeout with no SACK, NACK or probe response from the peer since the
  // packet left says nothing about its path: the peer (or this host) stalled,
  // e.g. a software peer not yet polling or descheduled for longer than the
  // RTO; every EV would be retired at once. Such a loss is retransmitted
  // without blaming its EV (counted in stall_timeouts); a loss with feedback
  // since (a SACK hole, or an RTO while other packets were acknowledged)
  // blames it as before.
  // Only a PSN's first expiry is excused so: a second one with still no
  // feedback blames the EV (the retirement floor keeps the plane), or a
  // PSN whose SACKs die on the same dead path as its data (a blackholed
  // spine at a flow's tail) resends over it until max_timeouts ends the QP.
  const bool stalled = timeout && last_feedback_ <= sent_of(r, now) && r.timeouts == 0;
  if (timeout) r.suspect = true;
  if (!stalled && ev_->on_signal(r.ev, EvSignal::kLoss) == EvOutcome::kRetired) ++retired_;
  if (stalled) ++ctr_.stall_timeouts;
  if (timeout) {
    ++ctr_.timeouts;
    ++ctr_.rtx_timeout;
    // With every local plane down (the host's links: NicNode::set_port_up)
    // nothing can leave: the expiry says nothing about the peer or the
    // paths, so it does not count towards max_timeouts (the QP waits for a
    // link, as it waits for a descheduled peer; without this a link down
    // longer than (max_timeouts + 1) x rto_ns failed the QP while RC QPs
    // on the same links survived).
    const uint32_t planes_mask = planes_ >= 32 ? ~0u : (1u << planes_) - 1;
    if ((local_up_ & planes_mask) == 0) {
      ++ctr_.down_timeouts;
    } else if (++r.timeouts > attr_.max_timeouts) {
      fail(WcStatus::kRetryExcErr, wqe_of(r), now);
      return;
    }
    cc_rto_ = true;  // one cc_on_rto per expiry scan (advance)
  } else {
    ++ctr_.rtx_sack;
    if (q_.cc_acks_) cc_feedback(AckKind::kNackLoss, 0, std::nullopt, 0, false, 0, now);
  }
  queue_rtx(p);
}

rte_mbuf* Transport::make_data(TimeNs now) {
  const uint8_t plane = tx_plane();
  if ((ev_probe_pending_ >= 0 && ev_->plane(static_cast<uint16_t>(ev_probe_pending_)) == plane) || probe_pending_) {
    // Probes leave on the data path of their plane (an EV probe tests its path).
    return make_probe(plane, now);
  }
  while (rtx_count_ > 0) {
    const Psn p = rtxq_[rtx_head_];
    SendRec& r = rec(p);
    if (!r.live || sb_->acked(p)) {  // acknowledged while queued
      r.queued = false;
      rtx_head_ = (rtx_head_ + 1) & rec_mask_;
      --rtx_count_;
      continue;
    }
    // A PSN lost by its RTO or past a probe answer (one packet in flight, no
    // SACK hole to judge by) goes on the plane's EV proven alive last, not
    // on a random one that may cross the same dead switch.
    const int16_t alive = alive_ev_[plane];
    std::optional<EvPick> pk;
    if (r.suspect && alive >= 0 && alive != r.ev) pk = ev_->take(static_cast<uint16_t>(alive), true);
    if (pk) ++ctr_.rtx_alive_ev;
    if (!pk) pk = pick(plane, true, r.ev);
    if (!pk) {
      ++ctr_.no_usable_ev;
      return nullptr;
    }
    // The payload offset follows from the PSN: packet k of a message is at k x MTU.
    const uint64_t wqe = wqe_of(r);
    const auto offset = static_cast<uint32_t>(Psn::diff(p, q_.sq_at(wqe).first_psn)) << q_.mtu_shift_;
    rte_mbuf* m = build_data(p, wqe, offset, r.len, pk->index, true, now);
    if (m == nullptr) return nullptr;
    r.ev = pk->index;
    r.queued = false;
    r.missing = false;
    r.sent = sent_bits(now);
    rtx_head_ = (rtx_head_ + 1) & rec_mask_;
    --rtx_count_;
    sb_->rearm(p);  // a later SACK may report it missing again (the retransmission lost too)
    if (rto_deadline_ > now + rto_of(r)) {
      rto_deadline_ = now + rto_of(r);
      invalidate_deadline();
    }
    ++ctr_.tx_retransmits;
    ++q_.ctr_.tx_retransmit_pkts;
    ++q_.ctr_.tx_data_pkts;
    q_.ctr_.tx_data_bytes += m->pkt_len;
    return m;
  }
  if (q_.sq_next_ == q_.sq_posted_) return nullptr;
  rc::Qp::SendWqe& w = q_.sq_at(q_.sq_next_);
  if (w.local_err != WcStatus::kSuccess) {
    fail(w.local_err, q_.sq_next_, now);
    return nullptr;
  }
  int ev_index = -1;
  if (planes_ == 1) {
    ev_index = ev_->pick_next_index(rng_);
  } else if (const std::optional<EvPick> pk = ev_->pick_in_plane(rng_, plane)) {
    ev_index = pk->index;
  }
  if (ev_index < 0) {
    ++ctr_.no_usable_ev;
    // A plane with nothing to send on must not hold the others to its share.
    plane_sent_[plane] += kPlaneLead;
    return nullptr;
  }
  if (q_.tx_pkt_ == 0) {
    w.mrc_rqmsn = imm_sent_;
    if (w.opcode == verbs::WrOpcode::kRdmaWriteWithImm) ++imm_sent_;
  }
  const Psn psn = w.first_psn + q_.tx_pkt_;
  const uint32_t offset = q_.tx_pkt_ << q_.mtu_shift_;
  const uint32_t len = std::min(q_.mtu_, w.length - offset);
  SendRec& r = rec(psn);
  {
    // Written whole (one 16-byte store); live unless the frame cannot be built.
    SendRec nr;
    nr.wqe = static_cast<uint32_t>(q_.sq_next_);
    nr.len = static_cast<uint16_t>(len);
    nr.ev = static_cast<uint16_t>(ev_index);
    nr.sent = sent_bits(now);
    nr.live = true;
    r = nr;
  }
  rte_mbuf* m = build_data(psn, q_.sq_next_, offset, len, static_cast<uint16_t>(ev_index), false, now);
  if (m == nullptr) {
    r.live = false;
    return nullptr;
  }
  sb_->on_send();
  count_plane_send(plane);
  inflight_bytes_ += len;
  cc_snd_nxt_ += len;
  if (q_.tx_pkt_ + 1 == w.npkts) {
    ++q_.sq_next_;
    q_.tx_pkt_ = 0;
  } else {
    ++q_.tx_pkt_;
  }
  // The deadline's inputs this changes (rare: the first packet in flight
  // arms the timers): the rule at Transport::next_deadline.
  if (rto_deadline_ > now + TimeNs(attr_.rto_ns)) {
    rto_deadline_ = now + TimeNs(attr_.rto_ns);
    invalidate_deadline();
  }
  if (next_probe_at_ == TimeNs::max()) {
    next_probe_at_ = now + TimeNs(attr_.probe_interval_ns);
    invalidate_deadline();
  }
  if (sb_->in_flight() == 1) invalidate_deadline();  // in flight went 0 -> 1
  ++ctr_.tx_data_pkts;
  ++q_.ctr_.tx_data_pkts;
  q_.ctr_.tx_data_bytes += m->pkt_len;
  return m;
}

void Transport::complete_acked(TimeNs now) {
  while (q_.sq_done_ < q_.sq_next_) {
    const rc::Qp::SendWqe& w = q_.sq_at(q_.sq_done_);
    if (!w.last_psn().before(sb_->una())) break;
    q_.complete_send(q_.sq_done_, WcStatus::kSuccess);
    ++q_.sq_done_;
  }
  q_.check_overrun(now);
}

void Transport::on_sack(const wire::FrameInfo& fi, MrcRx* out, TimeNs now) {
  invalidate_deadline();  // in flight, next_probe_at_, rto_deadline_, retired_, ev_probe_out_
  const wire::Seth& h = *fi.mrc.seth;
  if (!sb_ || q_.state_ != QpState::kRts) {
    // A responder-only QP (RTR) gets no SACKs; an RTS one in ERR neither.
    *out = MrcRx::kWrongState;
    return;
  }
  const Psn cack = fi.bth->get_psn();
  const std::optional<uint16_t> idx = ev_->index_of(h.ev.value());
  bool probe_answered = false;
  if (h.probe_response()) {
    const auto id = static_cast<uint16_t>(h.ack_offset());
    if ((id & kEvProbeFlag) != 0) {
      const int index = id & ~kEvProbeFlag;
      if (index == ev_probe_out_) {
        if (ev_->on_probe_result(static_cast<uint16_t>(index), h.skip() == wire::MrcSkip::kNone) ==
                EvOutcome::kReadmitted &&
            retired_ > 0) {
          --retired_;
        }
        ev_probe_out_ = -1;
      }
    } else {
      // Only the answer to the probe in flight dates its holes (probe_sent_):
      // a late answer to an earlier, given-up probe does not.
      probe_answered = probe_out_ && id == probe_id_;
      probe_out_ = false;
    }
  }
  uint64_t acked = 0;
  const SackResult res = sb_->on_sack(cack, h.base_offset(), h.bitmap.value(), std::span<Psn>(missing_), [&](Psn p) {
    SendRec& r = rec(p);
    if (r.live) {
      r.live = false;
      r.missing = false;
      inflight_bytes_ -= r.len;
      acked += r.len;
    }
  });
  if (res.verdict == SackVerdict::kInvalid) {
    *out = MrcRx::kSackInvalid;
    return;
  }
  *out = h.probe_response() ? MrcRx::kProbeResponse : MrcRx::kSack;
  if (q_.cc_acks_) {
    const wire::MrcCcState* cs = fi.mrc.cc;
    cc_feedback(AckKind::kAck, acked, cs != nullptr ? std::optional<uint32_t>(cs->ts_echo.value()) : std::nullopt,
                cs != nullptr ? cs->service_time.value() : 0, h.ce(), cs != nullptr ? cs->rcv_cwnd_pen : 0, now);
  }
  if (const uint16_t mpr = h.mpr.value(); mpr > 0) peer_mpr_ = std::min<uint16_t>(mpr, attr_.mpr);
  const TimeNs tol(attr_.ooo_tolerance_ns);
  for (uint16_t i = 0; i < res.missing; ++i) {
    SendRec& r = rec(missing_[i]);
    if (!r.live) continue;
    const TimeNs sent = sent_of(r, now);
    if (now - sent >= tol) {
      lost(missing_[i], false, now);
      if (q_.state_ != QpState::kRts) return;
    } else {
      r.missing = true;
      if (rto_deadline_ > sent + tol) rto_deadline_ = sent + tol;
    }
  }
  if (probe_answered) {
    // The probe left after these PSNs and the responder had not seen them
    // when it arrived: with one packet in flight there is no later packet to
    // show a SACK hole, so the probe answer is the hole (the reordering
    // tolerance then applies as for one), found in tens of microseconds
    // rather than the RTO's hundreds.
    // Only a PSN's first loss is found so: a retransmission (on a path
    // proven alive) that is lost again waits for its RTO, so max_timeouts
    // still bounds a QP whose data dies where its probes do not.
    for (Psn p = sb_->una(); Psn::diff(sb_->next(), p) > 0; p = p + 1) {
      SendRec& r = rec(p);
      if (!r.live || r.queued || r.missing || r.suspect || sb_->acked(p)) continue;
      const TimeNs sent = sent_of(r, now);
      if (!(sent < probe_sent_)) continue;
      r.missing = true;
      r.suspect = true;
      ++ctr_.probe_holes;
      if (now - sent >= tol) {
        lost(p, false, now);
        if (q_.state_ != QpState::kRts) return;
      } else if (rto_deadline_ > sent + tol) {
        rto_deadline_ = sent + tol;
      }
    }
  }
  // The SACK's trigger (a data packet, or a reliability probe) arrived on
  // EV idx: the plane's path proven alive last (not an EV probe's retired EV).
  const bool ev_probe_answer = h.probe_response() && (static_cast<uint16_t>(h.ack_offset()) & kEvProbeFlag) != 0;
  if (idx && h.skip() != wire::MrcSkip::kAlwaysSkip && !ev_probe_answer) {
    alive_ev_[ev_->plane(*idx)] = static_cast<int16_t>(*idx);
  }
  if (idx && !h.probe_response()) {
    if (h.skip() == wire::MrcSkip::kAlwaysSkip) {
      if (ev_->on_signal(*idx, EvSignal::kAlwaysSkip) == EvOutcome::kRetired) ++retired_;
    } else if (h.skip() == wire::MrcSkip::kSkipOnce || h.ce()) {
      ev_->on_signal(*idx, EvSignal::kEcnEcho);
    }
  }
  last_feedback_ = now;
  next_probe_at_ = sb_->in_flight() > 0 ? now + TimeNs(attr_.probe_interval_ns) : TimeNs::max();
  complete_acked(now);
}

void Transport::on_nack(const wire::FrameInfo& fi, MrcRx* out, TimeNs now) {
  invalidate_deadline();
  const wire::Neth& h = *fi.mrc.neth;
  if (!sb_ || q_.state_ != QpState::kRts) {
    *out = MrcRx::kWrongState;
    return;
  }
  const Psn psn = h.get_nack_psn();
  const int32_t d = Psn::diff(psn, sb_->una());
  if (d < 0 || d >= static_cast<int32_t>(sb_->in_flight()) || sb_->acked(psn) || !rec(psn).live) {
    *out = MrcRx::kNackStale;
    return;
  }
  *out = MrcRx::kNack;
  last_feedback_ = now;
  const MrcNackReason reason = h.get_reason();
  SendRec& r = rec(psn);
  if (wire::mrc_nack_fatal(reason)) {
    const WcStatus st = reason == MrcNackReason::kAccessError     ? WcStatus::kRemAccessErr
                        : reason == MrcNackReason::kInvalidRequest ? WcStatus::kRemInvReqErr
                                                                   : WcStatus::kRemOpErr;
    fail(st, wqe_of(r), now);
    return;
  }
  const std::optional<uint16_t> idx = ev_->index_of(h.ev.value());
  if (reason == MrcNackReason::kTrimmed && idx) ev_->on_signal(*idx, EvSignal::kTrimmed);
  if (reason == MrcNackReason::kTrimmedLastHop && idx) ev_->on_signal(*idx, EvSignal::kTrimmedLastHop);
  if (q_.cc_acks_ && (reason == MrcNackReason::kTrimmed || reason == MrcNackReason::kTrimmedLastHop)) {
    cc_feedback(AckKind::kNackTrim, 0, h.ts_echo.value(), 0, h.ce(), 0, now);
  }
  ++ctr_.rtx_nack;
  r.missing = false;
  queue_rtx(psn);
}

// ---------------------------------------------------------------- responder

void Transport::push_nack(MrcNackReason reason, Psn psn, const wire::FrameInfo& fi, bool ce) {
  if (nack_count_ == nacks_.size()) {
    ++ctr_.nack_queue_full;
    return;
  }
  const wire::Meth* me = fi.mrc.meth;
  nacks_[(nack_head_ + nack_count_) % nacks_.size()] =
      Nack{reason, psn, me->ev.value(), me->tx_ts.value(), ce, me->rtx()};
  ++nack_count_;
}

uint8_t Transport::rcv_penalty() const {
  uint32_t pen = 0;
  if (attr_.rcv_pen_rq != 0 && mt_ && mt_->held_imm() > 0 && q_.rq_count_ == 0) pen = attr_.rcv_pen_rq;
  if (attr_.rcv_pen_ooo_pct < 100 && st_) {
    // PSNs received past CACK span bit_width(bitmap) of the mpr tracked.
    const uint32_t mpr = st_->mpr();
    const uint32_t span = st_->span();
    const uint32_t start = mpr * attr_.rcv_pen_ooo_pct / 100;
    if (span > start && mpr > start) {
      pen = std::max<uint32_t>(pen, wire::MrcCcState::kMaxRcvCwndPen * (span - start) / (mpr - start));
    }
  }
  return static_cast<uint8_t>(std::min<uint32_t>(pen, wire::MrcCcState::kMaxRcvCwndPen));
}

void Transport::drain_completions() {
  if (q_.rq_count_ == 0) {
    // No receive posted (plain WRITEs): the complete messages at the head
    // are released, immediates wait (no completion buffer to set up).
    (void)mt_->pop_completions({});
    if (mt_->held_imm() > 0) ++ctr_.imm_waiting_rq;
    return;
  }
  std::array<MsgCompletion, 8> out{};
  for (;;) {
    const uint32_t room = std::min<uint32_t>(q_.rq_count_, static_cast<uint32_t>(out.size()));
    const std::size_t n = mt_->pop_completions(std::span<MsgCompletion>(out.data(), room));
    for (std::size_t i = 0; i < n; ++i) q_.complete_recv(WcStatus::kSuccess, out[i].length, true, out[i].imm, true);
    if (n < room || room == 0) break;
  }
  if (mt_->held_imm() > 0 && q_.rq_count_ == 0) ++ctr_.imm_waiting_rq;
}

void Transport::on_recv_posted(TimeNs now) {
  if (mt_ && mt_->held_imm() > 0) {
    drain_completions();
    q_.check_overrun(now);
  }
}

void Transport::on_data(const wire::FrameInfo& fi, const rte_mbuf* m, MrcRx* out, TimeNs now) {
  if ((q_.state_ != QpState::kRtr && q_.state_ != QpState::kRts) || !st_) {
    *out = MrcRx::kWrongState;
    return;
  }
  const wire::Meth& me = *fi.mrc.meth;
  const Psn psn = fi.bth->get_psn();
  const bool ce = is_ce(fi);
  const Psn cack = st_->cack();
  if (!psn.after(cack) || st_->received(psn)) {
    // Duplicate (a spurious retransmission, a network copy): SACK now so the
    // sender stops resending it.
    *out = MrcRx::kDuplicate;
    trig_ = Trigger{psn, me.ev.value(), me.tx_ts.value(), ce, now};
    sack_due_ = true;
    return;
  }
  if (Psn::diff(psn, cack) > static_cast<int32_t>(st_->mpr())) {
    *out = MrcRx::kOutOfWindow;
    push_nack(MrcNackReason::kPsnOutOfWindow, psn, fi, ce);
    return;
  }
  if (fi.mrc.trimmed) {
    *out = MrcRx::kTrimmed;
    const bool lasthop = attr_.trim_lasthop_dscp != 0xFF && dscp_of(fi) == attr_.trim_lasthop_dscp;
    push_nack(lasthop ? MrcNackReason::kTrimmedLastHop : MrcNackReason::kTrimmed, psn, fi, ce);
    return;
  }
  const uint32_t n = fi.payload_bytes;
  uint64_t local = 0;
  if (n > 0 && ((q_.attr_.qp_access_flags & verbs::kAccessRemoteWrite) == 0 ||
                q_.env_.mrs->check(fi.reth->rkey.value(), true, q_.pd_, fi.reth->va.value(), n,
                                   verbs::kAccessRemoteWrite, nullptr, &local) != verbs::MrCheck::kOk)) {
    // Nothing of the packet is written; the requester's WQE fails (fatal NACK)
    // and this QP goes to ERR, as RC's remote access error does.
    *out = MrcRx::kAccessError;
    push_nack(MrcNackReason::kAccessError, psn, fi, ce);
    q_.to_error(WcStatus::kWrFlushErr, UINT64_MAX, WcStatus::kWrFlushErr, now);
    rtx_count_ = 0;
    return;
  }
  MsgPacket mp;
  mp.msn = me.msn.value();
  mp.msg_offset = me.msg_offset.value();
  mp.payload = n;
  mp.msg_length = fi.reth->dma_length.value();
  mp.last = wire::mrc_is_last(fi.mrc.op);
  mp.has_imm = wire::mrc_has_imm(fi.mrc.op);
  mp.imm = mp.has_imm && fi.immdt != nullptr ? fi.immdt->imm.value() : 0;
  mp.rqmsn = me.rqmsn.value();
  const MsgVerdict v = mt_->on_packet(mp);
  if (v == MsgVerdict::kInvalid) {
    *out = MrcRx::kInvalid;
    push_nack(MrcNackReason::kInvalidRequest, psn, fi, ce);
    q_.to_error(WcStatus::kWrFlushErr, UINT64_MAX, WcStatus::kWrFlushErr, now);
    rtx_count_ = 0;
    return;
  }
  if (v == MsgVerdict::kOutOfWindow) {
    *out = MrcRx::kMsgWindow;
    push_nack(MrcNackReason::kNoResource, psn, fi, ce);
    return;
  }
  if (v != MsgVerdict::kDuplicate && n > 0) {
    // icrc_verify_mbuf walked the chain past the payload: the copy cannot come up short.
    (void)rc::copy_from_chain(m, fi.payload_offset, n, reinterpret_cast<uint8_t*>(local));
  }
  st_->on_packet(psn);
  *out = MrcRx::kPlaced;
  rcvd_bytes_ += n;
  const bool hole = psn != cack + 1 || st_->held();
  if (psn != cack + 1) ++ctr_.ooo_arrivals;
  if (ce) {
    ++ecn_count_;
    ++ctr_.ce_arrivals;
  }
  if (!(sack_due_ && trig_.ce)) trig_ = Trigger{psn, me.ev.value(), me.tx_ts.value(), ce, now};
  ++unsacked_;
  if (hole || ce || mp.last || unsacked_ >= attr_.sack_every_pkts) {
    sack_due_ = true;
  } else if (sack_deadline_ == TimeNs::max()) {
    sack_deadline_ = now + TimeNs(attr_.sack_delay_ns);
    invalidate_deadline();
  }
  if (v == MsgVerdict::kCompleted) drain_completions();
}

int Transport::on_rx(const wire::FrameInfo& fi, const rte_mbuf* m, TimeNs now) {
  MrcRx r = MrcRx::kUnexpectedOp;
  if (fi.kind != wire::FrameKind::kMrc) {
    r = MrcRx::kNotMrc;
  } else if (!peer_ok(fi)) {
    r = rc::pkey_match(fi.bth->pkey.value(), q_.pkey_) ? MrcRx::kBadSrc : MrcRx::kBadPkey;
  } else if (wire::mrc_is_data(fi.mrc.op)) {
    on_data(fi, m, &r, now);
  } else if (fi.mrc.op == MrcOp::kSack) {
    on_sack(fi, &r, now);
  } else if (fi.mrc.op == MrcOp::kNack) {
    on_nack(fi, &r, now);
  } else if (fi.mrc.op == MrcOp::kProbe) {
    if ((q_.state_ != QpState::kRtr && q_.state_ != QpState::kRts) || !st_) {
      r = MrcRx::kWrongState;
    } else {
      r = MrcRx::kProbe;
      if (probe_resp_count_ < probe_resps_.size()) {
        const wire::Peth& p = *fi.mrc.peth;
        probe_resps_[(probe_resp_head_ + probe_resp_count_) % probe_resps_.size()] =
            ProbeResp{p.probe_id.value(), p.ev.value(), p.tx_ts.value()};
        ++probe_resp_count_;
      }
    }
  }
  ++ctr_.rx[static_cast<int>(r)];
  q_.check_overrun(now);
  return static_cast<int>(r);
}

// ---------------------------------------------------------------- control frames

rte_mbuf* Transport::emit_sack(Psn cack, const wire::SackSpec& k, const wire::MrcCcStateSpec& c, uint32_t ev,
                               uint8_t plane) {
  constexpr uint32_t kSethOff = static_cast<uint32_t>(wire::UdpHeader::kSize + wire::Bth::kSize);
  const wire::IcrcLayout layout{hdr_v4_ ? wire::IpVersion::kV4 : wire::IpVersion::kV6, hdr_v4_ ? 20u : 40u};
  const uint32_t ip_off = hdr_ip_off_;
  const uint32_t udp_off = ip_off + layout.ip_header_bytes;
  const uint32_t bth_off = udp_off + static_cast<uint32_t>(wire::UdpHeader::kSize);
  const uint32_t seth_off = udp_off + kSethOff;
  const uint32_t end_off = seth_off + static_cast<uint32_t>(wire::Seth::kSize + wire::MrcCcState::kSize);
  const auto sport = static_cast<uint16_t>(0xC000u | (ev & 0x3FFFu));
  TxHdr* h = !hdr_sr_ && plane < sack_hdr_.size() ? &sack_hdr_[plane] : nullptr;
  if (h == nullptr || !h->valid) {
    wire::MrcFrameSpec s = spec_;
    s.op = MrcOp::kSack;
    s.bth.psn = cack;
    s.sack = k;
    s.cc = c;
    rte_mbuf* m = emit(s, 0, ev, plane);
    if (m == nullptr || h == nullptr) return m;
    // Keep its headers (source port 0 in the copy the ICRC state saw).
    const uint32_t hb = m->pkt_len - static_cast<uint32_t>(wire::kIcrcBytes);
    if (m->nb_segs == 1 && hb == end_off && hb <= kTxHdrBytes) {
      std::memcpy(h->b.data(), rte_pktmbuf_mtod(m, const uint8_t*), hb);
      h->b[udp_off] = 0;
      h->b[udp_off + 1] = 0;
      if (h->icrc.begin_prefix({h->b.data() + ip_off, hb - ip_off}, layout)) {
        h->b[udp_off] = static_cast<uint8_t>(sport >> 8);  // (overwritten per SACK)
        h->b[udp_off + 1] = static_cast<uint8_t>(sport);
        h->icrc_from = static_cast<uint16_t>(ip_off + layout.constant_bytes());
        h->bytes = static_cast<uint16_t>(hb);
        h->valid = true;
      }
    }
    return m;
  }
  rte_mbuf* m = rte_pktmbuf_alloc(q_.env_.pool);
  if (m == nullptr || rte_pktmbuf_tailroom(m) < h->bytes + wire::kIcrcBytes) {
    if (m != nullptr) rte_pktmbuf_free(m);
    ++q_.ctr_.alloc_failures;
    return nullptr;
  }
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t hb = h->bytes;
  std::memcpy(data, h->b.data(), hb);
  data[udp_off] = static_cast<uint8_t>(sport >> 8);
  data[udp_off + 1] = static_cast<uint8_t>(sport);
  if (!hdr_v4_) {
    const uint32_t fl = ev & 0xFFFFFu;
    data[ip_off + 1] = static_cast<uint8_t>((data[ip_off + 1] & 0xF0) | (fl >> 16));
    data[ip_off + 2] = static_cast<uint8_t>(fl >> 8);
    data[ip_off + 3] = static_cast<uint8_t>(fl);
  }
  const uint32_t psn = cack.value();
  data[bth_off + wire::Bth::kOffPsn] = static_cast<uint8_t>(psn >> 16);
  data[bth_off + wire::Bth::kOffPsn + 1] = static_cast<uint8_t>(psn >> 8);
  data[bth_off + wire::Bth::kOffPsn + 2] = static_cast<uint8_t>(psn);
  // As build_mrc_headers() writes them.
  auto* se = reinterpret_cast<wire::Seth*>(data + seth_off);
  se->flags = static_cast<uint8_t>(((static_cast<uint8_t>(k.skip) & 3u) << 6) |
                                   (k.probe_response ? wire::Seth::kFlagProbeResp : 0u) |
                                   (k.ce ? wire::Seth::kFlagCe : 0u));
  se->reserved = 0;
  se->ack_psn_offset.set(static_cast<uint16_t>(k.ack_psn_offset));
  se->ev.set(k.ev);
  se->sack_offset.set(static_cast<uint16_t>(k.sack_offset));
  se->mpr.set(k.mpr);
  se->bitmap.set(k.bitmap);
  auto* cs = reinterpret_cast<wire::MrcCcState*>(data + seth_off + wire::Seth::kSize);
  cs->ts_echo.set(c.ts_echo);
  cs->rcvd_bytes.set(c.rcvd_bytes);
  cs->ecn_count.set(c.ecn_count);
  cs->ooo_count.set(c.ooo_count);
  cs->rcv_cwnd_pen = static_cast<uint8_t>(c.rcv_cwnd_pen & wire::MrcCcState::kMaxRcvCwndPen);
  cs->cc_type = static_cast<uint8_t>(c.cc_type);
  cs->service_time.set(c.service_time);
  wire::IcrcAccumulator acc = h->icrc;
  acc.xor_udp_sport(sport);
  acc.update({data + h->icrc_from, hb - h->icrc_from});
  wire::store_le32(data + hb, acc.value());
  m->data_len = static_cast<uint16_t>(hb + wire::kIcrcBytes);
  m->pkt_len = hb + static_cast<uint32_t>(wire::kIcrcBytes);
  return m;
}

rte_mbuf* Transport::make_ctrl(TimeNs now) {
  if (nack_count_ == 0 && (probe_resp_count_ > 0 || sack_due_)) {
    // SACK / probe answer: the frequent control frame, without a spec copy.
    const bool pr = probe_resp_count_ > 0;
    const SackFields f = st_->sack(pr ? st_->cack() : trig_.psn);
    wire::SackSpec k;
    wire::MrcCcStateSpec c;
    k.sack_offset = f.sack_offset;
    k.mpr = f.mpr;
    k.bitmap = f.bitmap;
    c.rcvd_bytes = rcvd_bytes_;
    c.ecn_count = ecn_count_;
    c.ooo_count = f.ooo_count;
    c.rcv_cwnd_pen = rcv_penalty();
    if (q_.cc_acks_ && std::holds_alternative<Nscc>(q_.cc_)) c.cc_type = wire::MrcCcType::kNscc;
    uint32_t ev = 0;
    if (pr) {
      const ProbeResp& p = probe_resps_[probe_resp_head_];
      k.probe_response = true;
      k.ack_psn_offset = static_cast<int16_t>(p.id);
      k.ev = p.ev;
      c.ts_echo = p.ts;
      ev = p.ev;
    } else {
      k.skip = trig_.ce ? wire::MrcSkip::kSkipOnce : wire::MrcSkip::kNone;
      k.ce = trig_.ce;
      k.ack_psn_offset = f.ack_psn_offset;
      k.ev = trig_.ev;
      c.ts_echo = trig_.ts;
      // How long the trigger waited here (SACK coalescing): the sender takes
      // it off its RTT sample.
      c.service_time = static_cast<uint16_t>(std::clamp<int64_t>((now - trig_.at).ns(), 0, UINT16_MAX));
      ev = trig_.ev;
    }
    // Every control frame leaves on the control plane (NicNode files the QP's
    // control frames on ctrl_port()); the EV it reflects picks its UDP source port.
    rte_mbuf* m = emit_sack(f.cack, k, c, ev, ctrl_plane());
    if (m == nullptr) return nullptr;
    if (c.rcv_cwnd_pen != 0) ++ctr_.tx_rcv_pen_sacks;  // counted once it left (a failed emit retries)
    if (pr) {
      probe_resp_head_ = (probe_resp_head_ + 1) % static_cast<uint32_t>(probe_resps_.size());
      --probe_resp_count_;
      ++ctr_.tx_probe_responses;
    } else {
      sack_due_ = false;
      unsacked_ = 0;
      if (sack_deadline_ != TimeNs::max()) {
        sack_deadline_ = TimeNs::max();
        invalidate_deadline();
      }
      trig_.ce = false;
    }
    ++ctr_.tx_sacks;
    ++q_.ctr_.tx_acks;
    return m;
  }
  wire::MrcFrameSpec s = spec_;
  s.bth.psn = st_ ? st_->cack() : Psn(0);
  uint32_t ev = 0;
  uint8_t plane = 0;
  // Every control frame leaves on the control plane (NicNode files the QP's
  // control frames on ctrl_port()); the EV it reflects picks its UDP source port.
  auto pick_plane = [&](uint32_t) { plane = ctrl_plane(); };
  if (nack_count_ > 0) {
    const Nack& n = nacks_[nack_head_];
    s.op = MrcOp::kNack;
    s.nack.reason = n.reason;
    s.nack.ce = n.ce;
    s.nack.rtx = n.rtx;
    s.nack.ev = n.ev;
    s.nack.nack_psn = n.psn;
    s.nack.ts_echo = n.ts;
    ev = n.ev;
    pick_plane(ev);
    rte_mbuf* m = emit(s, 0, ev, plane);
    if (m == nullptr) return nullptr;
    nack_head_ = (nack_head_ + 1) % static_cast<uint32_t>(nacks_.size());
    --nack_count_;
    ++ctr_.tx_nacks;
    ++q_.ctr_.tx_naks;
    return m;
  }
  if (port_status_pending_) {
    s.op = MrcOp::kEndpointRequest;
    s.ep_request.op = wire::MrcEndpointOp::kPortStatus;
    s.ep_request.num_ports = planes_;
    s.ep_request.request_id = port_status_id_;
    s.ep_request.port_status_mask = local_up_;
    s.ep_request.tx_ts = now_ts(now);
    pick_plane(0);
    const std::optional<EvPick> pk = pick(plane);
    ev = pk ? pk->ev : attr_.ev_base;
    s.ep_request.ev = ev;
    rte_mbuf* m = emit(s, 0, ev, plane);
    if (m == nullptr) return nullptr;
    port_status_pending_ = false;
    ++ctr_.tx_port_status;
    return m;
  }
  if (ev_probe_resp_count_ > 0) {
    // The answer to the peer's EV_PROBE, on the path of the EV it tested.
    const ProbeResp& p = ev_probe_resps_[ev_probe_resp_head_];
    s.op = MrcOp::kEndpointResponse;
    s.ep_response.op = wire::MrcEndpointOp::kEvProbe;
    s.ep_response.status = wire::MrcEndpointStatus::kOk;
    s.ep_response.request_id = p.id;
    s.ep_response.ev = p.ev;
    s.ep_response.port_status_mask = local_up_;
    s.ep_response.ts_echo = p.ts;
    pick_plane(p.ev);
    rte_mbuf* m = emit(s, 0, p.ev, plane);
    if (m == nullptr) return nullptr;
    ev_probe_resp_head_ = (ev_probe_resp_head_ + 1) % static_cast<uint32_t>(ev_probe_resps_.size());
    --ev_probe_resp_count_;
    ++ctr_.tx_ev_probe_responses;
    return m;
  }
  if (ep_resp_pending_) {
    s.op = MrcOp::kEndpointResponse;
    s.ep_response.op = wire::MrcEndpointOp::kPortStatus;
    s.ep_response.status = wire::MrcEndpointStatus::kOk;
    s.ep_response.request_id = ep_resp_id_;
    s.ep_response.port_status_mask = local_up_;
    pick_plane(0);
    const std::optional<EvPick> pk = pick(plane);
    ev = pk ? pk->ev : attr_.ev_base;
    s.ep_response.ev = ev;
    rte_mbuf* m = emit(s, 0, ev, plane);
    if (m == nullptr) return nullptr;
    ep_resp_pending_ = false;
    return m;
  }
  return nullptr;
}

// ---------------------------------------------------------------- timers

TimeNs Transport::compute_deadline() const {
  TimeNs t = std::min(rto_deadline_, sack_deadline_);
  t = std::min(t, port_status_repeat_);
  if (sb_ && q_.state_ == QpState::kRts) {
    if (sb_->in_flight() > 0) t = std::min(t, next_probe_at_);
    // A probe already pending (not sent yet: its plane's port has not asked)
    // needs no timer; counting its past due time would make every advance()
    // due again at once (the node's timer loop would never end).
    if (ev_probe_out_ >= 0) t = std::min(t, ev_probe_sent_ + TimeNs(attr_.rto_ns));
    else if (retired_ > 0 && ev_probe_pending_ < 0) t = std::min(t, next_ev_probe_at_);
  }
  return t;
}

void Transport::advance(TimeNs now) {
  invalidate_deadline();
  if (sack_deadline_ <= now) {
    sack_deadline_ = TimeNs::max();
    if (unsacked_ > 0) sack_due_ = true;
  }
  if (port_status_repeat_ <= now) {
    // Repeated until the peer's EETH answers.
    port_status_pending_ = true;
    port_status_repeat_ = now + TimeNs(attr_.probe_interval_ns);
  }
  if (!sb_ || q_.state_ != QpState::kRts) {
    rto_deadline_ = TimeNs::max();
    return;
  }
  if (rto_deadline_ <= now) {
    rto_deadline_ = TimeNs::max();
    const TimeNs tol(attr_.ooo_tolerance_ns);
    const uint32_t n = sb_->in_flight();
    for (uint32_t i = 0; i < n; ++i) {
      const Psn p = sb_->una() + i;
      SendRec& r = rec(p);
      if (!r.live || r.queued || sb_->acked(p)) continue;
      const TimeNs sent = sent_of(r, now);
      if (r.missing && sent + tol <= now) {
        lost(p, false, now);
      } else if (sent + rto_of(r) <= now) {
        lost(p, true, now);
      } else {
        const TimeNs due = r.missing ? sent + tol : sent + rto_of(r);
        if (due < rto_deadline_) rto_deadline_ = due;
        continue;
      }
      if (q_.state_ != QpState::kRts) return;
    }
    if (cc_rto_) {
      cc_rto_ = false;
      if (q_.cc_acks_) {
        ++q_.cc_stats_.rtos;
        nic::cc_on_rto(q_.cc_, now);
        q_.cc_window_ = nic::cc_window_bytes(q_.cc_);
      }
    }
  }
  if (sb_->in_flight() > 0 && next_probe_at_ <= now) {
    // SACKs stopped while data is in flight: ask for one.
    probe_pending_ = true;
    next_probe_at_ = now + TimeNs(attr_.probe_interval_ns);
  } else if (sb_->in_flight() == 0) {
    next_probe_at_ = TimeNs::max();
  }
  if (ev_probe_out_ >= 0 && ev_probe_sent_ + TimeNs(attr_.rto_ns) <= now) {
    ev_->on_probe_result(static_cast<uint16_t>(ev_probe_out_), false);
    ev_probe_out_ = -1;
  }
  if (retired_ > 0 && ev_probe_out_ < 0 && ev_probe_pending_ < 0 && next_ev_probe_at_ <= now) {
    if (const std::optional<uint16_t> i = ev_->next_probe()) ev_probe_pending_ = *i;
    next_ev_probe_at_ = now + TimeNs(attr_.ev_probe_interval_ns);
  }
}

// ---------------------------------------------------------------- planes

void Transport::on_local_plane(uint8_t plane, bool up, TimeNs now) {
  if (!ev_ || plane >= planes_) return;
  invalidate_deadline();  // port_status_repeat_
  local_up_ = up ? (local_up_ | (1u << plane)) : (local_up_ & ~(1u << plane));
  ev_->set_plane_up(plane, up && ((peer_up_ >> plane) & 1u) != 0);
  port_status_pending_ = true;
  port_status_repeat_ = now + TimeNs(attr_.probe_interval_ns);
  ++port_status_id_;
}

void Transport::on_peer_port_status(uint32_t up_mask, uint8_t num_ports, uint16_t request_id) {
  if (!ev_) return;
  const uint32_t valid = num_ports >= 32 ? ~0u : (1u << num_ports) - 1;
  peer_up_ = (up_mask & valid) | ~valid;
  ev_->set_planes_up(local_up_ & peer_up_);
  ep_resp_pending_ = true;
  ep_resp_id_ = request_id;
  ++ctr_.rx[static_cast<int>(MrcRx::kPortStatus)];
}

bool Transport::on_peer_ev_probe(uint16_t request_id, uint32_t ev, uint32_t tx_ts) {
  if (ev_probe_resp_count_ == ev_probe_resps_.size()) return false;  // full: the prober's timeout fails it
  ev_probe_resps_[(ev_probe_resp_head_ + ev_probe_resp_count_) % ev_probe_resps_.size()] = {request_id, ev, tx_ts};
  ++ev_probe_resp_count_;
  ++ctr_.rx[static_cast<int>(MrcRx::kEvProbe)];
  return true;
}

bool Transport::on_ev_probe_answered(uint16_t request_id, uint32_t ev, uint32_t ts_echo,
                                     wire::MrcEndpointStatus status) {
  if (!ev_ || (request_id & kEvProbeFlag) == 0) return false;
  const int index = request_id & ~kEvProbeFlag;
  if (index != ev_probe_out_ || index >= ev_->size() || ev_->ev(static_cast<uint16_t>(index)) != ev) return false;
  // Another QP to the same peer with the same profile probes the same id and
  // EV: the echoed send time says whose answer it is; only an OK answer
  // re-admits.
  if (ts_echo != now_ts(ev_probe_sent_) || status != wire::MrcEndpointStatus::kOk) return false;
  invalidate_deadline();  // retired_, ev_probe_out_
  if (ev_->on_probe_result(static_cast<uint16_t>(index), true) == EvOutcome::kReadmitted && retired_ > 0) --retired_;
  ev_probe_out_ = -1;
  ++ctr_.rx[static_cast<int>(MrcRx::kEvProbeAnswered)];
  return true;
}

bool Transport::from_peer(const wire::FrameInfo& fi) const { return ev_.has_value() && peer_ok(fi); }

void Transport::on_port_status_answered() {
  invalidate_deadline();  // port_status_repeat_
  port_status_repeat_ = TimeNs::max();
  ++ctr_.rx[static_cast<int>(MrcRx::kPortStatusAnswered)];
}

}  // namespace sf::nic::mrc
