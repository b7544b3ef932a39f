// Writes the seed corpus of fuzz_nic (tests/fuzz/nic/corpus) in the encoding
// of nic_fuzz_input.h: verbs traffic wired between the two hosts (WRITE,
// SEND, READ, WRITE_WITH_IMM, with loss, corruption and retransmission),
// crafted requests and responses (valid, bad rkey, bad ICRC, PSNs out of
// window, IPv6, multi-packet), raw frames (truncated, malformed), and MRs
// deregistered and registered again mid-message.
// usage: fuzz_nic_make_seeds OUT_DIR
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "common/wire/frame_builder.h"
#include "tests/fuzz/nic/nic_fuzz_input.h"

namespace {

using namespace sf::fuzz;
namespace w = sf::wire;

using Bytes = std::vector<uint8_t>;

void u16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
void post(Bytes& b, uint8_t host, uint8_t kind, uint16_t len, uint16_t off) {
  b.push_back(nic_post_op(host, kind));
  u16(b, len);
  u16(b, off);
}
void wire(Bytes& b, uint8_t port, uint8_t n = 31) {
  b.push_back(nic_ctrl_op(kNicCtrlWire, port));
  b.push_back(n);
}
void time_us(Bytes& b, uint8_t us) {
  b.push_back(nic_ctrl_op(kNicCtrlTime, 0));
  b.push_back(us);
}
// Both directions wired, with time for pacing and ACK coalescing between.
void pingpong(Bytes& b, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    wire(b, 0);
    time_us(b, 2);
    wire(b, 1);
    time_us(b, 2);
  }
}
void poll(Bytes& b) { b.push_back(nic_ctrl_op(kNicCtrlPoll, 0)); }
// Deregister host h's MR (reg = false) or register it again (reg = true).
void remr(Bytes& b, uint8_t host, bool reg) {
  b.push_back(nic_ctrl_op(kNicCtrlRemr, host));
  b.push_back(reg ? 1 : 0);
}
void crafted(Bytes& b, uint8_t port, uint8_t opcode, int16_t psn_delta, uint8_t flags, int16_t va_off,
             uint16_t dma_len, uint16_t payload, uint8_t seed = 1, bool v6 = false, bool bad_icrc = false,
             uint8_t rkey_sel = 0, uint8_t qp = 0) {
  b.push_back(nic_crafted_op(port, v6, bad_icrc, rkey_sel));
  b.push_back(opcode);
  b.push_back(qp);
  u16(b, static_cast<uint16_t>(psn_delta));
  b.push_back(flags);
  u16(b, static_cast<uint16_t>(va_off));
  u16(b, dma_len);
  u16(b, payload);
  b.push_back(seed);
}
void raw(Bytes& b, uint8_t port, const Bytes& frame, uint8_t seg64 = 0) {
  b.push_back(nic_raw_op(port, seg64));
  u16(b, static_cast<uint16_t>(frame.size()));
  b.insert(b.end(), frame.begin(), frame.end());
}

// A WRITE_ONLY to host 1's first QP (QPN 0x11) as host 0 would send it.
Bytes write_frame(uint32_t psn, size_t payload) {
  w::RoceFrameSpec s;
  s.l2.dst = {{0x02, 0x4E, 0x49, 0x43, 0x00, 1}};
  s.l2.src = {{0x02, 0x4E, 0x49, 0x43, 0x00, 0}};
  w::Ipv4Spec ip;
  ip.src = {{10, 1, 0, 1}};
  ip.dst = {{10, 1, 0, 2}};
  s.l3 = ip;
  s.bth.opcode = w::Opcode::kRcWriteOnly;
  s.bth.dest_qp = 0x11;
  s.bth.psn = w::Psn(psn);
  s.bth.ack_req = true;
  s.ext.reth_va = 0x1000;
  s.ext.reth_rkey = 0x1234;
  s.ext.reth_dma_length = static_cast<uint32_t>(payload);
  Bytes pl(payload, 0x42);
  Bytes f(w::roce_frame_bytes(s, payload));
  if (!w::build_roce_frame(f, s, pl).ok()) std::abort();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_nic_make_seeds OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::vector<std::pair<std::string, Bytes>> seeds;
  constexpr uint8_t kAckOk = 0x1F;
  {
    Bytes b;  // WRITE 600 B (3 packets at MTU 256) and its ACK
    post(b, 0, kNicPostWrite, 600, 0);
    pingpong(b, 3);
    poll(b);
    seeds.push_back({"write_3pkt", b});
  }
  {
    Bytes b;  // SEND 700 B into a posted receive, WRITE_WITH_IMM consuming another
    post(b, 1, kNicPostRecv, 1024, 0);
    post(b, 1, kNicPostRecv, 64, 2048);
    post(b, 0, kNicPostSend, 700, 100);
    post(b, 0, kNicPostWriteImm, 300, 512);
    pingpong(b, 4);
    poll(b);
    seeds.push_back({"send_and_write_imm", b});
  }
  {
    Bytes b;  // READ 900 B from host 1 and WRITE from host 1 to host 0 (its PSNs wrap)
    post(b, 0, kNicPostRead, 900, 40);
    post(b, 1, kNicPostWrite, 2000, 8);
    pingpong(b, 6);
    poll(b);
    seeds.push_back({"read_and_reverse_write", b});
  }
  {
    Bytes b;  // loss and retransmission: the first data frames are dropped, time passes
    post(b, 0, kNicPostWrite, 800, 0);
    b.push_back(nic_ctrl_op(kNicCtrlDrop, 0));
    b.push_back(1);
    pingpong(b, 2);
    time_us(b, 0xFF);
    pingpong(b, 4);
    seeds.push_back({"loss_retransmit", b});
  }
  {
    Bytes b;  // a bit flipped on the wire (ICRC drop), then recovery
    post(b, 0, kNicPostSend, 64, 0);
    post(b, 1, kNicPostRecv, 64, 0);
    b.push_back(nic_ctrl_op(kNicCtrlCorrupt, 0));
    u16(b, 8 * 70);
    time_us(b, 0xFF);
    pingpong(b, 3);
    seeds.push_back({"corrupt_wire", b});
  }
  {
    Bytes b;  // crafted WRITEs to host 1: valid, bad rkey, bad ICRC, ahead of ePSN, duplicate
    crafted(b, 1, 0x0A, 0, 1, 0, 64, 64);
    crafted(b, 1, 0x0A, 1, 1, 0, 64, 64, 2, false, false, 3);
    crafted(b, 1, 0x0A, 0, 1, 0, 64, 64, 3, false, true);
    crafted(b, 1, 0x0A, 5, 1, 0, 64, 64);
    crafted(b, 1, 0x0A, -1, 1, 0, 64, 64);
    wire(b, 1);
    seeds.push_back({"crafted_write_cases", b});
  }
  {
    Bytes b;  // crafted multi-packet SEND and WRITE over IPv6, then access errors
    post(b, 1, kNicPostRecv, 2048, 0);
    crafted(b, 1, 0x00, 0, 0, 0, 0, 256, 4, true);
    crafted(b, 1, 0x01, 1, 0, 0, 0, 256, 5, true);
    crafted(b, 1, 0x02, 2, 1, 0, 0, 100, 6, true);
    crafted(b, 1, 0x06, 3, 0, 1024, 600, 256, 7, true);
    crafted(b, 1, 0x07, 4, 0, 0, 0, 256, 8, true);
    crafted(b, 1, 0x09, 5, 1, 0, 0, 88, 9, true);
    crafted(b, 1, 0x0A, 6, 1, -16, 64, 64, 10, false, false, 1);
    crafted(b, 1, 0x0C, 7, 1, 8000, 500, 0, 11, false, false, 2);
    wire(b, 1);
    poll(b);
    seeds.push_back({"crafted_multi_v6", b});
  }
  {
    Bytes b;  // crafted responses to host 0's requester: ACK, NAKs, a read response
    post(b, 0, kNicPostWrite, 100, 0);
    post(b, 0, kNicPostRead, 300, 0);
    b.push_back(nic_ctrl_op(kNicCtrlDrop, 0));
    b.push_back(3);
    crafted(b, 0, 0x11, 0, 0, 0, 0, 0, kAckOk);
    crafted(b, 0, 0x11, 1, 0, 0, 0, 0, 0x60);
    crafted(b, 0, 0x0D, 1, 0, 0, 0, 256, 0);
    crafted(b, 0, 0x0F, 2, 0, 0, 0, 44, 0);
    crafted(b, 0, 0x11, 0, 0, 0, 0, 0, 0x62);
    crafted(b, 0, 0x81, 0, 8, 0, 0, 0, 0);
    poll(b);
    seeds.push_back({"crafted_responses", b});
  }
  {
    Bytes b;  // raw frames: valid layout, truncated, split headers, garbage
    const Bytes f = write_frame(0x100, 64);
    raw(b, 1, f);
    raw(b, 1, Bytes(f.begin(), f.begin() + 30));
    raw(b, 1, Bytes(f.begin(), f.end() - 2));
    raw(b, 1, f, 1);
    raw(b, 0, Bytes(60, 0xFF));
    seeds.push_back({"raw_frames", b});
  }
  {
    Bytes b;  // receive-ring backlog on port 1 asserting PFC, then drain
    for (int i = 0; i < 24; ++i) crafted(b, 1, 0x0A, static_cast<int16_t>(i), 1, static_cast<int16_t>(i * 256), 256, 256);
    b.push_back(nic_ctrl_op(kNicCtrlDrop, 1));
    b.push_back(31);
    time_us(b, 200);
    wire(b, 1);
    seeds.push_back({"rx_ring_pfc", b});
  }
  {
    Bytes b;  // host 1's MR deregistered under a 6-packet WRITE, then registered again
    post(b, 0, kNicPostWrite, 1500, 0);
    wire(b, 0, 1);
    remr(b, 1, false);
    pingpong(b, 3);
    remr(b, 1, true);
    crafted(b, 1, 0x0A, 0, 1, 0, 64, 64);
    poll(b);
    seeds.push_back({"dereg_mid_write", b});
  }
  {
    Bytes b;  // host 0's MR deregistered under a READ's responses, a SEND posted from it
    post(b, 0, kNicPostRead, 1200, 100);
    wire(b, 0, 0);
    wire(b, 1, 1);
    remr(b, 0, false);
    pingpong(b, 3);
    post(b, 0, kNicPostSend, 300, 0);
    pingpong(b, 2);
    remr(b, 0, true);
    poll(b);
    seeds.push_back({"dereg_mid_read", b});
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
