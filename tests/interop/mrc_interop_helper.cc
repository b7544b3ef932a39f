// Interop helper for tests/interop/mrc_interop.py:
//   mrc-interop-helper gen OUT.pcap   writes MRC frames made by our builders
//                                     (every op; IPv4, IPv6, SRv6, VLAN; a
//                                     PSN-wrapping SACK, a probe response, a
//                                     trimmed data frame, a frame on port 4792
//                                     with opcode base 0xE0) and prints one
//                                     JSON manifest line per frame with every
//                                     value used.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/wire/frame_parser.h"
#include "common/wire/mrc_builder.h"
#include "common/wire/trim.h"
#include "tests/interop/pcap_writer.h"
#include "tests/unit/wire/mrc_test_util.h"

namespace {

using nlohmann::json;
using namespace sf::wire;
using namespace sf::wire::test;

json manifest(const std::string& name, const MrcFrameSpec& s, std::size_t payload_bytes, bool trimmed) {
  const MrcLayout l = mrc_layout(s.op);
  const bool ep = s.op == MrcOp::kEndpointRequest || s.op == MrcOp::kEndpointResponse;
  json j = {{"name", name},
            {"l3", s.l3.index() == 0 ? "ipv4" : s.l3.index() == 1 ? "ipv6" : "srv6"},
            {"vlan", s.l2.vlan.has_value()},
            {"udp_sport", s.udp_src_port},
            {"udp_port", s.wire.udp_port},
            {"opcode_base", s.wire.opcode_base},
            {"op", static_cast<int>(s.op)},
            {"op_name", to_string(s.op)},
            {"opcode", mrc_opcode(s.op, s.wire.opcode_base)},
            {"dest_qp", ep ? kMrcEndpointQpn : s.bth.dest_qp},
            {"psn", ep ? 0u : s.bth.psn.value()},
            {"ack_req", s.bth.ack_req},
            {"trimmed", trimmed},
            {"payload_bytes", trimmed ? 0 : payload_bytes}};
  if (l.meth) {
    j["meth"] = {{"rtx", s.meth.rtx},     {"last", mrc_is_last(s.op)},   {"ts_valid", s.meth.ts_valid},
                 {"rqmsn", s.meth.rqmsn}, {"msn", s.meth.msn},           {"msg_offset", s.meth.msg_offset},
                 {"ev", s.meth.ev},       {"tx_ts", s.meth.tx_ts}};
    j["reth"] = {{"va", s.reth_va}, {"rkey", s.reth_rkey}, {"dma_length", s.reth_dma_length}};
  }
  if (l.immdt) j["immdt"] = s.immdt;
  if (l.aeth) j["aeth"] = {{"syndrome", s.aeth_syndrome}, {"msn", s.aeth_msn}};
  if (l.seth) {
    j["seth"] = {{"skip", static_cast<int>(s.sack.skip)},
                 {"probe_response", s.sack.probe_response},
                 {"ce", s.sack.ce},
                 {"ack_psn_offset", s.sack.ack_psn_offset},
                 {"ev", s.sack.ev},
                 {"sack_offset", s.sack.sack_offset},
                 {"sack_base_psn", mrc_sack_base(s.bth.psn, s.sack.sack_offset).value()},
                 {"mpr", s.sack.mpr},
                 {"bitmap", s.sack.bitmap}};
    j["cc_state"] = {{"ts_echo", s.cc.ts_echo},     {"rcvd_bytes", s.cc.rcvd_bytes},
                     {"ecn_count", s.cc.ecn_count}, {"ooo_count", s.cc.ooo_count},
                     {"rcv_cwnd_pen", s.cc.rcv_cwnd_pen}, {"cc_type", static_cast<int>(s.cc.cc_type)},
                     {"service_time", s.cc.service_time}};
  }
  if (l.neth) {
    j["neth"] = {{"reason", static_cast<int>(s.nack.reason)}, {"ce", s.nack.ce},
                 {"rtx", s.nack.rtx},         {"vendor_code", s.nack.vendor_code},
                 {"ev", s.nack.ev},           {"nack_psn", s.nack.nack_psn.value()},
                 {"ts_echo", s.nack.ts_echo}};
  }
  if (l.peth) j["peth"] = {{"probe_id", s.probe.probe_id}, {"ev", s.probe.ev}, {"tx_ts", s.probe.tx_ts}};
  if (l.erth) {
    const auto& e = s.ep_request;
    j["erth"] = {{"op", static_cast<int>(e.op)}, {"num_ports", e.num_ports}, {"request_id", e.request_id},
                 {"ev", e.ev}, {"port_status_mask", e.port_status_mask}, {"tx_ts", e.tx_ts}};
  }
  if (l.eeth) {
    const auto& e = s.ep_response;
    j["eeth"] = {{"op", static_cast<int>(e.op)}, {"status", static_cast<int>(e.status)}, {"request_id", e.request_id},
                 {"ev", e.ev}, {"port_status_mask", e.port_status_mask}, {"ts_echo", e.ts_echo}};
  }
  return j;
}

int gen(const std::string& path) {
  PcapWriter w(path);
  auto add = [&](const std::string& name, MrcFrameSpec s, std::size_t n, bool trim = false) {
    auto f = build_mrc(s, n);
    if (f.empty()) {
      std::fprintf(stderr, "build %s failed\n", name.c_str());
      std::exit(1);
    }
    if (trim) {
      ParseOptions o;
      o.mrc = s.wire;
      const TrimResult r = trim_frame(f, parse_frame(f, o), 0, 46);
      if (!r.ok()) std::exit(1);
      f.resize(r.frame_bytes);
    }
    w.write(f);
    std::cout << manifest(name, s, mrc_is_data(s.op) ? n : 0, trim).dump() << '\n';
  };
  const L3Spec l3s[] = {sample_v4(), sample_v6(), sample_srv6()};
  const char* l3n[] = {"v4", "v6", "srv6"};
  for (int i = 0; i < 3; ++i) {
    for (MrcOp op : kAllMrcOps) {
      MrcFrameSpec s = sample_mrc(op, l3s[i]);
      add(std::string(l3n[i]) + "_" + to_string(op), s, op == MrcOp::kWriteMiddle ? 1024 : 37);
    }
  }
  MrcFrameSpec v = sample_mrc(MrcOp::kWriteFirst);
  v.l2.vlan = VlanSpec{3, false, 100};
  v.meth.rtx = false;
  v.meth.ts_valid = false;
  add("v4_vlan_write_first", v, 256);
  MrcFrameSpec wrap = sample_mrc(MrcOp::kSack, sample_v6());
  wrap.bth.psn = Psn(0xFFFFF0);
  wrap.sack.skip = MrcSkip::kAlwaysSkip;
  wrap.sack.sack_offset = -8;
  wrap.sack.ack_psn_offset = 17;
  wrap.sack.bitmap = 0xFFFF00000000FFFFull;
  add("v6_sack_psn_wrap", wrap, 0);
  MrcFrameSpec pr = sample_mrc(MrcOp::kSack);
  pr.sack.probe_response = true;
  pr.sack.ack_psn_offset = 0x7777;
  add("v4_probe_response", pr, 0);
  MrcFrameSpec nack = sample_mrc(MrcOp::kNack);
  nack.nack.reason = MrcNackReason::kTrimmed;
  nack.nack.ce = false;
  add("v4_nack_trimmed", nack, 0);
  add("v4_trimmed_write_middle", sample_mrc(MrcOp::kWriteMiddle), 1024, true);
  add("srv6_trimmed_write_last_imm", sample_mrc(MrcOp::kWriteLastImm, sample_srv6()), 512, true);
  MrcFrameSpec alt = sample_mrc(MrcOp::kWriteOnly);
  alt.wire.udp_port = 4792;
  alt.wire.opcode_base = 0xE0;
  add("v4_port4792_base_e0", alt, 64);
  return w.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "gen") return gen(argv[2]);
  std::fprintf(stderr, "usage: mrc-interop-helper gen OUT.pcap\n");
  return 2;
}
