// Interop helper for tests/interop/wire_interop.py:
//   wire-interop-helper gen OUT.pcap   writes frames made by our builders to a
//                                      pcap and prints one JSON manifest line
//                                      per frame with the values used;
//   wire-interop-helper icrc-raw IN.pcap v4|v6
//                                      for each frame assumes Eth(14)/IP/UDP/BTH
//                                      (no parsing) and prints "ok"/"bad" for
//                                      the stored vs our computed ICRC.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/icrc.h"
#include "common/wire/mac_control.h"
#include "common/wire/srv6.h"
#include "tests/unit/wire/wire_test_util.h"
#include "tests/interop/pcap_writer.h"
#include "tools/sf-decode/pcap_reader.h"

namespace {

using nlohmann::json;
using namespace sf::wire;
using sf::wire::test::ip6;
using sf::wire::test::mac;
using sf::wire::test::PcapWriter;

RoceFrameSpec base(Opcode op, L3Spec l3) {
  RoceFrameSpec s;
  s.l2.dst = mac(2);
  s.l2.src = mac(1);
  s.l3 = l3;
  s.udp_src_port = 0xC0DE;
  s.bth.opcode = op;
  s.bth.dest_qp = 0x12345;
  s.bth.psn = Psn(0xABCDE);
  s.bth.ack_req = true;
  s.ext.reth_va = 0x00007F0012345678ull;
  s.ext.reth_rkey = 0xCAFE01;
  s.ext.reth_dma_length = 8192;
  s.ext.aeth_syndrome = 0x1F;
  s.ext.aeth_msn = 77;
  s.ext.immdt = 0x11223344;
  return s;
}

Ipv4Spec v4(uint8_t dscp, Ecn ecn) {
  Ipv4Spec s;
  s.src = Ipv4Addr{{192, 168, 1, 1}};
  s.dst = Ipv4Addr{{192, 168, 1, 2}};
  s.dscp = dscp;
  s.ecn = ecn;
  return s;
}

Ipv6Spec v6(uint8_t dscp, Ecn ecn, uint32_t flow) {
  Ipv6Spec s;
  s.src = ip6(1);
  s.dst = ip6(2);
  s.dscp = dscp;
  s.ecn = ecn;
  s.flow_label = flow;
  return s;
}

json manifest(const std::string& name, const RoceFrameSpec& s, std::size_t payload_bytes) {
  json j = {{"name", name},
            {"kind", "roce"},
            {"l3", s.l3.index() == 0 ? "ipv4" : s.l3.index() == 1 ? "ipv6" : "srv6"},
            {"udp_sport", s.udp_src_port},
            {"opcode", static_cast<int>(s.bth.opcode)},
            {"dest_qp", s.bth.dest_qp},
            {"psn", s.bth.psn.value()},
            {"ack_req", s.bth.ack_req},
            {"becn", s.bth.becn},
            {"payload_bytes", payload_bytes}};
  const auto layout = *opcode_layout(static_cast<uint8_t>(s.bth.opcode));
  if (layout.reth) j["reth"] = {{"va", s.ext.reth_va}, {"rkey", s.ext.reth_rkey}, {"dma_length", s.ext.reth_dma_length}};
  if (layout.aeth) j["aeth"] = {{"syndrome", s.ext.aeth_syndrome}, {"msn", s.ext.aeth_msn}};
  if (layout.immdt) j["immdt"] = s.ext.immdt;
  if (const auto* a = std::get_if<Ipv4Spec>(&s.l3)) {
    j["dscp"] = a->dscp;
    j["ecn"] = static_cast<int>(a->ecn);
  } else {
    const Ipv6Spec& b = s.l3.index() == 1 ? std::get<Ipv6Spec>(s.l3) : std::get<Srv6Spec>(s.l3).inner;
    j["dscp"] = b.dscp;
    j["ecn"] = static_cast<int>(b.ecn);
    j["flow_label"] = b.flow_label;
  }
  if (s.l2.vlan) j["vlan"] = {{"pcp", s.l2.vlan->pcp}, {"dei", s.l2.vlan->dei}, {"vid", s.l2.vlan->vid}};
  return j;
}

int gen(const std::string& path) {
  PcapWriter w(path);
  auto add = [&](const std::string& name, const RoceFrameSpec& s, std::size_t n) {
    std::vector<uint8_t> pl(n);
    for (std::size_t i = 0; i < n; ++i) pl[i] = static_cast<uint8_t>(i * 13 + 1);
    std::vector<uint8_t> f(roce_frame_bytes(s, n));
    const auto r = build_roce_frame(f, s, pl);
    if (!r.ok()) {
      std::fprintf(stderr, "build %s: %s\n", name.c_str(), to_string(r.error));
      std::exit(1);
    }
    w.write(f);
    std::cout << manifest(name, s, n).dump() << '\n';
  };
  const L3Spec v4s = v4(26, Ecn::kEct0);
  const L3Spec v6s = v6(46, Ecn::kEct1, 0x5A5A5);
  auto send = base(Opcode::kRcSendOnly, v4s);
  send.l2.vlan = VlanSpec{3, false, 100};
  add("v4_send_only_vlan", send, 13);
  add("v4_write_only", base(Opcode::kRcWriteOnly, v4(10, Ecn::kNotEct)), 64);
  add("v4_write_only_imm", base(Opcode::kRcWriteOnlyImm, v4s), 32);
  add("v4_read_request", base(Opcode::kRcReadRequest, v4s), 0);
  add("v4_read_response_only", base(Opcode::kRcReadResponseOnly, v4s), 100);
  auto nak = base(Opcode::kRcAck, v4(0, Ecn::kCe));
  nak.ext.aeth_syndrome = Aeth::make_syndrome(AethType::kNak, static_cast<uint8_t>(NakCode::kPsnSequenceError));
  add("v4_nak", nak, 0);
  auto wrap = base(Opcode::kRcSendLast, v4s);
  wrap.bth.psn = Psn(0xFFFFFF);
  wrap.bth.dest_qp = 0xFFFFFF;
  add("v4_send_last_psn_max", wrap, 1024);
  RoceFrameSpec cnp = base(Opcode::kCnp, v4(48, Ecn::kEct0));
  cnp.bth = BthSpec{Opcode::kCnp, false, false, 0xFFFF, false, true, 0xD2, false, Psn(0)};
  add("v4_cnp", cnp, 0);
  add("v6_send_only", base(Opcode::kRcSendOnly, v6s), 21);
  add("v6_write_first", base(Opcode::kRcWriteFirst, v6s), 256);
  add("v6_ack", base(Opcode::kRcAck, v6s), 0);
  add("v6_read_response_first", base(Opcode::kRcReadResponseFirst, v6s), 40);
  RoceFrameSpec cnp6 = cnp;
  cnp6.l3 = v6s;
  add("v6_cnp", cnp6, 0);
  Srv6Spec sr;
  sr.outer = v6(0, Ecn::kEct0, 0x12345);
  const uint8_t block[4] = {0xFC, 0xBB, 0, 0};
  const uint16_t usids[3] = {0x0020, 0x0010, 0x0022};
  make_usid_address(sr.outer.dst, block, usids);
  sr.inner = v6(26, Ecn::kEct0, 0x777);
  add("srv6_send_only", base(Opcode::kRcSendOnly, sr), 16);

  std::vector<uint8_t> f(kMacControlFrameBytes);
  const std::array<uint16_t, 8> q = {0, 0, 0, 0xFFFF, 0x0100, 0, 0, 0x0007};
  build_pfc_frame(f, mac(9), 0x98, q);
  w.write(f);
  std::cout << json{{"name", "pfc"}, {"kind", "pfc"}, {"enable_vector", 0x98}, {"pause_quanta", q}}.dump() << '\n';
  build_pause_frame(f, mac(9), 0x1234);
  w.write(f);
  std::cout << json{{"name", "pause"}, {"kind", "pause"}, {"pause_quanta", 0x1234}}.dump() << '\n';
  return w.ok() ? 0 : 1;
}

int icrc_raw(const std::string& path, const std::string& ver) {
  sf::tools::PcapReader r;
  if (!r.open(path)) {
    std::fprintf(stderr, "%s\n", r.error().c_str());
    return 2;
  }
  const IcrcLayout layout = ver == "v6" ? IcrcLayout{IpVersion::kV6, 40} : IcrcLayout{IpVersion::kV4, 20};
  while (auto rec = r.next()) {
    const auto f = rec->data;
    if (f.size() < EthHeader::kSize + layout.masked_bytes() + kIcrcBytes) {
      std::cout << "short\n";
      continue;
    }
    const std::size_t icrc_off = f.size() - kIcrcBytes;
    const uint32_t got = icrc_compute(f.subspan(EthHeader::kSize, icrc_off - EthHeader::kSize), layout);
    std::cout << (got == load_le32(f.data() + icrc_off) ? "ok" : "bad") << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "gen") return gen(argv[2]);
  if (argc == 4 && std::string(argv[1]) == "icrc-raw") return icrc_raw(argv[2], argv[3]);
  std::fprintf(stderr, "usage: wire-interop-helper gen OUT.pcap | icrc-raw IN.pcap v4|v6\n");
  return 2;
}
