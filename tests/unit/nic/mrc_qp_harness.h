// Harness of the MRC QP tests: two NicNodes (node a = host 0, node b =
// host 1, `ports` ports each, port k of a wired to port k of b) joined by a
// test link in virtual time (each port sends one frame per wire time at the
// line rate, then `delay` of propagation) that the test controls frame by frame: every
// frame is parsed and shown to a filter that delivers it, drops it, holds it
// (for the test to release in any order), duplicates it or trims it to its
// headers (as a trimming switch does) or marks it CE (as an ECN switch does,
// IPv4 checksum fixed; the ICRC masks the ECN bits). Deterministic: no clock, no
// randomness but the test's. Header-only; EAL must be up.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "common/wire/frame_parser.h"
#include "common/wire/mbuf_icrc.h"
#include "common/wire/mrc_builder.h"
#include "common/wire/trim.h"
#include "nic/mrc/transport.h"
#include "tests/support/eal_env.h"
#include "tests/unit/nic/nic_harness.h"

namespace sf::nic::test {

// One frame on the test link, as parsed.
struct LinkPkt {
  int from = 0;        // 0: node a sent it, 1: node b
  PortId port = 0;
  bool mrc = false;
  wire::MrcOp op = wire::MrcOp::kWriteOnly;
  bool data = false;
  uint32_t psn = 0;
  uint32_t ev = 0;     // METH / SETH / NETH / PETH ev
  bool rtx = false;
  uint16_t udp_sport = 0;
  uint32_t msn = 0;
  uint32_t flow_label = 0;
  wire::MrcNackReason nack = wire::MrcNackReason::kTrimmed;
  uint32_t nack_psn = 0;
  bool probe_response = false;
  uint32_t ep_ev = 0;  // an endpoint frame's (ERTH / EETH) EV; `ev` stays 0 for them
};

enum class Fate { kDeliver, kDrop, kHold, kDup, kTrim, kCe };

inline rte_mbuf* mbuf_of(const std::vector<uint8_t>& b) {
  rte_mbuf* head = rte_pktmbuf_alloc(sf::test::mbuf_pool());
  if (head == nullptr) return nullptr;
  rte_mbuf* tail = head;
  size_t off = 0;
  while (off < b.size()) {
    uint32_t room = rte_pktmbuf_tailroom(tail);
    if (room == 0) {
      rte_mbuf* seg = rte_pktmbuf_alloc(sf::test::mbuf_pool());
      tail->next = seg;
      tail = seg;
      head->nb_segs++;
      room = rte_pktmbuf_tailroom(seg);
    }
    const uint32_t k = std::min<uint32_t>(room, static_cast<uint32_t>(b.size() - off));
    std::memcpy(rte_pktmbuf_mtod_offset(tail, uint8_t*, tail->data_len), b.data() + off, k);
    tail->data_len = static_cast<uint16_t>(tail->data_len + k);
    head->pkt_len += k;
    off += k;
  }
  return head;
}

inline std::vector<uint8_t> bytes_of(const rte_mbuf* m) {
  std::vector<uint8_t> v(m->pkt_len);
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, v.data());
  if (p != v.data()) std::memcpy(v.data(), p, m->pkt_len);
  return v;
}

inline LinkPkt describe(const std::vector<uint8_t>& b, int from, PortId port) {
  LinkPkt k;
  k.from = from;
  k.port = port;
  const wire::FrameInfo fi = wire::parse_frame(b);
  if (!fi.ok() || fi.kind != wire::FrameKind::kMrc) return k;
  k.mrc = true;
  k.op = fi.mrc.op;
  k.data = wire::mrc_is_data(fi.mrc.op);
  k.psn = fi.bth->get_psn().value();
  k.udp_sport = fi.udp->src_port.value();
  if (fi.ipv6 != nullptr) k.flow_label = fi.ipv6->vtc_flow.value() & 0xFFFFF;
  if (fi.mrc.meth != nullptr) {
    k.ev = fi.mrc.meth->ev.value();
    k.rtx = fi.mrc.meth->rtx();
    k.msn = fi.mrc.meth->msn.value();
  }
  if (fi.mrc.seth != nullptr) {
    k.ev = fi.mrc.seth->ev.value();
    k.probe_response = fi.mrc.seth->probe_response();
  }
  if (fi.mrc.neth != nullptr) {
    k.ev = fi.mrc.neth->ev.value();
    k.nack = fi.mrc.neth->get_reason();
    k.nack_psn = fi.mrc.neth->get_nack_psn().value();
  }
  if (fi.mrc.peth != nullptr) k.ev = fi.mrc.peth->ev.value();
  if (fi.mrc.erth != nullptr) k.ep_ev = fi.mrc.erth->ev.value();
  if (fi.mrc.eeth != nullptr) k.ep_ev = fi.mrc.eeth->ev.value();
  return k;
}

// A data frame as the transport sent it (its headers from the QP's header
// cache, PSN / METH / RETH / source port / flow label / SRv6 DA written over
// them, the ICRC from a saved state and the source port's share) against
// build_mrc_frame of the same fields read back from it: every byte,
// lengths, IPv4 checksum and ICRC included, must be what the builder makes.
// Returns false (with a failure) when it differs; true for non-data frames.
// The spec of a parsed MRC frame's Ethernet, IP, UDP and BTH (op included).
inline wire::MrcFrameSpec carrier_spec_of(const wire::FrameInfo& fi) {
  wire::MrcFrameSpec s;
  std::copy(fi.eth->dst.bytes.begin(), fi.eth->dst.bytes.end(), s.l2.dst.bytes.begin());
  std::copy(fi.eth->src.bytes.begin(), fi.eth->src.bytes.end(), s.l2.src.bytes.begin());
  if (fi.vlan != nullptr) s.l2.vlan = wire::VlanSpec{fi.vlan->pcp(), fi.vlan->dei(), fi.vlan->vid()};
  auto v6_spec = [](const wire::Ipv6Header& h) {
    wire::Ipv6Spec v;
    v.src = h.src;
    v.dst = h.dst;
    v.dscp = h.dscp();
    v.ecn = h.ecn();
    v.flow_label = h.vtc_flow.value() & 0xFFFFFu;
    v.hop_limit = h.hop_limit;
    return v;
  };
  if (fi.ipv4 != nullptr) {
    wire::Ipv4Spec v;
    v.src = fi.ipv4->src;
    v.dst = fi.ipv4->dst;
    v.dscp = fi.ipv4->dscp();
    v.ecn = fi.ipv4->ecn();
    v.ttl = fi.ipv4->ttl;
    v.id = fi.ipv4->id.value();
    v.dont_fragment = (fi.ipv4->flags_frag.value() & wire::Ipv4Header::kFlagDf) != 0;
    s.l3 = v;
  } else if (fi.outer_ipv6 != nullptr) {
    s.l3 = wire::Srv6Spec{v6_spec(*fi.outer_ipv6), v6_spec(*fi.ipv6)};
  } else {
    s.l3 = v6_spec(*fi.ipv6);
  }
  s.udp_src_port = fi.udp->src_port.value();
  s.op = fi.mrc.op;
  s.bth.dest_qp = fi.bth->dest_qp.value();
  s.bth.psn = fi.bth->get_psn();
  s.bth.ack_req = fi.bth->ack_requested();
  s.bth.se = fi.bth->se();
  s.bth.pkey = fi.bth->pkey.value();
  s.bth.fecn = fi.bth->fecn();
  s.bth.becn = fi.bth->becn();
  return s;
}

inline bool data_frame_as_built(const std::vector<uint8_t>& b) {
  const wire::FrameInfo fi = wire::parse_frame(b);
  if (!fi.ok() || fi.kind != wire::FrameKind::kMrc || !wire::mrc_is_data(fi.mrc.op)) return true;
  wire::MrcFrameSpec s = carrier_spec_of(fi);
  const wire::Meth& me = *fi.mrc.meth;
  s.meth.rtx = me.rtx();
  s.meth.ts_valid = me.ts_valid();
  s.meth.rqmsn = me.rqmsn.value();
  s.meth.msn = me.msn.value();
  s.meth.msg_offset = me.msg_offset.value();
  s.meth.ev = me.ev.value();
  s.meth.tx_ts = me.tx_ts.value();
  s.reth_va = fi.reth->va.value();
  s.reth_rkey = fi.reth->rkey.value();
  s.reth_dma_length = fi.reth->dma_length.value();
  if (fi.immdt != nullptr) s.immdt = fi.immdt->imm.value();
  std::vector<uint8_t> out(b.size() + 64);
  const wire::BuildResult r =
      wire::build_mrc_frame(out, s, std::span<const uint8_t>(b.data() + fi.payload_offset, fi.payload_bytes));
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return false;
  out.resize(r.frame_bytes);
  EXPECT_EQ(out, b) << "data frame PSN " << s.bth.psn.value() << " op " << static_cast<int>(s.op) << " EV " << s.meth.ev
                    << ": not what build_mrc_frame makes of its fields";
  return out == b;
}

// A SACK frame equals build_mrc_frame() of its own fields (SACKs come from a
// per-plane header cache, Transport::emit_sack; true for other frames).
inline bool sack_frame_as_built(const std::vector<uint8_t>& b) {
  const wire::FrameInfo fi = wire::parse_frame(b);
  if (!fi.ok() || fi.kind != wire::FrameKind::kMrc || fi.mrc.op != wire::MrcOp::kSack) return true;
  wire::MrcFrameSpec s = carrier_spec_of(fi);
  const wire::Seth& h = *fi.mrc.seth;
  s.sack.skip = h.skip();
  s.sack.probe_response = h.probe_response();
  s.sack.ce = h.ce();
  s.sack.ack_psn_offset = h.ack_offset();
  s.sack.ev = h.ev.value();
  s.sack.sack_offset = h.base_offset();
  s.sack.mpr = h.mpr.value();
  s.sack.bitmap = h.bitmap.value();
  const wire::MrcCcState& c = *fi.mrc.cc;
  s.cc.ts_echo = c.ts_echo.value();
  s.cc.rcvd_bytes = c.rcvd_bytes.value();
  s.cc.ecn_count = c.ecn_count.value();
  s.cc.ooo_count = c.ooo_count.value();
  s.cc.rcv_cwnd_pen = c.rcv_cwnd_pen;
  s.cc.cc_type = static_cast<wire::MrcCcType>(c.cc_type);
  s.cc.service_time = c.service_time.value();
  std::vector<uint8_t> out(b.size() + 64);
  const wire::BuildResult r = wire::build_mrc_frame(out, s, {});
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return false;
  out.resize(r.frame_bytes);
  EXPECT_EQ(out, b) << "SACK CACK " << s.bth.psn.value() << " EV " << s.sack.ev
                    << ": not what build_mrc_frame makes of its fields";
  return out == b;
}

// Host configs with `ports` ports each (port k: its own MAC / IPs).
inline NicConfig mrc_node_cfg(int host, int ports, BitRate rate, uint64_t trimmed_dscp_mask = 0) {
  NicConfig c;
  HostConfig h = host_cfg(host, {});
  for (int k = 0; k < ports; ++k) {
    h.ports.push_back(static_cast<PortId>(k));
    HostPortAddr a;
    a.mac = host_mac(host * 16 + k);
    wire::Ipv4Addr ip4 = host_ip4(host);
    ip4.bytes[2] = static_cast<uint8_t>(k);
    a.ipv4 = ip4;
    wire::Ipv6Addr ip6 = host_ip6(host);
    ip6.bytes[14] = static_cast<uint8_t>(k);
    a.ipv6 = ip6;
    if (ports > 1) h.port_addrs.push_back(a);
    NicPortConfig p;
    p.line_rate = rate;
    p.mrc_trimmed_dscp_mask = trimmed_dscp_mask;
    c.ports.push_back(p);
  }
  c.hosts.push_back(h);
  return c;
}

inline Endpoint make_mrc_endpoint(NicNode& node, size_t buf_bytes, uint32_t max_wr = 256, int scq_entries = 4096) {
  Endpoint e;
  e.ctx = v::open_device(node, 0);
  e.pd = v::alloc_pd(e.ctx.get());
  e.scq = v::create_cq(e.ctx.get(), scq_entries);
  e.rcq = v::create_cq(e.ctx.get(), 4096);
  v::QpInitAttr ia;
  ia.send_cq = e.scq;
  ia.recv_cq = e.rcq;
  ia.qp_type = v::QpType::kMrc;
  ia.cap.max_send_wr = max_wr;
  ia.cap.max_recv_wr = max_wr;
  ia.cap.max_send_sge = 4;
  ia.cap.max_recv_sge = 4;
  e.qp = v::create_qp(e.pd, &ia);
  e.buf.assign(buf_bytes, 0);
  e.mr = v::reg_mr(e.pd, e.buf.data(), e.buf.size(), kAllAccess);
  return e;
}

class MrcRig {
 public:
  // trimmed_dscp_mask: both nodes' ports' NicPortConfig::mrc_trimmed_dscp_mask.
  explicit MrcRig(int ports = 1, BitRate rate = BitRate::gbps(100), TimeNs delay = TimeNs::from_us(1),
                  uint64_t trimmed_dscp_mask = 0)
      : a(mrc_node_cfg(0, ports, rate, trimmed_dscp_mask), sf::test::mbuf_pool()),
        b(mrc_node_cfg(1, ports, rate, trimmed_dscp_mask), sf::test::mbuf_pool()),
        ports_(ports),
        rate_(rate),
        delay_(delay) {}
  ~MrcRig() {
    for (auto& f : wire_) rte_pktmbuf_free(f.m);
  }

  NicNode a;
  NicNode b;
  TimeNs now{0};
  // Decides each frame's fate (default: deliver).
  std::function<Fate(const LinkPkt&)> filter;
  // Fate::kTrim: trim_frame's size (0: to the headers, no ICRC room left;
  // sf-switch's SWITCH_TRIMMING default is 128 B) and the DSCP it marks.
  uint32_t trim_size = 0;
  uint8_t trim_dscp = 46;
  // Every frame seen, in order.
  std::vector<LinkPkt> log;
  // Called with every frame's bytes as it leaves node `from`'s `port` (before its fate).
  std::function<void(int from, PortId port, const std::vector<uint8_t>&)> tap;
  // Held frames (Fate::kHold), in arrival order.
  std::vector<std::pair<LinkPkt, std::vector<uint8_t>>> held;
  // Port up/down of the link (per port index): a down link drops both ways,
  // frames already on it too.
  std::vector<bool> link_up = std::vector<bool>(32, true);

  NicNode& node(int i) { return i == 0 ? a : b; }
  // Frames a port's transmit() may hand over per call (1..32): sf-sim and a
  // poll loop take bursts, and a QP due again at once keeps the port's turn
  // for the whole burst (NicNode `again`).
  size_t burst = 1;
  // Called after every node call the rig makes (each receive of a frame,
  // each advance, each transmit), e.g. to check an invariant step by step.
  std::function<void()> on_step;

  // Releases held frames in `order` (indexes into `held`), all arriving
  // after one link delay in that order; clears `held`.
  void release(const std::vector<size_t>& order) {
    for (size_t i : order) put(1 - held[i].first.from, held[i].first.port, held[i].second);
    held.clear();
  }

  void run_for(TimeNs d) { run_until([] { return false; }, now + d); }
  // Runs until `done()` or virtual time `limit`; true when done.
  bool run_until(const std::function<bool()>& done, TimeNs limit) {
    for (;;) {
      deliver_due();
      a.advance(now);
      step();
      b.advance(now);
      step();
      TimeNs t = std::min(a.next_wakeup(now), b.next_wakeup(now));
      for (int n = 0; n < 2; ++n) {
        for (int p = 0; p < ports_; ++p) {
          Tx& x = tx_[n][p];
          if (x.free_at <= now) x.more = pull(n, static_cast<PortId>(p));
          if (x.more) t = std::min(t, std::max(x.free_at, now + TimeNs(1)));
        }
      }
      if (done()) return true;
      if (!wire_.empty()) t = std::min(t, wire_.front().at);
      if (t <= now) t = now + TimeNs(1);
      if (t > limit) {
        now = limit;
        return done();
      }
      now = t;
    }
  }

  // A frame into node `to`'s port `port` after the link delay.
  void put(int to, PortId port, const std::vector<uint8_t>& bytes) {
    InFlight f{std::max(now, put_at_) + delay_, seq_++, to, port, mbuf_of(bytes)};
    wire_.insert(std::upper_bound(wire_.begin(), wire_.end(), f,
                                  [](const InFlight& x, const InFlight& y) {
                                    return x.at < y.at || (x.at == y.at && x.seq < y.seq);
                                  }),
                 f);
  }

 private:
  TimeNs put_at_{0};  // departure of the frame being put (a burst's frames leave in turn)
  struct InFlight {
    TimeNs at;
    uint64_t seq;
    int to;
    PortId port;
    rte_mbuf* m;
  };
  void deliver_due() {
    while (!wire_.empty() && wire_.front().at <= now) {
      InFlight f = wire_.front();
      wire_.erase(wire_.begin());
      rte_mbuf* m = f.m;
      if (!link_up[f.port]) {
        rte_pktmbuf_free(m);
        continue;
      }
      node(f.to).receive(f.port, {&m, 1}, now);
      step();
    }
  }
  void step() {
    if (on_step) on_step();
  }
  // One frame from node n's port, if it has one (the port is then busy for
  // its wire time); true when it sent one.
  bool pull(int n, PortId port) {
    {
      std::array<rte_mbuf*, 32> out{};
      const uint16_t k = node(n).transmit(port, std::span<rte_mbuf*>(out.data(), std::min<size_t>(burst, 32)), now);
      step();
      TimeNs start = now;
      for (uint16_t i = 0; i < k; ++i) {
        put_at_ = start;  // a burst's frames leave back to back
        start = start + rate_.tx_time(wire_bytes(out[i]->pkt_len));
        tx_[n][port].free_at = start;
        std::vector<uint8_t> bytes = bytes_of(out[i]);
        rte_pktmbuf_free(out[i]);
        const LinkPkt pk = describe(bytes, n, port);
        log.push_back(pk);
        if (tap) tap(n, port, bytes);
        if (!link_up[port]) continue;
        const Fate f = filter ? filter(pk) : Fate::kDeliver;
        switch (f) {
          case Fate::kDeliver: put(1 - n, port, bytes); break;
          case Fate::kDrop: break;
          case Fate::kHold: held.push_back({pk, bytes}); break;
          case Fate::kDup:
            put(1 - n, port, bytes);
            put(1 - n, port, bytes);
            break;
          case Fate::kCe: {
            const wire::FrameInfo fi = wire::parse_frame(bytes);
            if (fi.ipv4 != nullptr) {
              auto* v4 = reinterpret_cast<wire::Ipv4Header*>(bytes.data() + (reinterpret_cast<const uint8_t*>(fi.ipv4) -
                                                                             bytes.data()));
              v4->set_dscp_ecn(v4->dscp(), wire::Ecn::kCe);
              wire::ipv4_set_checksum(*v4);
            } else if (fi.ipv6 != nullptr) {
              auto* v6 = reinterpret_cast<wire::Ipv6Header*>(bytes.data() + (reinterpret_cast<const uint8_t*>(fi.ipv6) -
                                                                             bytes.data()));
              v6->set_dscp_ecn(v6->dscp(), wire::Ecn::kCe);
            }
            put(1 - n, port, bytes);
            break;
          }
          case Fate::kTrim: {
            const wire::FrameInfo fi = wire::parse_frame(bytes);
            const wire::TrimResult r = wire::trim_frame(bytes, fi, trim_size, trim_dscp);
            EXPECT_TRUE(r.ok());
            bytes.resize(r.frame_bytes);
            put(1 - n, port, bytes);
            break;
          }
        }
      }
      return k > 0;
    }
  }

  struct Tx {
    TimeNs free_at{0};
    bool more = false;
  };
  std::array<std::array<Tx, 32>, 2> tx_{};
  int ports_;
  BitRate rate_;
  TimeNs delay_;
  uint64_t seq_ = 0;
  std::vector<InFlight> wire_;
};

// Connects MRC endpoints x (on rig node 0) and y (node 1) both ways; `attr`
// / `mask` applied to both in RESET first.
inline void connect_mrc(Endpoint& x, Endpoint& y, const v::MrcQpAttr* attr = nullptr, int mask = 0,
                        ConnParams p = {}) {
  if (attr != nullptr) {
    ASSERT_EQ(v::mrc_modify_qp(x.qp, attr, mask), 0) << x.qp->mrc_error();
    ASSERT_EQ(v::mrc_modify_qp(y.qp, attr, mask), 0) << y.qp->mrc_error();
  }
  ConnParams q = p;
  std::swap(q.sq_psn, q.rq_psn);
  ASSERT_EQ(connect_qp(x, y, p), 0) << x.qp->mrc_error();
  ASSERT_EQ(connect_qp(y, x, q), 0) << y.qp->mrc_error();
}

// Tells both QPs (in RESET or INIT) the peer's per-plane addresses (port
// k + 1 of the other host for plane k), with `a` / `mask` applied too.
inline void tell_peer_planes(MrcRig& rig, Endpoint& x, Endpoint& y, const v::MrcQpAttr& a, int mask, uint8_t planes) {
  for (int side = 0; side < 2; ++side) {
    Endpoint& self = side == 0 ? x : y;
    NicNode& peer = side == 0 ? rig.b : rig.a;
    v::MrcQpAttr m = a;
    m.num_peer_ports = planes;
    for (uint8_t k = 0; k < planes; ++k) {
      const rc::LocalAddr& l = peer.host(0).local(static_cast<uint8_t>(k + 1));
      m.peer_gid[k] = v::gid_from_ipv4(l.ipv4);
      for (int i = 0; i < 6; ++i) m.peer_mac[k][i] = l.mac.bytes[i];
    }
    ASSERT_EQ(v::mrc_modify_qp(self.qp, &m, mask | v::kMrcPeerPorts), 0) << self.qp->mrc_error();
  }
}

inline const mrc::MrcCounters& mctr(const Endpoint& e) { return e.qp->mrc()->counters(); }

// Runs until `n` send completions on `e` (or the limit); returns them.
inline std::vector<v::Wc> wait_send(MrcRig& rig, Endpoint& e, size_t n, TimeNs limit = TimeNs::from_ms(50)) {
  std::vector<v::Wc> got;
  rig.run_until(
      [&] {
        auto w = drain(e.scq);
        got.insert(got.end(), w.begin(), w.end());
        return got.size() >= n;
      },
      rig.now + limit);
  return got;
}

inline void expect_same(const Endpoint& src, uint64_t soff, const Endpoint& dst, uint64_t doff, size_t len) {
  ASSERT_LE(soff + len, src.buf.size());
  ASSERT_LE(doff + len, dst.buf.size());
  EXPECT_TRUE(std::equal(src.buf.begin() + static_cast<long>(soff), src.buf.begin() + static_cast<long>(soff + len),
                         dst.buf.begin() + static_cast<long>(doff)))
      << len << " bytes differ";
}

}  // namespace sf::nic::test
