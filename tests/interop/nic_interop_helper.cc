// Interop helper for tests/interop/nic_interop.py (EAL with --no-huge):
//   nic-interop-helper place   a responder NicNode (host 1) with an IPv4 and
//                              an IPv6 RC QP in RTS, receives posted, a
//                              guarded data MR; prints one JSON line with
//                              QPNs, ePSNs, rkey, VA and the receives, reads a
//                              pcap path from stdin (frames built by scapy),
//                              replays the frames one by one and prints one
//                              JSON line: per frame the drop reasons counted,
//                              whether memory changed and the frames sent
//                              back (parsed); the receive completions; the
//                              data MR and receive buffer bytes (hex); whether
//                              the 64 KiB guards are intact.
//   nic-interop-helper gen OUT.pcap
//                              two NicNodes wired back to back; the requester
//                              posts SEND, WRITE, WRITE_WITH_IMM and READ on
//                              an IPv4 and an IPv6 QP pair and a WRITE with a
//                              bad rkey on a third pair; one IPv6 data frame is
//                              CE-marked on the wire (so the responder sends a
//                              CNP). Every frame either node sends goes into
//                              OUT.pcap; prints one JSON line with the pairs
//                              and the posted work requests, then one per
//                              frame with its direction and what our parser
//                              read.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "nic/host/nic_node.h"
#include "nic/verbs/device.h"
#include "tests/interop/pcap_writer.h"
#include "tests/support/mbuf_chain.h"
#include "tests/support/nic_connect.h"
#include "tests/support/nic_hosts.h"
#include "tools/sf-decode/pcap_reader.h"

namespace {

using sf::wire::test::PcapWriter;

using nlohmann::json;
using sf::TimeNs;
using sf::nic::NicNode;
using sf::nic::test::host_mac;
using sf::nic::test::one_host_cfg;
namespace v = sf::nic::verbs;
namespace w = sf::wire;

constexpr int kAllAccess = v::kAccessLocalWrite | v::kAccessRemoteWrite | v::kAccessRemoteRead;
constexpr size_t kGuardBytes = 64 * 1024;
constexpr size_t kDataBytes = 16 * 1024;
constexpr size_t kRecvBytes = 16 * 1024;
constexpr uint8_t kGuardByte = 0xA5;

rte_mempool* g_pool = nullptr;

std::string mac_str(const w::MacAddr& m) {
  char b[18];
  std::snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", m.bytes[0], m.bytes[1], m.bytes[2], m.bytes[3],
                m.bytes[4], m.bytes[5]);
  return b;
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = d[p[i] >> 4];
    s[2 * i + 1] = d[p[i] & 15];
  }
  return s;
}

// One host's verbs objects.
struct Side {
  std::unique_ptr<v::Context> ctx;
  v::Pd* pd = nullptr;
  v::Cq* scq = nullptr;
  v::Cq* rcq = nullptr;
  std::vector<uint8_t> region = std::vector<uint8_t>(kGuardBytes + kDataBytes + kGuardBytes, kGuardByte);
  std::vector<uint8_t> recv = std::vector<uint8_t>(kRecvBytes, 0);
  v::Mr* data = nullptr;
  v::Mr* recv_mr = nullptr;
  uint8_t* data_base() { return region.data() + kGuardBytes; }
  uint64_t data_va() { return reinterpret_cast<uint64_t>(data_base()); }
  uint64_t recv_va() { return reinterpret_cast<uint64_t>(recv.data()); }
  bool guards_ok() const {
    for (size_t i = 0; i < kGuardBytes; ++i) {
      if (region[i] != kGuardByte || region[kGuardBytes + kDataBytes + i] != kGuardByte) return false;
    }
    return true;
  }
};

void setup(NicNode& node, Side& s) {
  s.ctx = v::open_device(node, 0);
  s.pd = v::alloc_pd(s.ctx.get());
  s.scq = v::create_cq(s.ctx.get(), 1024);
  s.rcq = v::create_cq(s.ctx.get(), 1024);
  std::memset(s.data_base(), 0, kDataBytes);
  s.data = v::reg_mr(s.pd, s.data_base(), kDataBytes, kAllAccess);
  s.recv_mr = v::reg_mr(s.pd, s.recv.data(), kRecvBytes, v::kAccessLocalWrite);
  if (s.data == nullptr || s.recv_mr == nullptr || s.rcq == nullptr) {
    std::fprintf(stderr, "verbs setup failed\n");
    std::exit(1);
  }
}

v::Qp* make_qp(Side& s) {
  v::QpInitAttr ia;
  ia.send_cq = s.scq;
  ia.recv_cq = s.rcq;
  ia.cap.max_send_wr = 64;
  ia.cap.max_recv_wr = 64;
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  v::Qp* qp = v::create_qp(s.pd, &ia);
  if (qp == nullptr) {
    std::fprintf(stderr, "create_qp failed\n");
    std::exit(1);
  }
  return qp;
}

void connect(v::Qp* self, const Side& peer_side, const v::Qp* peer, bool ipv6, v::Mtu mtu, uint32_t sq_psn,
             uint32_t rq_psn) {
  sf::nic::test::ConnParams p;
  p.mtu = mtu;
  p.timeout = 14;
  p.sq_psn = sq_psn;
  p.rq_psn = rq_psn;
  p.ipv6 = ipv6;
  p.rd_atomic = 4;
  p.access = kAllAccess;
  if (sf::nic::test::connect_qp(self, *peer_side.ctx, *peer, p) != 0) {
    std::fprintf(stderr, "connect failed\n");
    std::exit(1);
  }
}

std::vector<uint8_t> mbuf_bytes(rte_mbuf* m) {
  std::vector<uint8_t> b(m->pkt_len);
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, b.data());
  if (p != b.data()) std::memcpy(b.data(), p, m->pkt_len);
  return b;
}

// What our parser reads in a frame.
json describe(const std::vector<uint8_t>& f) {
  const w::FrameInfo fi = w::parse_frame(f);
  if (!fi.ok() || fi.bth == nullptr) return {{"error", fi.ok() ? "not RoCE" : w::to_string(fi.reason)}};
  json j = {{"opcode", fi.bth->opcode},
            {"dest_qp", fi.bth->dest_qp.value()},
            {"psn", fi.bth->get_psn().value()},
            {"ack_req", fi.bth->ack_requested()},
            {"payload_bytes", fi.payload_bytes},
            {"frame_bytes", f.size()},
            {"l3", fi.ipv6 != nullptr ? "ipv6" : "ipv4"},
            {"icrc", w::to_string(w::icrc_verify(f, fi))}};
  if (fi.payload_bytes > 0) j["payload"] = hex(f.data() + fi.payload_offset, fi.payload_bytes);
  if (fi.aeth != nullptr) j["aeth"] = {{"syndrome", fi.aeth->syndrome}, {"msn", fi.aeth->msn.value()}};
  if (fi.reth != nullptr) {
    j["reth"] = {{"va", fi.reth->va.value()}, {"rkey", fi.reth->rkey.value()}, {"dma_length", fi.reth->dma_length.value()}};
  }
  return j;
}

std::vector<rte_mbuf*> pull(NicNode& n, TimeNs now) {
  std::vector<rte_mbuf*> v;
  for (;;) {
    rte_mbuf* m = nullptr;
    if (n.transmit(0, {&m, 1}, now) == 0) break;
    v.push_back(m);
  }
  return v;
}

json wcs_json(v::Cq* cq) {
  json out = json::array();
  v::Wc wc[16];
  for (;;) {
    const int n = v::poll_cq(cq, 16, wc);
    if (n <= 0) break;
    for (int i = 0; i < n; ++i) {
      out.push_back({{"wr_id", wc[i].wr_id},
                     {"status", static_cast<int>(wc[i].status)},
                     {"opcode", static_cast<int>(wc[i].opcode)},
                     {"byte_len", wc[i].byte_len},
                     {"imm", wc[i].imm_data},
                     {"with_imm", (wc[i].wc_flags & v::kWcWithImm) != 0},
                     {"qp_num", wc[i].qp_num}});
    }
  }
  return out;
}

int place() {
  NicNode a(one_host_cfg(0), g_pool);
  NicNode b(one_host_cfg(1), g_pool);
  Side sa;
  Side sb;
  setup(a, sa);
  setup(b, sb);
  v::Qp* a4 = make_qp(sa);
  v::Qp* a6 = make_qp(sa);
  v::Qp* b4 = make_qp(sb);
  v::Qp* b6 = make_qp(sb);
  constexpr uint32_t kEpsn4 = 0xFFFFFE;  // the IPv4 responder's PSNs wrap during the test
  constexpr uint32_t kEpsn6 = 0x2000;
  connect(b4, sa, a4, false, v::Mtu::k512, 0x500, kEpsn4);
  connect(b6, sa, a6, true, v::Mtu::k512, 0x600, kEpsn6);
  connect(a4, sb, b4, false, v::Mtu::k512, kEpsn4, 0x500);
  connect(a6, sb, b6, true, v::Mtu::k512, kEpsn6, 0x600);
  json recvs = json::array();
  for (int q = 0; q < 2; ++q) {
    for (uint32_t k = 0; k < 4; ++k) {
      const uint64_t off = q * 8192 + k * 2048;
      v::Sge sge{sb.recv_va() + off, 2048, sb.recv_mr->lkey};
      v::RecvWr wr;
      wr.wr_id = 100 * (q + 1) + k;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      v::RecvWr* bad = nullptr;
      if (v::post_recv(q == 0 ? b4 : b6, &wr, &bad) != 0) return 1;
      recvs.push_back({{"qp", q == 0 ? "v4" : "v6"}, {"wr_id", wr.wr_id}, {"offset", off}, {"length", 2048}});
    }
  }
  const json info = {{"mac_a", mac_str(host_mac(0))},
                     {"mac_b", mac_str(host_mac(1))},
                     {"ip4_a", "10.1.0.1"},
                     {"ip4_b", "10.1.0.2"},
                     {"ip6_a", "fd00::1"},
                     {"ip6_b", "fd00::2"},
                     {"mtu", 512},
                     {"v4", {{"qpn", b4->qp_num()}, {"epsn", kEpsn4}, {"peer_qpn", a4->qp_num()}}},
                     {"v6", {{"qpn", b6->qp_num()}, {"epsn", kEpsn6}, {"peer_qpn", a6->qp_num()}}},
                     {"data", {{"va", sb.data_va()}, {"rkey", sb.data->rkey}, {"length", kDataBytes}}},
                     {"recv_length", kRecvBytes},
                     {"recvs", recvs}};
  std::cout << info.dump() << std::endl;
  std::string path;
  if (!std::getline(std::cin, path)) return 2;
  sf::tools::PcapReader rd;
  if (!rd.open(path)) {
    std::fprintf(stderr, "%s\n", rd.error().c_str());
    return 2;
  }
  json frames = json::array();
  TimeNs now = TimeNs::from_us(1);
  while (auto rec = rd.next()) {
    const std::vector<uint8_t> before_data(sb.region.begin(), sb.region.end());
    const std::vector<uint8_t> before_recv = sb.recv;
    const sf::nic::NicPortCounters c0 = b.counters(0);
    rte_mbuf* m = sf::test::make_mbuf_chain(g_pool, rec->data, 0);
    if (m == nullptr) return 3;
    b.receive(0, {&m, 1}, now);
    json drops = json::object();
    for (int k = 0; k < sf::nic::kNumRxDrops; ++k) {
      const uint64_t d = b.counters(0).drops[k] - c0.drops[k];
      if (d != 0) drops[sf::nic::to_string(static_cast<sf::nic::RxDrop>(k))] = d;
    }
    json sent = json::array();
    for (rte_mbuf* o : pull(b, now)) {
      sent.push_back(describe(mbuf_bytes(o)));
      rte_pktmbuf_free(o);
    }
    frames.push_back({{"drops", drops},
                      {"changed", before_data != sb.region || before_recv != sb.recv},
                      {"sent", sent}});
    now += TimeNs::from_us(1);
  }
  const json out = {{"frames", frames},
                    {"recv_wcs", wcs_json(sb.rcq)},
                    {"data", hex(sb.data_base(), kDataBytes)},
                    {"recv", hex(sb.recv.data(), kRecvBytes)},
                    {"guards_ok", sb.guards_ok()},
                    {"v4_state", static_cast<int>(b4->state())},
                    {"v6_state", static_cast<int>(b6->state())},
                    {"v4_epsn", b4->expected_psn().value()},
                    {"v6_epsn", b6->expected_psn().value()}};
  std::cout << out.dump() << std::endl;
  return 0;
}

int post(v::Qp* qp, Side& self, uint64_t wr_id, v::WrOpcode op, uint64_t local_off, uint32_t len, uint64_t remote_va,
         uint32_t rkey, uint32_t imm, json& wrs, const std::string& pair) {
  v::Sge sge{self.data_va() + local_off, len, self.data->lkey};
  v::SendWr wr;
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = v::kSendSignaled;
  wr.imm_data = imm;
  wr.rdma.remote_addr = remote_va;
  wr.rdma.rkey = rkey;
  v::SendWr* bad = nullptr;
  const char* name = op == v::WrOpcode::kSend              ? "SEND"
                     : op == v::WrOpcode::kRdmaWrite        ? "WRITE"
                     : op == v::WrOpcode::kRdmaWriteWithImm ? "WRITE_WITH_IMM"
                                                            : "READ";
  wrs.push_back({{"pair", pair}, {"wr_id", wr_id}, {"op", name}, {"length", len}, {"remote_va", remote_va},
                 {"rkey", rkey}, {"imm", imm}});
  return v::post_send(qp, &wr, &bad);
}

int gen(const std::string& path) {
  NicNode a(one_host_cfg(0), g_pool);
  NicNode b(one_host_cfg(1), g_pool);
  Side sa;
  Side sb;
  setup(a, sa);
  setup(b, sb);
  for (size_t i = 0; i < kDataBytes; ++i) {
    sa.data_base()[i] = static_cast<uint8_t>(i * 7 + 3);
    sb.data_base()[i] = static_cast<uint8_t>(i * 11 + 5);
  }
  struct Pair {
    const char* name;
    bool ipv6;
    uint32_t a_psn;
    uint32_t b_psn;
    v::Qp* qa;
    v::Qp* qb;
  };
  Pair pairs[] = {{"v4", false, 0xFFFFFD, 0x300, nullptr, nullptr},
                  {"v6", true, 0x1000, 0x400, nullptr, nullptr},
                  {"nak", false, 0x2000, 0x500, nullptr, nullptr}};
  json jp = json::array();
  for (Pair& p : pairs) {
    p.qa = make_qp(sa);
    p.qb = make_qp(sb);
  }
  for (Pair& p : pairs) {
    connect(p.qa, sb, p.qb, p.ipv6, v::Mtu::k1024, p.a_psn, p.b_psn);
    connect(p.qb, sa, p.qa, p.ipv6, v::Mtu::k1024, p.b_psn, p.a_psn);
    jp.push_back({{"name", p.name}, {"l3", p.ipv6 ? "ipv6" : "ipv4"}, {"a_qpn", p.qa->qp_num()},
                  {"b_qpn", p.qb->qp_num()}, {"a_sq_psn", p.a_psn}, {"mtu", 1024}});
    for (uint32_t k = 0; k < 2; ++k) {
      v::Sge sge{sb.recv_va() + k * 4096 + (p.ipv6 ? 8192 : 0), 4096, sb.recv_mr->lkey};
      v::RecvWr wr;
      wr.wr_id = 900 + k;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      v::RecvWr* bad = nullptr;
      if (p.name[0] != 'n' && v::post_recv(p.qb, &wr, &bad) != 0) return 1;
    }
  }
  json wrs = json::array();
  const uint64_t rva = sb.data_va();
  const uint32_t rkey = sb.data->rkey;
  int rc = 0;
  rc |= post(pairs[0].qa, sa, 1, v::WrOpcode::kSend, 0, 1500, 0, 0, 0, wrs, "v4");
  rc |= post(pairs[0].qa, sa, 2, v::WrOpcode::kRdmaWrite, 2000, 3000, rva + 0x100, rkey, 0, wrs, "v4");
  rc |= post(pairs[0].qa, sa, 3, v::WrOpcode::kRdmaWriteWithImm, 100, 100, rva + 0x2000, rkey, 0xC0FFEE01, wrs, "v4");
  rc |= post(pairs[0].qa, sa, 4, v::WrOpcode::kRdmaRead, 8192, 2500, rva + 0x3000, rkey, 0, wrs, "v4");
  rc |= post(pairs[1].qa, sa, 5, v::WrOpcode::kSend, 300, 200, 0, 0, 0, wrs, "v6");
  rc |= post(pairs[1].qa, sa, 6, v::WrOpcode::kRdmaWrite, 0, 1100, rva + 0x800, rkey, 0, wrs, "v6");
  rc |= post(pairs[1].qa, sa, 7, v::WrOpcode::kRdmaRead, 12288, 100, rva + 0x40, rkey, 0, wrs, "v6");
  rc |= post(pairs[2].qa, sa, 8, v::WrOpcode::kRdmaWrite, 0, 64, rva, rkey ^ 0x77, 0, wrs, "nak");
  if (rc != 0) return 1;
  std::cout << json{{"pairs", jp}, {"wrs", wrs}}.dump() << '\n';
  PcapWriter pw(path);
  bool marked = false;
  TimeNs now = TimeNs::from_us(1);
  int idle = 0;
  uint32_t n = 0;
  for (int step = 0; step < 20000 && idle < 50; ++step) {
    a.advance(now);
    b.advance(now);
    bool any = false;
    for (int dir = 0; dir < 2; ++dir) {
      NicNode& from = dir == 0 ? a : b;
      NicNode& to = dir == 0 ? b : a;
      for (rte_mbuf* m : pull(from, now)) {
        any = true;
        const std::vector<uint8_t> bytes = mbuf_bytes(m);
        pw.write(bytes, static_cast<uint32_t>(now.ns() / 1000));
        json j = describe(bytes);
        j["index"] = n++;
        j["dir"] = dir == 0 ? "a2b" : "b2a";
        // Mark the first IPv6 data frame CE on the wire (ECN is outside the
        // ICRC): the responder then owes the sender a CNP.
        if (!marked && dir == 0 && j.value("l3", "") == "ipv6") {
          uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
          p[14 + 1] |= 0x30;
          marked = true;
          j["ce_marked_on_wire"] = true;
        }
        std::cout << j.dump() << '\n';
        to.receive(0, {&m, 1}, now);
      }
    }
    idle = any ? 0 : idle + 1;
    now += TimeNs::from_us(1);
  }
  json done = {{"done", true}, {"a_wcs", wcs_json(sa.scq)}, {"b_wcs", wcs_json(sb.rcq)}};
  std::cout << done.dump() << std::endl;
  return pw.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  if (!((argc == 2 && mode == "place") || (argc == 3 && mode == "gen"))) {
    std::fprintf(stderr, "usage: nic-interop-helper place | gen OUT.pcap\n");
    return 2;
  }
  sf::dpdk::EalOptions opts;
  opts.no_telemetry = true;
  auto eal = sf::dpdk::init_eal({argv[0], "--no-huge", "--no-pci", "--log-level", "*:warning"}, opts);
  if (!eal) {
    std::fprintf(stderr, "%s\n", eal.error().c_str());
    return 1;
  }
  auto mp = sf::dpdk::create_pktmbuf_pool("nic_interop", 8191, 0);
  if (!mp) {
    std::fprintf(stderr, "%s\n", mp.error().c_str());
    return 1;
  }
  g_pool = *mp;
  const int rc = mode == "place" ? place() : gen(argv[2]);
  sf::dpdk::cleanup_eal();
  return rc;
}
