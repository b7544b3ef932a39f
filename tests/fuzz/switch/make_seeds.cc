// Writes the seed corpus of fuzz_switch (tests/fuzz/switch/corpus/): a few
// small inputs in the encoding of switch_fuzz_input.h built from valid RoCEv2
// frames (common/wire builders) that reach each forwarding path of the fuzz
// config. Run by hand after changing the encoding or the config:
//   ninja -C build-asan tests/fuzz/switch/fuzz_switch_make_seeds && build-asan/tests/fuzz/switch/fuzz_switch_make_seeds tests/fuzz/switch/corpus
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/wire/arp_nd.h"
#include "common/wire/frame_builder.h"
#include "common/wire/mac_control.h"
#include "common/wire/srv6.h"
#include "tests/fuzz/switch/switch_fuzz_input.h"

namespace {

using namespace sf::wire;
using sf::fuzz::ctrl_op;
using sf::fuzz::rx_op;
using sf::fuzz::tx_op;

const MacAddr kRouter{{0x02, 0x53, 0x46, 0x00, 0x00, 0x01}};
const MacAddr kHostA{{0x02, 0, 0, 0, 0, 0x0A}};
const MacAddr kHostB{{0x02, 0, 0, 0, 0, 0x0B}};  // static FDB: Ethernet4 (port 1)
const MacAddr kHostX{{0x02, 0, 0, 0, 0, 0x7F}};  // unknown: flooded

RoceFrameSpec v4(MacAddr dst, MacAddr src, std::array<uint8_t, 4> ip_dst, uint8_t dscp = 26) {
  RoceFrameSpec s;
  s.l2 = {dst, src, std::nullopt};
  Ipv4Spec ip;
  ip.src.bytes = {10, 0, 0, 1};
  ip.dst.bytes = ip_dst;
  ip.dscp = dscp;
  ip.ecn = Ecn::kEct0;
  s.l3 = ip;
  s.bth.opcode = Opcode::kRcWriteOnly;
  s.bth.dest_qp = 0x11;
  s.ext.reth_dma_length = 32;
  return s;
}

std::vector<uint8_t> frame(const RoceFrameSpec& s, size_t payload = 32) {
  std::vector<uint8_t> buf(512);
  const std::vector<uint8_t> data(payload, 0x5A);
  const BuildResult r = build_roce_frame(buf, s, data);
  if (!r.ok()) {
    std::fprintf(stderr, "build failed: %s\n", to_string(r.error));
    std::exit(1);
  }
  buf.resize(r.frame_bytes);
  return buf;
}

struct Input {
  std::vector<uint8_t> bytes;
  Input& rx(uint8_t port, const std::vector<uint8_t>& f, uint8_t seg64 = 0) {
    bytes.push_back(rx_op(port, seg64));
    bytes.push_back(static_cast<uint8_t>(f.size() >> 8));
    bytes.push_back(static_cast<uint8_t>(f.size()));
    bytes.insert(bytes.end(), f.begin(), f.end());
    return *this;
  }
  Input& tx(uint8_t port, uint8_t count) {
    bytes.push_back(tx_op(port, count));
    return *this;
  }
  Input& ctrl(uint8_t kind, uint8_t port, int arg = -1) {
    bytes.push_back(ctrl_op(kind, port));
    if (arg >= 0) bytes.push_back(static_cast<uint8_t>(arg));
    return *this;
  }
};

void write(const std::string& dir, const char* name, const Input& in) {
  if (in.bytes.size() >= 1024) {
    std::fprintf(stderr, "%s: %zu bytes, seeds must stay under 1 KiB\n", name, in.bytes.size());
    std::exit(1);
  }
  const std::string path = dir + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(in.bytes.data(), 1, in.bytes.size(), f) != in.bytes.size()) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fclose(f);
  std::printf("%s (%zu bytes)\n", path.c_str(), in.bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];

  // Known unicast at L2 (static FDB), lossless TC 3, ECT(0); partial transmits.
  write(dir, "l2_lossless", Input{}
      .rx(0, frame(v4(kHostB, kHostA, {10, 1, 0, 2})))
      .rx(0, frame(v4(kHostB, kHostA, {10, 1, 0, 2}), 96))
      .tx(1, 1)
      .rx(2, frame(v4(kHostB, kHostA, {10, 1, 0, 2}, 10)), 1)
      .tx(1, 4));

  // Unknown unicast floods, the reply is learned; then time passes the FDB ageing.
  write(dir, "l2_flood_learn", Input{}
      .rx(0, frame(v4(kHostX, kHostA, {10, 1, 0, 3}, 0)))
      .rx(1, frame(v4(kHostA, kHostX, {10, 1, 0, 4}, 0)))
      .ctrl(sf::fuzz::kCtrlTime, 0, 0xFF)
      .rx(1, frame(v4(kHostA, kHostX, {10, 1, 0, 4}, 0))));

  // A flooded frame in 64-byte segments: every segment needs one reference
  // per copy (regression: only the first segment had them).
  write(dir, "flood_multiseg", Input{}.rx(2, frame(v4(kHostX, kHostA, {10, 1, 0, 3}, 0), 160), 1));

  // Routed IPv4 over the ECMP group (two entropy values) and a /24 route.
  RoceFrameSpec r1 = v4(kRouter, kHostA, {10, 1, 7, 7});
  RoceFrameSpec r2 = r1;
  r2.udp_src_port = 0xC123;
  write(dir, "routed_v4", Input{}
      .rx(0, frame(r1))
      .rx(0, frame(r2))
      .rx(1, frame(v4(kRouter, kHostB, {10, 9, 0, 1}, 46)))
      .ctrl(sf::fuzz::kCtrlFlush, 0)
      .tx(1, 2));

  // Routed IPv6.
  RoceFrameSpec r6 = v4(kRouter, kHostA, {0, 0, 0, 0});
  Ipv6Spec ip6;
  ip6.src.bytes = {0xfd, 0x00, 0, 1};
  ip6.dst.bytes = {0xfd, 0x00, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  ip6.dscp = 26;
  ip6.ecn = Ecn::kEct0;
  ip6.flow_label = 0x12345;
  r6.l3 = ip6;
  write(dir, "routed_v6", Input{}.rx(2, frame(r6)).tx(1, 1));

  // SRv6 uN: our uSID 0x100 is consumed, 0x200 picks Ethernet4; then End (no args).
  RoceFrameSpec rs = v4(kRouter, kHostA, {0, 0, 0, 0});
  Srv6Spec sr;
  const uint8_t block[4] = {0xfc, 0xbb, 0xbb, 0xbb};
  const uint16_t usids[3] = {0x100, 0x200, 0x300};
  make_usid_address(sr.outer.dst, block, usids);
  sr.outer.dscp = 26;
  sr.outer.ecn = Ecn::kEct0;
  sr.inner.dst.bytes[15] = 9;
  rs.l3 = sr;
  RoceFrameSpec rend = rs;
  Srv6Spec sr_end = sr;
  const uint16_t last[1] = {0x100};
  make_usid_address(sr_end.outer.dst, block, last);
  rend.l3 = sr_end;
  write(dir, "srv6_usid", Input{}.rx(0, frame(rs)).rx(0, frame(rend)).tx(1, 1));

  // Incast on the lossless queue of port 1 with the queue paused: the egress
  // limit is reached and later frames wait at ingress, then drain on unpause.
  Input incast;
  incast.ctrl(sf::fuzz::kCtrlPause, 1, 1 << 3);
  for (int i = 0; i < 3; ++i) {
    incast.rx(0, frame(v4(kHostB, kHostA, {10, 1, 0, 2}), 64)).rx(2, frame(v4(kHostB, kHostA, {10, 1, 0, 2}), 64));
  }
  incast.ctrl(sf::fuzz::kCtrlClear, 0).ctrl(sf::fuzz::kCtrlPause, 1, 0).tx(1, 3).ctrl(sf::fuzz::kCtrlTime, 1, 3).tx(1, 16);
  write(dir, "incast_hold", incast);

  // Buffer limits from repeated frames: lossless from two ports into one
  // (held, then headroom overflow), lossy into one queue (egress limit,
  // buffer full), non-ECT DSCP 10 (WRED drop), DSCP 32 (trimming PG: ingress
  // limit), ECT on the lossless queue (ECN marks).
  RoceFrameSpec plain = v4(kHostB, kHostA, {10, 1, 0, 2}, 0);
  std::get<Ipv4Spec>(plain.l3).ecn = Ecn::kNotEct;
  RoceFrameSpec nonect = v4(kHostB, kHostA, {10, 1, 0, 2}, 10);
  std::get<Ipv4Spec>(nonect.l3).ecn = Ecn::kNotEct;
  write(dir, "repeat_limits", Input{}
      .rx(0, frame(v4(kHostB, kHostA, {10, 1, 0, 2}), 128)).ctrl(sf::fuzz::kCtrlRepeat, 0, 100)
      .rx(2, frame(v4(kHostB, kHostA, {10, 1, 0, 2}), 128)).ctrl(sf::fuzz::kCtrlRepeat, 2, 100)
      .tx(1, 16)
      .rx(0, frame(plain, 64)).ctrl(sf::fuzz::kCtrlRepeat, 0, 250)
      .rx(2, frame(nonect, 32)).ctrl(sf::fuzz::kCtrlRepeat, 2, 30)
      .rx(0, frame(v4(kHostB, kHostA, {10, 1, 0, 2}, 32), 32)).ctrl(sf::fuzz::kCtrlRepeat, 0, 120));

  // PFC and PAUSE frames are consumed; a tagged frame on the PCP-trusting port.
  std::vector<uint8_t> pfc(64);
  pfc.resize(build_pfc_frame(pfc, kHostA, 1 << 3, {0, 0, 0, 0xFFFF, 0, 0, 0, 0}));
  std::vector<uint8_t> pause(64);
  pause.resize(build_pause_frame(pause, kHostA, 100));
  RoceFrameSpec tagged = v4(kHostB, kHostA, {10, 1, 0, 2}, 0);
  tagged.l2.vlan = VlanSpec{3, false, 10};
  write(dir, "mac_control_vlan", Input{}.rx(0, pfc).rx(1, pause).rx(2, frame(tagged)).tx(1, 2));

  // Router interfaces: an ARP request and an NS for port 0's addresses
  // (answered), a packet routed to the unresolved next hop 10.0.3.2 (it
  // becomes the ARP request on port 2), the next hop's reply, the packet again.
  auto nd_frame = [](bool arp, const MacAddr& src, std::array<uint8_t, 16> sip, std::array<uint8_t, 16> tip,
                     const MacAddr& dst, bool reply) {
    std::vector<uint8_t> f(kNeighborFrameMax);
    if (arp) {
      f.resize(write_arp(f.data(), {dst, src, std::nullopt}, reply ? kArpOpReply : kArpOpRequest, src,
                         Ipv4Addr{{sip[0], sip[1], sip[2], sip[3]}}, {}, Ipv4Addr{{tip[0], tip[1], tip[2], tip[3]}}));
    } else {
      const Ipv6Addr g = solicited_node(Ipv6Addr{tip});
      f.resize(write_nd(f.data(), {ipv6_multicast_mac(g), src, std::nullopt}, false, Ipv6Addr{sip}, g, Ipv6Addr{tip},
                        src, false));
    }
    return f;
  };
  const std::array<uint8_t, 16> a4{10, 0, 0, 1}, if4{10, 0, 0, 254}, nh4{10, 0, 3, 2}, if8{10, 0, 3, 1};
  const std::array<uint8_t, 16> a6{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const std::array<uint8_t, 16> if6{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xfe};
  write(dir, "router_if", Input{}
      .rx(0, nd_frame(true, kHostA, a4, if4, MacAddr{{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}, false))
      .rx(0, nd_frame(false, kHostA, a6, if6, {}, false))
      .rx(0, frame(v4(kRouter, kHostA, {10, 8, 1, 1})))
      .tx(2, 2)
      .rx(2, nd_frame(true, kHostX, nh4, if8, kRouter, true))
      .ctrl(sf::fuzz::kCtrlTime, 2, 10)
      .rx(0, frame(v4(kRouter, kHostA, {10, 8, 1, 1})))
      .tx(0, 4)
      .tx(2, 4));
  return 0;
}
