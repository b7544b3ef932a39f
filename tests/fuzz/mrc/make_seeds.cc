// Writes the seed corpus of fuzz_mrc (tests/fuzz/mrc/corpus) in the encoding
// of mrc_fuzz_input.h: WRITEs and WRITE_WITH_IMMs wired between the two
// hosts over both planes (clean, lossy, trimmed, duplicated, reordered, with
// a SACK held and delivered late, a plane going down and up, the responder's
// MR deregistered mid-message, a bit flipped), crafted MRC frames of every
// kind (data in and out of window, past the MR, bad R_Key, trimmed, last-hop
// trimmed, multi-packet out of order; SACKs valid and invalid; NACKs of every
// reason; ACK; probes; endpoint port-status requests and responses), and
// raw frames from the MRC builder (whole, truncated, chained).
// usage: fuzz_mrc_make_seeds OUT_DIR
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/wire/mrc_builder.h"
#include "tests/fuzz/mrc/mrc_fuzz_input.h"

namespace {

using namespace sf::fuzz;
namespace w = sf::wire;

using Bytes = std::vector<uint8_t>;

// kAllMrcOps indexes.
constexpr uint8_t kFirst = 0, kMiddle = 1, kLast = 2, kOnly = 4, kOnlyImm = 5, kAckOp = 6, kEpReq = 7, kEpResp = 8,
                  kSackOp = 9, kNackOp = 10, kProbeOp = 11;

void u16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
void post(Bytes& b, uint8_t host, uint8_t kind, uint16_t len, uint16_t off) {
  b.push_back(mrc_post_op(host, kind));
  u16(b, len);
  u16(b, off);
}
void ctrl(Bytes& b, uint8_t kind, uint8_t port, int arg = -1) {
  b.push_back(mrc_ctrl_op(kind, port));
  if (arg >= 0) b.push_back(static_cast<uint8_t>(arg));
}
void wire(Bytes& b, uint8_t port, uint8_t n = 31) { ctrl(b, kMrcCtrlWire, port, n); }
void time_us(Bytes& b, uint8_t us) { ctrl(b, kMrcCtrlTime, 0, us); }
// Every port wired, with time for pacing and SACK coalescing between.
void pingpong(Bytes& b, int rounds, uint8_t us = 2) {
  for (int i = 0; i < rounds; ++i) {
    for (uint8_t p = 0; p < 4; ++p) wire(b, p);
    time_us(b, us);
  }
}
void poll(Bytes& b) { b.push_back(mrc_ctrl_op(kMrcCtrlPoll, 0)); }

struct Crafted {
  uint8_t qp = 0;
  uint8_t f1 = 0;
  uint8_t f2 = 0;
  int16_t psn = 0;
  int16_t va = 0;
  uint16_t dma = 0;
  uint16_t payload = 0;
  uint16_t msg_offset = 0;
  int8_t msn = 0;
  uint8_t ev = 3;
  uint8_t id = 0;
  uint64_t word = 0;  // SACK bitmap / NACK reason.. / endpoint op..
  int8_t sack_offset = 1;
  uint8_t mpr = 64;
  uint8_t bits = 0;
  uint8_t seed = 9;
};
void crafted(Bytes& b, uint8_t port, uint8_t kind, const Crafted& c) {
  b.push_back(mrc_crafted_op(port, kind));
  b.push_back(c.qp);
  b.push_back(c.f1);
  b.push_back(c.f2);
  u16(b, static_cast<uint16_t>(c.psn));
  u16(b, static_cast<uint16_t>(c.va));
  u16(b, c.dma);
  u16(b, c.payload);
  u16(b, c.msg_offset);
  b.push_back(static_cast<uint8_t>(c.msn));
  b.push_back(c.ev);
  b.push_back(c.id);
  for (int i = 7; i >= 0; --i) b.push_back(static_cast<uint8_t>(c.word >> (8 * i)));
  b.push_back(static_cast<uint8_t>(c.sack_offset));
  b.push_back(c.mpr);
  b.push_back(c.bits);
  b.push_back(c.seed);
}
// An endpoint / NACK word: bytes [16..19] of the record.
uint64_t word4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return uint64_t{a} << 56 | uint64_t{b} << 48 | uint64_t{c} << 40 | uint64_t{d} << 32;
}
void raw(Bytes& b, uint8_t port, const Bytes& frame, uint8_t seg64 = 0) {
  b.push_back(mrc_raw_op(port, seg64));
  u16(b, static_cast<uint16_t>(frame.size()));
  b.insert(b.end(), frame.begin(), frame.end());
}

// An MRC frame of `op` from host 0's plane-0 port to host 1's (the node's
// addressing, fuzz_mrc.cc port_addr), to QPN `qpn`.
Bytes mrc_frame(w::MrcOp op, uint32_t qpn, uint32_t psn, size_t payload) {
  w::MrcFrameSpec s;
  s.l2.dst = {{0x02, 0x4E, 0x49, 0x43, 0x00, 16}};
  s.l2.src = {{0x02, 0x4E, 0x49, 0x43, 0x00, 0}};
  w::Ipv4Spec ip;
  ip.src = {{10, 1, 0, 1}};
  ip.dst = {{10, 1, 0, 2}};
  s.l3 = ip;
  s.op = op;
  s.bth.dest_qp = qpn;
  s.bth.psn = w::Psn(psn);
  s.meth.ev = 5;
  s.reth_va = 0x1000;
  s.reth_rkey = 0x1234;
  s.reth_dma_length = static_cast<uint32_t>(payload);
  s.sack.bitmap = 0xF0;
  s.nack.reason = w::MrcNackReason::kTrimmed;
  s.ep_request.op = w::MrcEndpointOp::kPortStatus;
  s.ep_request.num_ports = 2;
  s.ep_request.port_status_mask = 1;
  if (!w::mrc_is_data(op)) payload = 0;
  Bytes pl(payload, 0x42);
  Bytes f(w::mrc_frame_bytes(s, payload));
  if (!w::build_mrc_frame(f, s, pl).ok()) std::abort();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_mrc_make_seeds OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::vector<std::pair<std::string, Bytes>> seeds;
  {
    Bytes b;  // WRITE 600 B (3 packets at MTU 256) sprayed over both planes, and the SACKs
    post(b, 0, kMrcPostWrite, 600, 0);
    pingpong(b, 4);
    poll(b);
    seeds.push_back({"write_3pkt", b});
  }
  {
    Bytes b;  // WRITE_WITH_IMMs both ways into posted receives, a WRITE between
    post(b, 1, kMrcPostRecv, 0, 0);
    post(b, 0, kMrcPostRecv, 0, 0);
    post(b, 0, kMrcPostWriteImm, 700, 100);
    post(b, 0, kMrcPostWrite, 300, 2048);
    post(b, 1, kMrcPostWriteImm, 1100, 4000);
    pingpong(b, 6);
    poll(b);
    seeds.push_back({"write_imm_both_ways", b});
  }
  {
    Bytes b;  // the first data packet lost: SACK hole, retransmission on another EV
    post(b, 0, kMrcPostWrite, 1500, 0);
    ctrl(b, kMrcCtrlDrop, 0, 0);
    pingpong(b, 3);
    time_us(b, 8);
    pingpong(b, 4, 6);
    poll(b);
    seeds.push_back({"loss_sack_rtx", b});
  }
  {
    Bytes b;  // tail loss: the probe / RTO path, then exhaustion
    post(b, 1, kMrcPostWrite, 512, 0);
    ctrl(b, kMrcCtrlDrop, 2, 3);
    ctrl(b, kMrcCtrlDrop, 3, 3);
    time_us(b, 30);
    pingpong(b, 3, 10);
    time_us(b, 0xFF);
    pingpong(b, 2);
    poll(b);
    seeds.push_back({"tail_loss_probe_rto", b});
  }
  {
    Bytes b;  // trimmed packets (46: TRIMMED, 47: TRIMMED_LASTHOP) -> NACK -> retransmit
    post(b, 0, kMrcPostWrite, 1024, 512);
    ctrl(b, kMrcCtrlTrim, 0, 0);
    ctrl(b, kMrcCtrlTrim, 1, 1);
    pingpong(b, 4);
    poll(b);
    seeds.push_back({"trim_nack", b});
  }
  {
    Bytes b;  // duplicated and reordered data and SACKs
    post(b, 0, kMrcPostWrite, 2000, 0);
    post(b, 1, kMrcPostWrite, 2000, 6000);
    ctrl(b, kMrcCtrlDup, 0);
    ctrl(b, kMrcCtrlReorder, 1, 5);
    ctrl(b, kMrcCtrlReorder, 2, 7);
    ctrl(b, kMrcCtrlDup, 3);
    pingpong(b, 5);
    poll(b);
    seeds.push_back({"dup_reorder", b});
  }
  {
    Bytes b;  // a SACK held and delivered after newer ones (stale)
    post(b, 0, kMrcPostWrite, 1200, 0);
    wire(b, 0);
    wire(b, 1);
    time_us(b, 3);
    ctrl(b, kMrcCtrlHold, 2);
    ctrl(b, kMrcCtrlHold, 3);
    pingpong(b, 3);
    ctrl(b, kMrcCtrlRelease, 0, 1);
    pingpong(b, 2);
    poll(b);
    seeds.push_back({"stale_sack", b});
  }
  {
    Bytes b;  // plane 1 down mid-transfer on both hosts, then up again
    post(b, 0, kMrcPostWrite, 2048, 0);
    wire(b, 0, 2);
    wire(b, 1, 2);
    ctrl(b, kMrcCtrlLink, 1, 0);
    ctrl(b, kMrcCtrlLink, 3, 0);
    pingpong(b, 4, 5);
    ctrl(b, kMrcCtrlLink, 1, 1);
    ctrl(b, kMrcCtrlLink, 3, 1);
    post(b, 0, kMrcPostWrite, 1024, 4096);
    pingpong(b, 4, 5);
    poll(b);
    seeds.push_back({"plane_down_up", b});
  }
  {
    Bytes b;  // the responder's MR deregistered under a 6-packet WRITE, then registered again
    post(b, 0, kMrcPostWrite, 1500, 0);
    wire(b, 0, 1);
    ctrl(b, kMrcCtrlRemr, 1, 0);
    pingpong(b, 3);
    ctrl(b, kMrcCtrlRemr, 1, 1);
    post(b, 0, kMrcPostWrite, 100, 0);
    pingpong(b, 3);
    poll(b);
    seeds.push_back({"dereg_mid_write", b});
  }
  {
    Bytes b;  // a bit flipped on the wire (ICRC drop), recovery; refused SEND / READ
    post(b, 1, kMrcPostWrite, 256, 0);
    ctrl(b, kMrcCtrlCorrupt, 2);
    u16(b, 8 * 90);
    post(b, 1, kMrcPostSend, 64, 0);
    post(b, 1, kMrcPostRead, 64, 0);
    pingpong(b, 3, 10);
    poll(b);
    seeds.push_back({"corrupt_and_refused", b});
  }
  {
    Bytes b;  // crafted data to host 1's MRC QP (port 2): valid, past the MR, bad R_Key,
              // trimmed, last-hop trimmed, out of the PSN window, read-only MR, other PD
    Crafted c;
    c.dma = 256;
    c.payload = 256;
    crafted(b, 2, kOnly, c);
    Crafted past = c;
    past.psn = 1;
    past.msn = 1;
    past.va = 8000;
    crafted(b, 2, kOnly, past);
    seeds.push_back({"crafted_data_past_mr", b});
    Bytes b2;
    Crafted bad = c;
    bad.f2 = 3 << 3;  // R_Key from the record
    bad.word = 0x00ABCDEF00000000ull;
    crafted(b2, 2, kOnly, bad);
    seeds.push_back({"crafted_data_bad_rkey", b2});
    Bytes b3;
    Crafted t = c;
    t.f1 = 0x10;
    crafted(b3, 2, kOnly, t);
    t.f1 = 0x30;
    t.psn = 1;
    crafted(b3, 3, kOnly, t);
    Crafted oor = c;
    oor.psn = 200;
    crafted(b3, 2, kOnly, oor);
    Crafted ro = c;
    ro.f2 = 1 << 3;
    crafted(b3, 2, kOnly, ro);
    Crafted other = c;
    other.f2 = 2 << 3;
    crafted(b3, 2, kOnly, other);
    wire(b3, 2);
    wire(b3, 3);
    seeds.push_back({"crafted_data_cases", b3});
  }
  {
    Bytes b;  // a crafted 3-packet WRITE_WITH_IMM-less message out of order, IPv6, CE, duplicate
    Crafted c;
    c.dma = 700;
    c.payload = 256;
    c.f1 = 0x04;  // CE
    c.psn = 2;
    c.msg_offset = 512;
    c.payload = 188;
    c.va = 512;
    crafted(b, 2, kLast, c);
    c.psn = 0;
    c.msg_offset = 0;
    c.payload = 256;
    c.va = 0;
    crafted(b, 2, kFirst, c);
    crafted(b, 2, kFirst, c);
    c.psn = 1;
    c.msg_offset = 256;
    c.va = 256;
    crafted(b, 3, kMiddle, c);
    post(b, 1, kMrcPostRecv, 0, 0);
    Crafted imm;
    imm.psn = 0;
    imm.msn = 1;
    imm.dma = 64;
    imm.payload = 64;
    imm.va = 1024;
    crafted(b, 2, kOnlyImm, imm);
    wire(b, 2);
    poll(b);
    seeds.push_back({"crafted_multi_out_of_order", b});
  }
  {
    Bytes b;  // feedback to host 0's requester: SACKs (valid, invalid, stale), every NACK reason, ACK
    post(b, 0, kMrcPostWrite, 2048, 0);
    wire(b, 0, 3);
    wire(b, 1, 3);
    Crafted s;
    s.psn = 1;
    s.word = 0b101;
    crafted(b, 0, kSackOp, s);
    Crafted inv;
    inv.psn = 40;
    crafted(b, 0, kSackOp, inv);
    Crafted skip;
    skip.psn = 0;
    skip.bits = 2 | 8;  // ALWAYS_SKIP, CE
    skip.word = 1;
    crafted(b, 1, kSackOp, skip);
    for (uint8_t reason : {1, 2, 6, 7, 0x0A, 0x0B, 0x19, 0x20, 0x21, 0x22, 0}) {
      Crafted n;
      n.psn = 2;
      n.word = word4(reason, 0, 0, 0);
      crafted(b, 0, kNackOp, n);
    }
    crafted(b, 0, kAckOp, s);
    pingpong(b, 4);
    poll(b);
    seeds.push_back({"crafted_feedback", b});
  }
  {
    Bytes b;  // probes and probe responses; endpoint port-status request / response, EV probe
    post(b, 1, kMrcPostWrite, 900, 0);
    wire(b, 2, 2);
    Crafted p;
    p.id = 7;
    crafted(b, 0, kProbeOp, p);
    Crafted pr;
    pr.bits = 4;
    pr.msg_offset = 0x8003;
    crafted(b, 2, kSackOp, pr);
    Crafted ep;
    ep.word = word4(0, 2, 1, 0);  // PORT_STATUS, 2 ports, plane 1 down
    crafted(b, 0, kEpReq, ep);
    crafted(b, 3, kEpResp, ep);
    Crafted evp;
    evp.word = word4(1, 2, 3, 0);
    crafted(b, 1, kEpReq, evp);
    Crafted badn;
    badn.word = word4(0, 40, 3, 0);
    badn.f2 = 2;  // from this host, not the peer
    crafted(b, 0, kEpReq, badn);
    pingpong(b, 4);
    poll(b);
    seeds.push_back({"crafted_probe_endpoint", b});
  }
  {
    Bytes b;  // crafted frames to the RESET MRC QP, the RC QP, an unknown QPN, wrong source, P_Key
    Crafted c;
    c.dma = 64;
    c.payload = 64;
    for (uint8_t q : {1, 2, 0x77}) {
      c.qp = q;
      crafted(b, 2, kOnly, c);
    }
    c.qp = 0;
    c.f2 = 2;
    crafted(b, 2, kOnly, c);
    c.f2 = 4;
    crafted(b, 2, kOnly, c);
    c.f2 = 0;
    c.f1 = 8;  // bad ICRC
    crafted(b, 2, kOnly, c);
    seeds.push_back({"crafted_wrong_target", b});
  }
  {
    Bytes b;  // raw MRC frames from the builder: whole, truncated, chained, endpoint
    const Bytes d = mrc_frame(w::MrcOp::kWriteOnly, 0x11, 0x100, 300);
    raw(b, 2, d);
    raw(b, 2, Bytes(d.begin(), d.begin() + 60));
    raw(b, 2, Bytes(d.begin(), d.end() - 2));
    raw(b, 2, d, 1);
    raw(b, 2, mrc_frame(w::MrcOp::kSack, 0x11, 0x100, 0));
    raw(b, 2, mrc_frame(w::MrcOp::kNack, 0x11, 0x100, 0));
    raw(b, 2, mrc_frame(w::MrcOp::kProbe, 0x11, 0x100, 0));
    raw(b, 2, mrc_frame(w::MrcOp::kEndpointRequest, 2, 0, 0));
    raw(b, 0, Bytes(60, 0xFF));
    seeds.push_back({"raw_builder_frames", b});
  }
  for (const auto& [name, bytes] : seeds) {
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name.c_str());
      return 1;
    }
  }
  return 0;
}
