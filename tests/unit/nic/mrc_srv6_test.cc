// MRC in SRv6 mode (ev_mode kSrv6, docs/mrc.md "SRv6 uSID paths"): the EV
// picks plane and uplink, each frame is IPv6-in-IPv6 with outer DA = block |
// uSIDs of its EV's path.
//  1. Two NicNodes on a test link: every data frame's outer DA is the one its
//     EV names, the inner header is the peers' (ICRC over it), flow labels =
//     EV, the WRITE byte-exact; feedback on the reflected EV's path.
//  2. tshark reads a pcap of those frames: Ethernet / outer IPv6 (next
//     header 41) / inner IPv6 / UDP 4791, the uSID DA as built.
//  3. Bad templates refused with the key named; IPv4 at RTR refused.
//  3b. Two planes (2-port hosts): plane p's frames leave port p + 1 with
//     plane p's template and the port's own addresses.
//  4. Through our own switches' uN forwarding (SwitchNode, sf-sim): a 2-leaf
//     2-spine fabric, the packets spread over both spines as the EVs name
//     them, byte-exact.
//  5. The same fabric with spine 1 blackholed mid-transfer: EV retirement
//     routes around it (every EV naming spine 1 retired, none of the other),
//     the WRITEs complete byte-exact, no QP error.
//  6. EV_PROBE (connectionless endpoint op 1, ev_probe_endpoint): a retired
//     EV probed on its own path, answered by the peer's QP on the same path,
//     re-admitted after 3 answers; in the SRv6 fabric, a spine that heals gets
//     its EVs back through EV_PROBEs that fail while it is dead.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "common/config/json_loader.h"
#include "common/sim/simulator.h"
#include "common/wire/srv6.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"
#include "tests/interop/pcap_writer.h"
#include "tests/unit/nic/mrc_qp_harness.h"

namespace sf::nic::test {
namespace {

constexpr std::array<uint8_t, 4> kBlock = {0xFC, 0xBB, 0xBB, 0xBB};

// One plane: before | uplinks[u] | after.
v::MrcQpAttr srv6_attr(std::vector<uint16_t> before, std::vector<uint16_t> uplinks, std::vector<uint16_t> after,
                       uint16_t num_evs = 16) {
  v::MrcQpAttr a;
  a.num_evs = num_evs;
  a.ev_mode = v::MrcEvMode::kSrv6;
  std::memcpy(a.srv6.block, kBlock.data(), 4);
  a.srv6.num_planes = 1;
  v::MrcSrv6Plane& p = a.srv6.plane[0];
  p.num_before = static_cast<uint8_t>(before.size());
  p.num_uplinks = static_cast<uint8_t>(uplinks.size());
  p.num_after = static_cast<uint8_t>(after.size());
  std::copy(before.begin(), before.end(), p.before);
  std::copy(uplinks.begin(), uplinks.end(), p.uplinks);
  std::copy(after.begin(), after.end(), p.after);
  return a;
}
constexpr int kSrv6Mask = v::kMrcNumEvs | v::kMrcEvMode | v::kMrcSrv6Path;

wire::Ipv6Addr da_of(std::vector<uint16_t> usids) {
  wire::Ipv6Addr a{};
  EXPECT_TRUE(wire::make_usid_address(a, kBlock, usids));
  return a;
}

// 1 + 2. Frames on a test link, then tshark.
TEST(MrcSrv6, FrameOfEvCarriesItsUsidPath) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 18);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 18);
  fill_pattern(x.buf, 61);
  const v::MrcQpAttr ax = srv6_attr({0x1}, {0x3, 0x4}, {0x2, 0x8001});
  const v::MrcQpAttr ay = srv6_attr({0x2}, {0x3, 0x4}, {0x1, 0x8000});
  ASSERT_EQ(v::mrc_modify_qp(x.qp, &ax, kSrv6Mask), 0) << x.qp->mrc_error();
  ASSERT_EQ(v::mrc_modify_qp(y.qp, &ay, kSrv6Mask), 0) << y.qp->mrc_error();
  ConnParams p;
  p.ipv6 = true;
  connect_mrc(x, y, nullptr, 0, p);
  std::vector<std::vector<uint8_t>> frames;
  rig.tap = [&](int, PortId, const std::vector<uint8_t>& b) { frames.push_back(b); };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 18, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 18);
  size_t data = 0;
  size_t fb = 0;
  std::array<size_t, 2> per_uplink{};
  for (const auto& b : frames) {
    const wire::FrameInfo fi = wire::parse_frame(b);
    ASSERT_TRUE(fi.ok()) << wire::to_string(fi.reason);
    ASSERT_EQ(fi.kind, wire::FrameKind::kMrc);
    ASSERT_NE(fi.outer_ipv6, nullptr);
    ASSERT_NE(fi.ipv6, nullptr);
    EXPECT_EQ(wire::icrc_verify(b, fi), wire::IcrcStatus::kOk);
    EXPECT_TRUE(data_frame_as_built(b));  // outer DA and flow labels written over a cached header
    EXPECT_EQ(fi.outer_ipv6->next_header, 41);
    EXPECT_EQ(fi.outer_ipv6->hop_limit, 64);
    const bool from_x = fi.ipv6->src == host_ip6(0);
    EXPECT_EQ(fi.ipv6->dst, from_x ? host_ip6(1) : host_ip6(0));
    EXPECT_EQ(fi.outer_ipv6->src, fi.ipv6->src);
    uint32_t ev = 0;
    if (fi.mrc.meth != nullptr) {
      ev = fi.mrc.meth->ev.value();
      ++data;
      ++per_uplink[ev % 2];
    } else if (fi.mrc.seth != nullptr) {
      ev = fi.mrc.seth->ev.value();
      ++fb;
    } else if (fi.mrc.peth != nullptr) {
      ev = fi.mrc.peth->ev.value();
    } else {
      continue;
    }
    // EV index i (ev_base 0, one plane): uplink i % 2.
    const uint16_t up = ev % 2 == 0 ? 0x3 : 0x4;
    const wire::Ipv6Addr want = from_x ? da_of({0x1, up, 0x2, 0x8001}) : da_of({0x2, up, 0x1, 0x8000});
    EXPECT_EQ(fi.outer_ipv6->dst, want) << "ev " << ev;
    EXPECT_EQ(fi.outer_ipv6->vtc_flow.value() & 0xFFFFF, ev);
    EXPECT_EQ(fi.ipv6->vtc_flow.value() & 0xFFFFF, ev);
  }
  EXPECT_EQ(data, 64u);
  EXPECT_GT(fb, 0u);
  EXPECT_GT(per_uplink[0], 16u);
  EXPECT_GT(per_uplink[1], 16u);
  // The first data frame, field by field.
  const wire::FrameInfo f0 = wire::parse_frame(frames.front());
  EXPECT_EQ(f0.outer_ipv6->dst, da_of({0x1, f0.mrc.meth->ev.value() % 2 == 0 ? uint16_t{3} : uint16_t{4}, 0x2, 0x8001}));

  // 2. tshark dissects outer / inner IPv6 and UDP.
  const std::string pcap = ::testing::TempDir() + "mrc_srv6_frames.pcap";
  {
    wire::test::PcapWriter w(pcap);
    for (size_t i = 0; i < 8 && i < frames.size(); ++i) w.write(frames[i]);
    ASSERT_TRUE(w.ok());
  }
  if (std::system("command -v tshark >/dev/null 2>&1") != 0) {
    std::remove(pcap.c_str());
    GTEST_SKIP() << "tshark not installed: the dissection check did not run";
  }
  const std::string cmd = "tshark -r " + pcap +
                          " -T fields -E 'separator=;' -e ipv6.nxt -e ipv6.src -e ipv6.dst -e udp.dstport 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::vector<std::string> lines;
  char buf[1024];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) lines.emplace_back(buf);
  pclose(pipe);
  std::remove(pcap.c_str());
  ASSERT_EQ(lines.size(), std::min<size_t>(8, frames.size()));
  for (size_t i = 0; i < lines.size(); ++i) {
    const wire::FrameInfo fi = wire::parse_frame(frames[i]);
    const bool from_x = fi.ipv6->src == host_ip6(0);
    const uint32_t ev = fi.mrc.meth ? fi.mrc.meth->ev.value() : fi.mrc.seth ? fi.mrc.seth->ev.value() : 0;
    const char* up = ev % 2 == 0 ? "3" : "4";
    // Both IPv6 headers (outer, inner), UDP 4791.
    const std::string want = from_x ? std::string("41,17;fd00::1,fd00::1;fcbb:bbbb:1:") + up + ":2:8001::,fd00::2;4791\n"
                                    : std::string("41,17;fd00::2,fd00::2;fcbb:bbbb:2:") + up + ":1:8000::,fd00::1;4791\n";
    EXPECT_EQ(lines[i], want) << "frame " << i;
  }
}

// 3. Bad templates: refused, the key named, nothing changed.
TEST(MrcSrv6, BadTemplatesRefused) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 4096);
  Endpoint y = make_mrc_endpoint(rig.b, 4096);
  auto refused = [&](const v::MrcQpAttr& a, const char* key, int mask = kSrv6Mask) {
    EXPECT_EQ(v::mrc_modify_qp(x.qp, &a, mask), EINVAL) << key;
    EXPECT_NE(std::string(x.qp->mrc_error()).find(key), std::string::npos) << x.qp->mrc_error();
  };
  v::MrcQpAttr a;
  a.ev_mode = v::MrcEvMode::kSrv6;  // no template
  refused(a, "srv6.num_planes", v::kMrcEvMode);
  refused(srv6_attr({0x1, 0x5}, {0x3}, {0x6, 0x7, 0x2, 0x8001}), "srv6.planes[0]: before (2) + 1 uplink + after (4)");
  refused(srv6_attr({}, {}, {0x2}), "srv6.planes[0].uplinks");
  refused(srv6_attr({0x1}, {0x3, 0, 0x4}, {0x2}), "srv6.planes[0].uplinks: uSID 0");
  refused(srv6_attr({0}, {0x3}, {0x2}), "srv6.planes[0].before: uSID 0");
  refused(srv6_attr({0x1}, {0x3}, {0x2, 0}), "srv6.planes[0].after: uSID 0");
  refused(srv6_attr({0x1}, {0x3, 0x4, 0x5, 0x6}, {0x2}, 2), "srv6.planes[0].uplinks: 4 SRv6 uplinks but only 2");
  a = srv6_attr({0x1}, {0x3}, {0x2});
  a.srv6.num_planes = 2;
  refused(a, "srv6.num_planes");
  a = srv6_attr({0x1}, {0x3}, {0x2});
  std::memset(a.srv6.block, 0, 4);
  refused(a, "srv6.block");
  a = srv6_attr({0x1}, {0x3}, {0x2});
  a.srv6.hop_limit = 0;
  refused(a, "srv6.hop_limit");
  EXPECT_EQ(x.qp->mrc()->attr().ev_mode, v::MrcEvMode::kUdpSport);  // nothing applied
  // Six uSIDs fit; an IPv4 connection is refused at RTR (the inner header is IPv6).
  a = srv6_attr({0x1, 0x5}, {0x3}, {0x6, 0x2, 0x8001});
  ASSERT_EQ(v::mrc_modify_qp(x.qp, &a, kSrv6Mask), 0) << x.qp->mrc_error();
  EXPECT_EQ(connect_qp(x, y, ConnParams{}), EINVAL);
  EXPECT_NE(std::string(x.qp->mrc_error()).find("IPv6"), std::string::npos) << x.qp->mrc_error();
}

// 3b. Two planes: each plane's template, on its own port.
TEST(MrcSrv6, TwoPlanesEachWithItsTemplate) {
  MrcRig rig(2);
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 20);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 20);
  fill_pattern(x.buf, 62);
  for (int side = 0; side < 2; ++side) {
    Endpoint& self = side == 0 ? x : y;
    NicNode& peer = side == 0 ? rig.b : rig.a;
    v::MrcQpAttr m = srv6_attr({0x1}, {0x3, 0x4}, {0x2, static_cast<uint16_t>(0x8000 + 1 - side)});
    m.srv6.num_planes = 2;
    m.srv6.plane[1] = m.srv6.plane[0];
    for (uint16_t& u : m.srv6.plane[1].before) u = u != 0 ? static_cast<uint16_t>(u | 0x100) : 0;
    for (uint16_t& u : m.srv6.plane[1].uplinks) u = u != 0 ? static_cast<uint16_t>(u | 0x100) : 0;
    for (uint16_t& u : m.srv6.plane[1].after) u = u != 0 ? static_cast<uint16_t>(u | 0x100) : 0;
    m.num_peer_ports = 2;
    for (uint8_t k = 0; k < 2; ++k) {
      const rc::LocalAddr& l = peer.host(0).local(static_cast<uint8_t>(k + 1));
      m.peer_gid[k] = l.ipv6;
      for (int i = 0; i < 6; ++i) m.peer_mac[k][i] = l.mac.bytes[i];
    }
    ASSERT_EQ(v::mrc_modify_qp(self.qp, &m, kSrv6Mask | v::kMrcPeerPorts), 0) << self.qp->mrc_error();
  }
  ConnParams p;
  p.ipv6 = true;
  connect_mrc(x, y, nullptr, 0, p);
  std::array<size_t, 2> per_port{};
  rig.tap = [&](int from, PortId port, const std::vector<uint8_t>& b) {
    const wire::FrameInfo fi = wire::parse_frame(b);
    ASSERT_TRUE(fi.ok() && fi.outer_ipv6 != nullptr);
    if (from != 0 || fi.mrc.meth == nullptr) return;
    const uint32_t ev = fi.mrc.meth->ev.value();
    ++per_port[port];
    EXPECT_EQ(ev % 2, port);
    const uint16_t plane = static_cast<uint16_t>(port == 1 ? 0x100 : 0);
    const uint16_t up = static_cast<uint16_t>(((ev / 2) % 2 == 0 ? 0x3 : 0x4) | plane);
    EXPECT_EQ(fi.outer_ipv6->dst, da_of({static_cast<uint16_t>(0x1 | plane), up, static_cast<uint16_t>(0x2 | plane),
                                         static_cast<uint16_t>(0x8001 | plane)}));
    EXPECT_EQ(fi.outer_ipv6->src, rig.a.host(0).local(static_cast<uint8_t>(port + 1)).ipv6);
    EXPECT_EQ(fi.ipv6->src, fi.outer_ipv6->src);
    EXPECT_EQ(fi.ipv6->dst, rig.b.host(0).local(static_cast<uint8_t>(port + 1)).ipv6);
    EXPECT_TRUE(data_frame_as_built(b));  // each plane's header cache
  };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 20, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  expect_same(x, 0, y, 0, 1 << 20);
  EXPECT_EQ(per_port[0] + per_port[1], 256u);
  EXPECT_GT(per_port[0], 100u);
  EXPECT_GT(per_port[1], 100u);
}

// ---- 4 + 5: through SwitchNodes (uN) in virtual time ----------------------

// Switch s's port p MAC.
std::array<uint8_t, 6> sw_mac(int s, int p) {
  return {0x02, 0x53, 0x57, 0x00, static_cast<uint8_t>(s), static_cast<uint8_t>(p)};
}

sw::SwitchConfig switch_cfg(int ports, uint16_t my_usid, std::vector<sw::Srv6Config::Entry> table) {
  std::string t = "{\"PORT\": {";
  for (int i = 0; i < ports; ++i) {
    t += (i == 0 ? "" : ", ") + std::string("\"Ethernet") + std::to_string(4 * i) + "\": {\"devargs\": \"sim" +
         std::to_string(i) + "\", \"speed\": 100, \"mtu\": 9100}";
  }
  sw::SwitchConfig c = sw::parse_switch_config(config::parse_text(t + "}}"));
  sw::Srv6Config s;
  s.block = kBlock;
  s.my_usid = my_usid;
  s.table = std::move(table);
  c.srv6 = s;
  return c;
}

sw::Srv6Config::Entry entry(uint16_t usid, uint16_t port, std::array<uint8_t, 6> mac) {
  sw::Srv6Config::Entry e;
  e.usid = usid;
  e.next_hop.port = port;
  e.next_hop.mac = mac;
  return e;
}

// leaf0 (uSID 1), leaf1 (2), spine0 (3), spine1 (4); host A on leaf0 port 0
// (uSID 0x8000), host B on leaf1 port 0 (0x8001). Leaf ports: 0 host, 1
// spine0, 2 spine1; spine ports: 0 leaf0, 1 leaf1. Every link 100 Gb/s, 1 us.
struct Fabric {
  static NicConfig host(int i, int leaf) {
    NicConfig c = one_host_cfg(i);
    c.hosts[0].ipv4.reset();  // IPv6-only: the SRv6 inner header
    c.hosts[0].gateway_mac = wire::MacAddr{sw_mac(leaf, 0)};
    return c;
  }
  std::vector<std::unique_ptr<sw::SwitchConfig>> cfgs;  // a SwitchNode keeps a reference to its config
  std::vector<std::unique_ptr<sw::SwitchNode>> sws;
  NicNode a{host(0, 0), sf::test::mbuf_pool()};
  NicNode b{host(1, 1), sf::test::mbuf_pool()};
  ScriptApp app;
  sim::Simulator sim{2027};
  std::array<sim::NodeId, 4> sid{};
  std::array<std::array<sim::LinkId, 2>, 2> up{};  // [leaf][spine]
  Fabric() {
    const auto mk = [&](int s, int ports, uint16_t usid, std::vector<sw::Srv6Config::Entry> t) {
      std::vector<std::array<uint8_t, 6>> macs;
      for (int p = 0; p < ports; ++p) macs.push_back(sw_mac(s, p));
      cfgs.push_back(std::make_unique<sw::SwitchConfig>(switch_cfg(ports, usid, std::move(t))));
      sws.push_back(std::make_unique<sw::SwitchNode>(*cfgs.back(), macs));
      sid[s] = sim.add_node(*sws.back(), "sw" + std::to_string(s));
    };
    // leaves 0, 1 are switches 0, 1; spines 0, 1 are switches 2, 3.
    for (int l = 0; l < 2; ++l) {
      mk(l, 3, static_cast<uint16_t>(1 + l),
         {entry(0x3, 1, sw_mac(2, l)), entry(0x4, 2, sw_mac(3, l)),
          entry(static_cast<uint16_t>(0x8000 + l), 0, host_mac(l).bytes)});
    }
    for (int s = 0; s < 2; ++s) {
      mk(2 + s, 2, static_cast<uint16_t>(3 + s),
         {entry(0x1, 0, sw_mac(0, 1 + s)), entry(0x2, 1, sw_mac(1, 1 + s))});
    }
    a.set_app(&app);
    const sim::LinkParams lp{BitRate::gbps(100), TimeNs::from_us(1)};
    sim.connect(sim.add_node(a, "a"), 0, sid[0], 0, lp);
    sim.connect(sim.add_node(b, "b"), 0, sid[1], 0, lp);
    for (int l = 0; l < 2; ++l) {
      for (int s = 0; s < 2; ++s) up[l][s] = sim.connect(sid[l], static_cast<PortId>(1 + s), sid[2 + s], l, lp);
    }
  }
  uint64_t noroute_drops() const {
    uint64_t n = 0;
    for (const auto& s : sws) {
      for (PortId p = 0; p < s->num_ports(); ++p) {
        const uint64_t k = s->counters(p).drops[static_cast<int>(sw::DropCause::kNoRoute)];
        if (k != 0) std::printf("switch %ld port %u: %lu no-route drops\n", &s - sws.data(), p, k);
        n += k;
      }
    }
    return n;
  }
};

void connect_srv6(Fabric& f, Endpoint& x, Endpoint& y, uint16_t num_evs) {
  const v::MrcQpAttr ax = srv6_attr({0x1}, {0x3, 0x4}, {0x2, 0x8001}, num_evs);
  const v::MrcQpAttr ay = srv6_attr({0x2}, {0x3, 0x4}, {0x1, 0x8000}, num_evs);
  ASSERT_EQ(v::mrc_modify_qp(x.qp, &ax, kSrv6Mask), 0) << x.qp->mrc_error();
  ASSERT_EQ(v::mrc_modify_qp(y.qp, &ay, kSrv6Mask), 0) << y.qp->mrc_error();
  ConnParams p;
  p.ipv6 = true;
  connect_mrc(x, y, nullptr, 0, p);
  (void)f;
}

// Runs until `n` send completions on x (or `limit` of virtual time).
std::vector<v::Wc> run_sends(Fabric& f, Endpoint& x, size_t n, TimeNs limit) {
  std::vector<v::Wc> got;
  while (got.size() < n && f.sim.now() < limit) {
    f.sim.run_for(TimeNs::from_us(20));
    for (const v::Wc& w : drain(x.scq)) got.push_back(w);
  }
  return got;
}

// 4. Spread over both spines as the EVs name them.
TEST(MrcSrv6, FabricSpreadsOverTheSpinesTheEvsName) {
  Fabric f;
  Endpoint x = make_mrc_endpoint(f.a, 4 << 20);
  Endpoint y = make_mrc_endpoint(f.b, 4 << 20);
  fill_pattern(x.buf, 7);
  connect_srv6(f, x, y, 16);
  for (uint32_t k = 0; k < 4; ++k) {
    ASSERT_EQ(post_write(x, k, k << 20, 1 << 20, y.addr() + (k << 20), y.mr->rkey), 0);
  }
  const auto wcs = run_sends(f, x, 4, TimeNs::from_ms(20));
  ASSERT_EQ(wcs.size(), 4u);
  for (const v::Wc& w : wcs) EXPECT_EQ(w.status, v::WcStatus::kSuccess) << v::to_string(w.status);
  expect_same(x, 0, y, 0, 4 << 20);
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  std::array<uint64_t, 2> by_ev{};
  for (uint16_t i = 0; i < evs.size(); ++i) {
    by_ev[i % 2] += evs.counters(i).sent + evs.counters(i).retransmitted;
  }
  const auto tx = [&](int leaf, int spine) { return f.sim.stats(f.up[leaf][spine], sim::LinkDir::kAtoB).tx_pkts; };
  const mrc::MrcCounters& c = mctr(x);
  std::printf("SRv6 fabric: %lu data packets, %lu retransmitted; leaf0->spine0 %lu, leaf0->spine1 %lu; "
              "EVs naming spine0 %lu, spine1 %lu; probes %lu; %.1f us virtual\n",
              c.tx_data_pkts, c.tx_retransmits, tx(0, 0), tx(0, 1), by_ev[0], by_ev[1], c.tx_probes + c.tx_ev_probes,
              f.sim.now().us());
  EXPECT_EQ(c.tx_data_pkts, 1024u);
  // Every frame A sent through spine s was a data packet of an EV naming s
  // (plus reliability probes, on any EV).
  EXPECT_GE(tx(0, 0), by_ev[0]);
  EXPECT_GE(tx(0, 1), by_ev[1]);
  EXPECT_LE(tx(0, 0) + tx(0, 1), by_ev[0] + by_ev[1] + c.tx_probes + c.tx_ev_probes);
  EXPECT_GT(by_ev[0], 400u);
  EXPECT_GT(by_ev[1], 400u);
  // B's feedback went back over both spines too (the reflected EV's path).
  EXPECT_GT(f.sim.stats(f.up[1][0], sim::LinkDir::kAtoB).tx_pkts, 0u);
  EXPECT_GT(f.sim.stats(f.up[1][1], sim::LinkDir::kAtoB).tx_pkts, 0u);
  EXPECT_EQ(f.noroute_drops(), 0u);
  EXPECT_EQ(f.a.counters(0).dropped() + f.b.counters(0).dropped(), 0u);
}

// 5. Spine 1 fails (silent blackhole) mid-transfer: the EVs naming it are
//    retired, later packets avoid it, the WRITEs complete byte-exact.
TEST(MrcSrv6, FailedSpineRoutedAroundByEvRetirement) {
  Fabric f;
  constexpr uint32_t kBytes = 8u << 20;
  Endpoint x = make_mrc_endpoint(f.a, kBytes);
  Endpoint y = make_mrc_endpoint(f.b, kBytes);
  fill_pattern(x.buf, 8);
  connect_srv6(f, x, y, 16);
  const TimeNs fail_at = TimeNs::from_us(150);
  f.sim.blackhole_node(f.sid[3], fail_at, TimeNs::max());
  for (uint32_t k = 0; k < 8; ++k) {
    ASSERT_EQ(post_write(x, k, k << 20, 1 << 20, y.addr() + (k << 20), y.mr->rkey), 0);
  }
  f.sim.run_until(fail_at + TimeNs::from_us(200));
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  uint64_t spine1_sent_then = 0;
  for (uint16_t i = 1; i < evs.size(); i += 2) spine1_sent_then += evs.counters(i).sent + evs.counters(i).retransmitted;
  auto wcs = drain(x.scq);
  ASSERT_LT(wcs.size(), 8u) << "the failure came after the transfer";
  const auto rest = run_sends(f, x, 8 - wcs.size(), TimeNs::from_ms(50));
  wcs.insert(wcs.end(), rest.begin(), rest.end());
  ASSERT_EQ(wcs.size(), 8u);
  for (const v::Wc& w : wcs) EXPECT_EQ(w.status, v::WcStatus::kSuccess) << v::to_string(w.status);
  expect_same(x, 0, y, 0, kBytes);
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  uint64_t spine1_sent_end = 0;
  int retired_spine1 = 0;
  int retired_spine0 = 0;
  for (uint16_t i = 0; i < evs.size(); ++i) {
    const bool bad = evs.state(i) == mrc::EvState::kAssumedBad;
    if (i % 2 == 1) {
      spine1_sent_end += evs.counters(i).sent + evs.counters(i).retransmitted;
      retired_spine1 += bad;
    } else {
      retired_spine0 += bad;
    }
  }
  const mrc::MrcCounters& c = mctr(x);
  const sim::LinkStats s1 = f.sim.stats(f.up[0][1], sim::LinkDir::kAtoB);
  std::printf("SRv6 failed spine: %lu data packets, %lu retransmitted (sack %lu, nack %lu, timeout %lu); "
              "EVs retired via spine1 %d / 8, via spine0 %d; spine1 blackholed %lu; packets on spine1 EVs "
              "%lu at +200 us, %lu at the end; %.1f us virtual\n",
              c.tx_data_pkts, c.tx_retransmits, c.rtx_sack, c.rtx_nack, c.rtx_timeout, retired_spine1, retired_spine0,
              s1.blackholed_pkts, spine1_sent_then, spine1_sent_end, f.sim.now().us());
  EXPECT_EQ(retired_spine1, 8);
  EXPECT_EQ(retired_spine0, 0);
  EXPECT_EQ(spine1_sent_end, spine1_sent_then);  // nothing more over the dead spine after its EVs retired
  EXPECT_GT(c.tx_retransmits, 0u);
  EXPECT_GT(c.tx_ev_probes, 0u);  // the retired paths are still probed
  EXPECT_EQ(f.noroute_drops(), 0u);
}

// 6. EV_PROBE on a test link: the retired EV's probes are ENDPOINT_REQUEST
//    EV_PROBE frames on its source port, answered by EETHs on the same one.
TEST(MrcEvProbe, RetiredEvReadmittedByEndpointProbes) {
  MrcRig rig;
  Endpoint x = make_mrc_endpoint(rig.a, 1 << 18);
  Endpoint y = make_mrc_endpoint(rig.b, 1 << 18);
  v::MrcQpAttr a;
  a.num_evs = 8;
  a.backup_per_plane = 2;
  a.ev_probe_endpoint = true;
  connect_mrc(x, y, &a, v::kMrcNumEvs | v::kMrcBackupPerPlane | v::kMrcEvProbeEndpoint);
  bool broken = true;
  rig.filter = [&](const LinkPkt& k) {
    const bool on_bad = k.ev == 1 || (k.op == wire::MrcOp::kEndpointRequest && k.ep_ev == 1);
    return broken && k.from == 0 && on_bad ? Fate::kDrop : Fate::kDeliver;
  };
  ASSERT_EQ(post_write(x, 1, 0, 1 << 18, y.addr(), y.mr->rkey), 0);
  ASSERT_EQ(wait_send(rig, x, 1).size(), 1u);
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  ASSERT_EQ(evs.state(1), mrc::EvState::kAssumedBad);
  rig.run_for(TimeNs::from_us(200));
  const uint64_t failed = evs.counters(1).probes;
  EXPECT_GT(failed, 0u);
  EXPECT_EQ(evs.counters(1).probe_ok, 0u);
  broken = false;
  rig.run_for(TimeNs::from_us(400));
  EXPECT_EQ(evs.state(1), mrc::EvState::kGood);
  EXPECT_EQ(evs.counters(1).readmitted, 1u);
  EXPECT_GE(evs.counters(1).probe_ok, 3u);
  EXPECT_GE(mctr(y).rx[static_cast<int>(mrc::MrcRx::kEvProbe)], 3u);
  EXPECT_GE(mctr(y).tx_ev_probe_responses, 3u);
  EXPECT_GE(mctr(x).rx[static_cast<int>(mrc::MrcRx::kEvProbeAnswered)], 3u);
  size_t req = 0, resp = 0;
  for (const LinkPkt& k : rig.log) {
    if (!k.mrc) continue;
    if (k.op == wire::MrcOp::kProbe) {
      EXPECT_NE(k.ev, 1u) << "a reliability probe for the retired EV";
    }
    if (k.op == wire::MrcOp::kEndpointRequest) {
      ++req;
      EXPECT_EQ(k.from, 0);
      EXPECT_EQ(k.ep_ev, 1u);
      EXPECT_EQ(k.udp_sport, 0xC001);
    }
    if (k.op == wire::MrcOp::kEndpointResponse) {
      ++resp;
      EXPECT_EQ(k.from, 1);
      EXPECT_EQ(k.ep_ev, 1u);
      EXPECT_EQ(k.udp_sport, 0xC001);
    }
  }
  EXPECT_GE(req, failed + 3);
  EXPECT_GE(resp, 3u);
  EXPECT_EQ(rig.a.counters(0).dropped() + rig.b.counters(0).dropped(), 0u);
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
}

// 6b. SRv6 fabric, spine 1 dead from 150 to 400 us: its EVs retired, their
//     EV_PROBEs (on spine 1, the EV's path) fail while it is dead and re-admit
//     every one of them once it is back.
TEST(MrcEvProbe, HealedSpineReadmittedByEndpointProbes) {
  Fabric f;
  constexpr uint32_t kBytes = 8u << 20;
  Endpoint x = make_mrc_endpoint(f.a, kBytes);
  Endpoint y = make_mrc_endpoint(f.b, kBytes);
  fill_pattern(x.buf, 9);
  v::MrcQpAttr t;
  t.ev_probe_endpoint = true;
  t.ev_probe_interval_ns = 5000;
  ASSERT_EQ(v::mrc_modify_qp(x.qp, &t, v::kMrcEvProbeEndpoint | v::kMrcEvProbeInterval), 0) << x.qp->mrc_error();
  connect_srv6(f, x, y, 16);
  const TimeNs fail_at = TimeNs::from_us(150);
  const TimeNs heal_at = TimeNs::from_us(400);
  f.sim.blackhole_node(f.sid[3], fail_at, heal_at);
  for (uint32_t k = 0; k < 8; ++k) {
    ASSERT_EQ(post_write(x, k, k << 20, 1 << 20, y.addr() + (k << 20), y.mr->rkey), 0);
  }
  const mrc::EvSet& evs = *x.qp->mrc()->ev_set();
  f.sim.run_until(heal_at);
  uint64_t probes_dead = 0, ok_dead = 0;
  int retired = 0;
  for (uint16_t i = 1; i < evs.size(); i += 2) {
    probes_dead += evs.counters(i).probes;
    ok_dead += evs.counters(i).probe_ok;
    retired += evs.state(i) == mrc::EvState::kAssumedBad;
  }
  EXPECT_EQ(retired, 8);
  EXPECT_GT(probes_dead, 0u);
  EXPECT_EQ(ok_dead, 0u);  // the EV_PROBEs took the dead spine
  const auto wcs = run_sends(f, x, 8, TimeNs::from_ms(50));
  ASSERT_EQ(wcs.size(), 8u);
  for (const v::Wc& w : wcs) EXPECT_EQ(w.status, v::WcStatus::kSuccess) << v::to_string(w.status);
  expect_same(x, 0, y, 0, kBytes);
  f.sim.run_for(TimeNs::from_us(500));
  int readmitted = 0;
  for (uint16_t i = 1; i < evs.size(); i += 2) readmitted += evs.counters(i).readmitted > 0;
  std::printf("EV_PROBE over SRv6: %lu probes on spine-1 EVs while it was dead (0 answered), %d / 8 re-admitted; "
              "%lu EV_PROBEs sent, %lu answered, %lu answers sent by the peer\n",
              probes_dead, readmitted, mctr(x).tx_ev_probes, mctr(x).rx[static_cast<int>(mrc::MrcRx::kEvProbeAnswered)],
              mctr(y).tx_ev_probe_responses);
  EXPECT_EQ(readmitted, 8);
  EXPECT_GE(mctr(x).rx[static_cast<int>(mrc::MrcRx::kEvProbeAnswered)], 24u);
  EXPECT_EQ(x.qp->state(), v::QpState::kRts);
  EXPECT_EQ(f.noroute_drops(), 0u);
}

}  // namespace
}  // namespace sf::nic::test
