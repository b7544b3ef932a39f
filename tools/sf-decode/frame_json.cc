// JSON rendering of sf::wire::FrameInfo.
#include "tools/sf-decode/frame_json.h"

#include <cstdio>
#include <string>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/srv6.h"

namespace sf::tools {

using nlohmann::json;
using namespace sf::wire;

namespace {

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof(b), "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string mac_str(const MacAddr& m) {
  char b[18];
  std::snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", m.bytes[0], m.bytes[1], m.bytes[2], m.bytes[3],
                m.bytes[4], m.bytes[5]);
  return b;
}

std::string ip4_str(const Ipv4Addr& a) {
  return std::to_string(a.bytes[0]) + "." + std::to_string(a.bytes[1]) + "." + std::to_string(a.bytes[2]) + "." +
         std::to_string(a.bytes[3]);
}

// Full (uncompressed) form: 8 groups of 4 hex digits.
std::string ip6_str(const Ipv6Addr& a) {
  std::string s;
  char b[6];
  for (int i = 0; i < 16; i += 2) {
    std::snprintf(b, sizeof(b), "%02x%02x", a.bytes[i], a.bytes[i + 1]);
    if (i) s += ':';
    s += b;
  }
  return s;
}

json ipv6_json(const Ipv6Header& h) {
  return {{"traffic_class", h.traffic_class()},
          {"dscp", h.dscp()},
          {"ecn", to_string(h.ecn())},
          {"flow_label", h.flow_label()},
          {"payload_length", h.payload_length.value()},
          {"next_header", h.next_header},
          {"hop_limit", h.hop_limit},
          {"src", ip6_str(h.src)},
          {"dst", ip6_str(h.dst)}};
}

// The MRC headers (mrc.h); field names as in docs/mrc.md.
void add_mrc(json& j, const FrameInfo& fi) {
  const MrcInfo& m = fi.mrc;
  if (fi.kind == FrameKind::kMrc) j["mrc"] = {{"op", to_string(m.op)}, {"trimmed", m.trimmed}};
  if (m.meth) {
    j["meth"] = {{"rtx", m.meth->rtx()},
                 {"last", m.meth->last()},
                 {"ts_valid", m.meth->ts_valid()},
                 {"rqmsn", m.meth->rqmsn.value()},
                 {"msn", m.meth->msn.value()},
                 {"msg_offset", m.meth->msg_offset.value()},
                 {"ev", hex(m.meth->ev.value())},
                 {"tx_ts", m.meth->tx_ts.value()}};
  }
  if (m.seth) {
    const Seth& s = *m.seth;
    const Psn cack = fi.bth->get_psn();
    j["seth"] = {{"skip", to_string(s.skip())},
                 {"probe_response", s.probe_response()},
                 {"ce", s.ce()},
                 {"cack_psn", cack.value()},
                 {"ack_psn_offset", s.ack_offset()},
                 {"ev", hex(s.ev.value())},
                 {"sack_offset", s.base_offset()},
                 {"sack_base_psn", mrc_sack_base(cack, s.base_offset()).value()},
                 {"mpr", s.mpr.value()},
                 {"bitmap", hex(s.bitmap.value())}};
    if (!s.probe_response()) {
      j["seth"]["ack_psn"] = (cack + static_cast<uint32_t>(static_cast<int32_t>(s.ack_offset()))).value();
    }
  }
  if (m.cc) {
    j["cc_state"] = {{"ts_echo", m.cc->ts_echo.value()},
                     {"rcvd_bytes", m.cc->rcvd_bytes.value()},
                     {"ecn_count", m.cc->ecn_count.value()},
                     {"ooo_count", m.cc->ooo_count.value()},
                     {"rcv_cwnd_pen", m.cc->rcv_cwnd_pen},
                     {"cc_type", m.cc->cc_type},
                     {"service_time", m.cc->service_time.value()}};
  }
  if (m.neth) {
    j["neth"] = {{"reason", m.neth->reason},
                 {"reason_name", to_string(m.neth->get_reason())},
                 {"ce", m.neth->ce()},
                 {"rtx", m.neth->rtx()},
                 {"vendor_code", m.neth->vendor_code},
                 {"ev", hex(m.neth->ev.value())},
                 {"nack_psn", m.neth->nack_psn.value()},
                 {"ts_echo", m.neth->ts_echo.value()}};
  }
  if (m.peth) {
    j["peth"] = {{"probe_id", m.peth->probe_id.value()},
                 {"ev", hex(m.peth->ev.value())},
                 {"tx_ts", m.peth->tx_ts.value()}};
  }
  if (m.erth) {
    j["erth"] = {{"op", m.erth->op},
                 {"op_name", to_string(m.erth->get_op())},
                 {"num_ports", m.erth->num_ports},
                 {"request_id", m.erth->request_id.value()},
                 {"ev", hex(m.erth->ev.value())},
                 {"port_status_mask", hex(m.erth->port_status_mask.value())},
                 {"tx_ts", m.erth->tx_ts.value()}};
  }
  if (m.eeth) {
    j["eeth"] = {{"op", m.eeth->op},
                 {"op_name", to_string(m.eeth->get_op())},
                 {"status", m.eeth->status},
                 {"status_name", to_string(m.eeth->get_status())},
                 {"request_id", m.eeth->request_id.value()},
                 {"ev", hex(m.eeth->ev.value())},
                 {"port_status_mask", hex(m.eeth->port_status_mask.value())},
                 {"ts_echo", m.eeth->ts_echo.value()}};
  }
}

// The opcode's name: MRC's when it is an MRC opcode (also on a rejected frame).
const char* opcode_name(uint8_t opcode, const ParseOptions& opt) {
  if (opt.mrc.enabled) {
    if (const auto op = mrc_op_of(opcode, opt.mrc.opcode_base)) return to_string(*op);
  }
  return to_string(static_cast<Opcode>(opcode));
}

void add_roce(json& j, const FrameInfo& fi, const ParseOptions& opt) {
  const Bth& b = *fi.bth;
  j["bth"] = {{"opcode", b.opcode},
              {"opcode_name", opcode_name(b.opcode, opt)},
              {"se", b.se()},
              {"mig_req", b.mig_req()},
              {"pad_count", b.pad_count()},
              {"tver", b.tver()},
              {"pkey", b.pkey.value()},
              {"fecn", b.fecn()},
              {"becn", b.becn()},
              {"dest_qp", b.dest_qp.value()},
              {"ack_req", b.ack_requested()},
              {"psn", b.psn.value()}};
  if (fi.deth) j["deth"] = {{"qkey", fi.deth->qkey.value()}, {"src_qp", fi.deth->src_qp.value()}};
  if (fi.reth) {
    j["reth"] = {{"va", hex(fi.reth->va.value())},
                 {"rkey", fi.reth->rkey.value()},
                 {"dma_length", fi.reth->dma_length.value()}};
  }
  if (fi.atomic_eth) {
    j["atomic_eth"] = {{"va", hex(fi.atomic_eth->va.value())},
                       {"rkey", fi.atomic_eth->rkey.value()},
                       {"swap_add", hex(fi.atomic_eth->swap_add.value())},
                       {"compare", hex(fi.atomic_eth->compare.value())}};
  }
  if (fi.aeth) {
    j["aeth"] = {{"syndrome", fi.aeth->syndrome},
                 {"type", to_string(fi.aeth->type())},
                 {"value", fi.aeth->syndrome_value()},
                 {"msn", fi.aeth->msn.value()}};
  }
  if (fi.atomic_ack_eth) j["atomic_ack_eth"] = {{"orig", hex(fi.atomic_ack_eth->orig.value())}};
  if (fi.immdt) j["immdt"] = hex(fi.immdt->imm.value());
  if (fi.ieth) j["ieth"] = {{"rkey", fi.ieth->rkey.value()}};
  add_mrc(j, fi);
  if (fi.ok()) {
    j["payload_bytes"] = fi.payload_bytes;
    j["pad_bytes"] = fi.pad_bytes;
  }
}

}  // namespace

json frame_to_json(std::span<const uint8_t> frame, const ParseOptions& opt) {
  const FrameInfo fi = parse_frame(frame, opt);
  json j;
  j["len"] = frame.size();
  j["kind"] = to_string(fi.kind);
  if (fi.eth) {
    j["eth"] = {{"dst", mac_str(fi.eth->dst)}, {"src", mac_str(fi.eth->src)}, {"ether_type", hex(fi.ether_type)}};
  }
  if (fi.vlan) j["vlan"] = {{"pcp", fi.vlan->pcp()}, {"dei", fi.vlan->dei()}, {"vid", fi.vlan->vid()}};
  if (fi.outer_ipv6) {
    j["outer_ipv6"] = ipv6_json(*fi.outer_ipv6);
    j["outer_ipv6"]["active_usid"] = hex(active_usid(fi.outer_ipv6->dst));
  }
  if (fi.ipv4) {
    const Ipv4Header& h = *fi.ipv4;
    j["ipv4"] = {{"ihl_bytes", h.header_bytes()},
                 {"tos", h.tos},
                 {"dscp", h.dscp()},
                 {"ecn", to_string(h.ecn())},
                 {"total_length", h.total_length.value()},
                 {"id", h.id.value()},
                 {"df", (h.flags_frag.value() & Ipv4Header::kFlagDf) != 0},
                 {"ttl", h.ttl},
                 {"protocol", h.protocol},
                 {"checksum", hex(h.checksum.value())},
                 {"src", ip4_str(h.src)},
                 {"dst", ip4_str(h.dst)}};
  }
  if (fi.ipv6) j["ipv6"] = ipv6_json(*fi.ipv6);
  if (fi.udp) {
    j["udp"] = {{"src_port", fi.udp->src_port.value()},
                {"dst_port", fi.udp->dst_port.value()},
                {"length", fi.udp->length.value()},
                {"checksum", hex(fi.udp->checksum.value())}};
  }
  if (fi.bth) add_roce(j, fi, opt);
  if (fi.pause) {
    j["mac_control"] = {{"opcode", "pause"}, {"pause_quanta", fi.pause->pause_quanta.value()},
                        {"dst_ok", fi.mac_control_dst_ok}};
  }
  if (fi.pfc) {
    json times = json::array();
    for (const Be16& t : fi.pfc->time_quanta) times.push_back(t.value());
    j["mac_control"] = {{"opcode", "pfc"},
                        {"enable_vector", fi.pfc->enable_vector.value()},
                        {"pause_quanta", times},
                        {"dst_ok", fi.mac_control_dst_ok}};
  }
  const IcrcStatus st = icrc_verify(frame, fi);
  j["icrc"] = to_string(st);
  if (st != IcrcStatus::kNotRoce) {
    j["icrc_value"] = hex(load_le32(frame.data() + fi.icrc_offset));
    j["icrc_computed"] = hex(icrc_compute(frame, fi));
  }
  if (!fi.ok()) j["error"] = to_string(fi.reason);
  return j;
}

}  // namespace sf::tools
