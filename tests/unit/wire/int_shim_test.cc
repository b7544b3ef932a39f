// HPCC INT shim (int_shim.h, docs/wire-formats.md "INT shim"): the sender
// opens it, switches append records, the receiver reads and strips it and
// gets back the exact frame the sender's ICRC covers; ACKs carry an echo no
// switch appends to; every malformed case is refused with its status.
#include "common/wire/int_shim.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/ipv4.h"
#include "common/wire/srv6.h"

namespace sf::wire {
namespace {

// A frame built by our builder, INT flag set, ICRC recomputed (what a sender
// of an INT-enabled flow puts on the wire before int_open), in a buffer with
// `room` spare bytes.
std::vector<uint8_t> int_frame(L3Spec l3, Opcode op, size_t payload, uint32_t& len, size_t room = 256) {
  RoceFrameSpec s;
  s.l3 = l3;
  s.bth.opcode = op;
  s.bth.dest_qp = 0x1234;
  s.bth.psn = Psn(77);
  s.ext.reth_dma_length = static_cast<uint32_t>(payload);
  std::vector<uint8_t> buf(payload + 200 + room);
  const auto r = build_roce_frame(buf, s, std::vector<uint8_t>(payload, 0xAB));
  EXPECT_TRUE(r.ok());
  len = static_cast<uint32_t>(r.frame_bytes);
  FrameInfo f = parse_frame(std::span<const uint8_t>(buf.data(), len));
  EXPECT_TRUE(f.ok());
  set_bth_int_flag(*const_cast<Bth*>(f.bth), true);
  EXPECT_TRUE(icrc_store(std::span<uint8_t>(buf.data(), len), f));
  buf.resize(len + room);
  return buf;
}

IntFrameRef ref_of(const std::vector<uint8_t>& buf, uint32_t len) {
  const FrameInfo f = parse_frame(std::span<const uint8_t>(buf.data(), len));
  EXPECT_TRUE(f.ok()) << to_string(f.reason);
  return int_frame_ref(f);
}

IcrcStatus icrc_of(const std::vector<uint8_t>& buf, uint32_t len) {
  const std::span<const uint8_t> fr(buf.data(), len);
  return icrc_verify(fr, parse_frame(fr));
}

Srv6Spec srv6() {
  Srv6Spec sr;
  const uint8_t block[4] = {0xfc, 0xbb, 0xbb, 0xbb};
  const uint16_t usids[2] = {0x100, 0x200};
  EXPECT_TRUE(make_usid_address(sr.outer.dst, block, usids));
  return sr;
}

// 1. Sender opens, three switches append, the receiver reads the three
// records in order and strips: the frame is byte for byte the sender's, ICRC
// good. In between every frame parses as RoCE with sound IP/UDP lengths.
TEST(IntShim, OpenAppendReadStripIpv4) {
  uint32_t len = 0;
  std::vector<uint8_t> buf = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 1000, len);
  const std::vector<uint8_t> sent(buf.begin(), buf.begin() + len);
  ASSERT_EQ(icrc_of(buf, len), IcrcStatus::kOk);
  const IntFrameRef r = ref_of(buf, len);

  ASSERT_EQ(int_open(buf, len, r, 5), IntStatus::kOk);
  EXPECT_EQ(len, sent.size() + 4);
  IntShim s = int_read(std::span<const uint8_t>(buf.data(), len), r);
  ASSERT_EQ(s.status, IntStatus::kOk);
  EXPECT_EQ(s.hops.size(), 0u);
  EXPECT_EQ(s.max_hops, 5);
  EXPECT_FALSE(s.echo());

  const IntHop h[3] = {make_int_hop(1000, 64'000, 5'000, 100'000'000'000),
                       make_int_hop(2000, 128'000, 0, 400'000'000'000),
                       make_int_hop(3000, 6'400, 123, 25'000'000'000)};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(int_append_hop(buf, len, r, h[i]), IntStatus::kOk);
    const FrameInfo f = parse_frame(std::span<const uint8_t>(buf.data(), len));
    ASSERT_TRUE(f.ok()) << to_string(f.reason);  // IPv4 checksum and lengths consistent
    EXPECT_EQ(f.kind, FrameKind::kRoce);
    EXPECT_EQ(f.payload_bytes, 1000u + int_shim_bytes(static_cast<uint32_t>(i + 1)));
    EXPECT_EQ(f.ipv4->total_length.value(), sent.size() - 14 + int_shim_bytes(static_cast<uint32_t>(i + 1)));
  }
  EXPECT_EQ(len, sent.size() + int_shim_bytes(3));
  s = int_read(std::span<const uint8_t>(buf.data(), len), r);
  ASSERT_EQ(s.status, IntStatus::kOk);
  ASSERT_EQ(s.hops.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(s.hops[i].ts_ns.value(), h[i].ts_ns.value());
    EXPECT_EQ(s.hops[i].tx_units.value(), h[i].tx_units.value());
    EXPECT_EQ(s.hops[i].qlen_bytes.value(), h[i].qlen_bytes.value());
    EXPECT_EQ(s.hops[i].rate_mbps.value(), h[i].rate_mbps.value());
  }
  EXPECT_EQ(h[1].rate_mbps.value(), 400'000u);
  EXPECT_EQ(h[1].tx_units.value(), 2000u);

  ASSERT_EQ(int_strip(buf, len, r), IntStatus::kOk);
  ASSERT_EQ(len, sent.size());
  EXPECT_EQ(std::vector<uint8_t>(buf.begin(), buf.begin() + len), sent);
  EXPECT_EQ(icrc_of(buf, len), IcrcStatus::kOk);
}

// 2. IPv6 and SRv6 (IPv6-in-IPv6): every IP length moves with the shim; strip restores.
TEST(IntShim, Ipv6AndSrv6Lengths) {
  for (const L3Spec& l3 : {L3Spec{Ipv6Spec{}}, L3Spec{srv6()}}) {
    uint32_t len = 0;
    std::vector<uint8_t> buf = int_frame(l3, Opcode::kRcSendOnly, 333, len);
    const std::vector<uint8_t> sent(buf.begin(), buf.begin() + len);
    const FrameInfo f0 = parse_frame(std::span<const uint8_t>(buf.data(), len));
    const IntFrameRef r = int_frame_ref(f0);
    const uint32_t ip6_len0 = f0.ipv6->payload_length.value();
    EXPECT_EQ(r.ip_version, 6);
    ASSERT_EQ(int_open(buf, len, r), IntStatus::kOk);
    ASSERT_EQ(int_append_hop(buf, len, r, make_int_hop(1, 2, 3, 4'000'000)), IntStatus::kOk);
    const FrameInfo f = parse_frame(std::span<const uint8_t>(buf.data(), len));
    ASSERT_TRUE(f.ok()) << to_string(f.reason);
    EXPECT_EQ(f.ipv6->payload_length.value(), ip6_len0 + 20u);
    if (f.outer_ipv6 != nullptr) {
      EXPECT_EQ(f.outer_ipv6->payload_length.value(), len - 14u - 40u);
    }
    EXPECT_EQ(f.udp->length.value(), len - f.udp_offset);
    ASSERT_EQ(int_strip(buf, len, r), IntStatus::kOk);
    EXPECT_EQ(std::vector<uint8_t>(buf.begin(), buf.begin() + len), sent);
    EXPECT_EQ(icrc_of(buf, len), IcrcStatus::kOk);
  }
}

// 3. A full stack: the switch sets the overflow flag and appends nothing.
TEST(IntShim, FullStackSetsOverflow) {
  uint32_t len = 0;
  std::vector<uint8_t> buf = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 64, len);
  const IntFrameRef r = ref_of(buf, len);
  ASSERT_EQ(int_open(buf, len, r, 2), IntStatus::kOk);
  const IntHop h = make_int_hop(1, 1, 1, 100'000'000'000);
  ASSERT_EQ(int_append_hop(buf, len, r, h), IntStatus::kOk);
  ASSERT_EQ(int_append_hop(buf, len, r, h), IntStatus::kOk);
  const uint32_t before = len;
  EXPECT_EQ(int_append_hop(buf, len, r, h), IntStatus::kFull);
  EXPECT_EQ(len, before);
  const IntShim s = int_read(std::span<const uint8_t>(buf.data(), len), r);
  EXPECT_EQ(s.hops.size(), 2u);
  EXPECT_TRUE(s.overflow());
}

// 4. The receiver echoes the records in its ACK (after the ACK's ICRC);
// switches leave an echo alone; the requester reads and strips it.
TEST(IntShim, EchoInAck) {
  uint32_t dlen = 0;
  std::vector<uint8_t> data = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 256, dlen);
  const IntFrameRef dr = ref_of(data, dlen);
  ASSERT_EQ(int_open(data, dlen, dr), IntStatus::kOk);
  ASSERT_EQ(int_append_hop(data, dlen, dr, make_int_hop(10, 640, 7, 100'000'000'000)), IntStatus::kOk);
  ASSERT_EQ(int_append_hop(data, dlen, dr, make_int_hop(20, 1280, 8, 100'000'000'000)), IntStatus::kOk);
  const IntShim got = int_read(std::span<const uint8_t>(data.data(), dlen), dr);
  ASSERT_EQ(got.status, IntStatus::kOk);
  const std::vector<IntHop> hops(got.hops.begin(), got.hops.end());  // copy before strip

  uint32_t alen = 0;
  std::vector<uint8_t> ack = int_frame(Ipv4Spec{}, Opcode::kRcAck, 0, alen);
  const std::vector<uint8_t> ack_sent(ack.begin(), ack.begin() + alen);
  const IntFrameRef ar = ref_of(ack, alen);
  ASSERT_EQ(int_echo(ack, alen, ar, hops), IntStatus::kOk);
  EXPECT_EQ(alen, ack_sent.size() + int_shim_bytes(2));
  const uint32_t before = alen;
  EXPECT_EQ(int_append_hop(ack, alen, ar, make_int_hop(30, 0, 0, 1'000'000)), IntStatus::kEcho);
  EXPECT_EQ(alen, before);
  const IntShim e = int_read(std::span<const uint8_t>(ack.data(), alen), ar);
  ASSERT_EQ(e.status, IntStatus::kOk);
  EXPECT_TRUE(e.echo());
  ASSERT_EQ(e.hops.size(), 2u);
  EXPECT_EQ(e.hops[1].ts_ns.value(), 20u);
  EXPECT_EQ(e.hops[0].qlen_bytes.value(), 7u);
  ASSERT_EQ(int_strip(ack, alen, ar), IntStatus::kOk);
  EXPECT_EQ(std::vector<uint8_t>(ack.begin(), ack.begin() + alen), ack_sent);
  EXPECT_EQ(icrc_of(ack, alen), IcrcStatus::kOk);
}

// 4b. Swift's remote delay: a request asks for the responder's turnaround
// (kFlagTurnaround, no extra bytes; switches still append), the echo carries
// it in 4 bytes between the records and the tail, the reader returns it and
// the strip removes all of it. A request's flag alone (no echo) adds nothing.
TEST(IntShim, TurnaroundInEcho) {
  uint32_t dlen = 0;
  std::vector<uint8_t> data = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 256, dlen);
  const uint32_t sent = dlen;
  const IntFrameRef dr = ref_of(data, dlen);
  ASSERT_EQ(int_open(data, dlen, dr, kIntDefaultMaxHops, IntTail::kFlagTurnaround), IntStatus::kOk);
  EXPECT_EQ(dlen, sent + int_shim_bytes(0));
  ASSERT_EQ(int_append_hop(data, dlen, dr, make_int_hop(10, 640, 7, 100'000'000'000)), IntStatus::kOk);
  const IntShim req = int_read(std::span<const uint8_t>(data.data(), dlen), dr);
  ASSERT_EQ(req.status, IntStatus::kOk);
  EXPECT_TRUE(req.turnaround_asked());
  EXPECT_FALSE(req.has_turnaround());
  EXPECT_EQ(req.hops.size(), 1u);
  EXPECT_EQ(req.bytes(), int_shim_bytes(1));
  const std::vector<IntHop> hops(req.hops.begin(), req.hops.end());
  ASSERT_EQ(int_strip(data, dlen, dr), IntStatus::kOk);
  EXPECT_EQ(dlen, sent);
  EXPECT_EQ(icrc_of(data, dlen), IcrcStatus::kOk);
  // An opener's flags other than the turnaround request are refused.
  EXPECT_EQ(int_open(data, dlen, dr, kIntDefaultMaxHops, IntTail::kFlagEcho), IntStatus::kBadArgument);

  for (const uint32_t ta : {0u, 1234u, 0xFFFFFFFFu}) {
    uint32_t alen = 0;
    std::vector<uint8_t> ack = int_frame(Ipv4Spec{}, Opcode::kRcAck, 0, alen);
    const std::vector<uint8_t> ack_sent(ack.begin(), ack.begin() + alen);
    const IntFrameRef ar = ref_of(ack, alen);
    ASSERT_EQ(int_echo(ack, alen, ar, hops, 0, ta), IntStatus::kOk);
    EXPECT_EQ(alen, ack_sent.size() + int_shim_bytes(1) + kIntTurnaroundBytes);
    const IntShim e = int_read(std::span<const uint8_t>(ack.data(), alen), ar);
    ASSERT_EQ(e.status, IntStatus::kOk);
    EXPECT_TRUE(e.echo() && e.has_turnaround());
    EXPECT_EQ(e.turnaround_ns, ta);
    ASSERT_EQ(e.hops.size(), 1u);
    EXPECT_EQ(e.hops[0].qlen_bytes.value(), 7u);
    EXPECT_EQ(e.bytes(), int_shim_bytes(1) + kIntTurnaroundBytes);
    const uint32_t before = alen;
    EXPECT_EQ(int_append_hop(ack, alen, ar, make_int_hop(30, 0, 0, 1'000'000)), IntStatus::kEcho);
    EXPECT_EQ(alen, before);
    ASSERT_EQ(int_strip(ack, alen, ar), IntStatus::kOk);
    EXPECT_EQ(std::vector<uint8_t>(ack.begin(), ack.begin() + alen), ack_sent);
    EXPECT_EQ(icrc_of(ack, alen), IcrcStatus::kOk);
  }
  // An echo without a turnaround ignores a kFlagTurnaround passed as an extra flag.
  uint32_t alen = 0;
  std::vector<uint8_t> ack = int_frame(Ipv4Spec{}, Opcode::kRcAck, 0, alen);
  const uint32_t plain = alen;
  const IntFrameRef ar = ref_of(ack, alen);
  ASSERT_EQ(int_echo(ack, alen, ar, hops, IntTail::kFlagTurnaround), IntStatus::kOk);
  EXPECT_EQ(alen, plain + int_shim_bytes(1));
  EXPECT_FALSE(int_read(std::span<const uint8_t>(ack.data(), alen), ar).has_turnaround());
}

// 5. Refusals: no flag, a bad tail, no room, bad arguments, a frame shorter
// than its UDP length.
TEST(IntShim, Refusals) {
  uint32_t len = 0;
  std::vector<uint8_t> buf = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 64, len, 24);
  const IntFrameRef r = ref_of(buf, len);
  // No shim yet: nothing to read, append or strip.
  EXPECT_EQ(int_read(std::span<const uint8_t>(buf.data(), len), r).status, IntStatus::kBadShim);
  EXPECT_EQ(int_open(buf, len, r, 0), IntStatus::kBadArgument);
  EXPECT_EQ(int_open(buf, len, r, kIntMaxHops + 1), IntStatus::kBadArgument);
  ASSERT_EQ(int_open(buf, len, r, 5), IntStatus::kOk);
  const IntHop h = make_int_hop(1, 1, 1, 1'000'000);
  ASSERT_EQ(int_append_hop(buf, len, r, h), IntStatus::kOk);  // 4 + 16 of the 24 spare bytes
  const uint32_t before = len;
  EXPECT_EQ(int_append_hop(buf, len, r, h), IntStatus::kNoRoom);
  EXPECT_EQ(len, before);
  // A corrupted tail.
  std::vector<uint8_t> bad(buf.begin(), buf.begin() + len);
  bad[len - 4 - 4] = 0x00;
  EXPECT_EQ(int_read(bad, r).status, IntStatus::kBadShim);
  bad[len - 4 - 4] = IntTail::kMagic;
  bad[len - 4 - 2] = 9;  // hop_count > max_hops
  EXPECT_EQ(int_read(bad, r).status, IntStatus::kBadShim);
  // Truncated: the UDP length runs past the bytes.
  EXPECT_EQ(int_read(std::span<const uint8_t>(buf.data(), len - 1), r).status, IntStatus::kNotRoce);
  // No flag.
  uint32_t plen = 0;
  std::vector<uint8_t> plain = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 64, plen);
  FrameInfo pf = parse_frame(std::span<const uint8_t>(plain.data(), plen));
  set_bth_int_flag(*const_cast<Bth*>(pf.bth), false);
  const IntFrameRef pr = int_frame_ref(pf);
  EXPECT_EQ(int_open(plain, plen, pr), IntStatus::kNoFlag);
  EXPECT_EQ(int_append_hop(plain, plen, pr, h), IntStatus::kNoFlag);
  EXPECT_EQ(int_strip(plain, plen, pr), IntStatus::kNoFlag);
  // A trimmed frame (cut to its headers, INT flag still set) whose last bytes
  // happen to look like a tail: its RETH is not taken for records.
  {
    uint32_t tlen = 0;
    std::vector<uint8_t> t = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 64, tlen);
    const FrameInfo tf = parse_frame(std::span<const uint8_t>(t.data(), tlen));
    const IntFrameRef tr = int_frame_ref(tf);
    const uint32_t cut = tf.payload_offset + 4;  // headers + 4 bytes "ICRC"
    t[tr.udp_offset + 4] = 0;
    t[tr.udp_offset + 5] = static_cast<uint8_t>(cut - tr.udp_offset);
    t[tr.ip_offset + 2] = 0;
    t[tr.ip_offset + 3] = static_cast<uint8_t>(cut - tr.ip_offset);
    ipv4_set_checksum(*reinterpret_cast<Ipv4Header*>(t.data() + tr.ip_offset));
    const uint32_t tail = cut - 4 - 4;  // inside the RETH
    t[tail] = IntTail::kMagic;
    t[tail + 1] = 0;
    t[tail + 2] = 0;  // 0 hops: the tail alone would fit after the BTH
    t[tail + 3] = 5;
    uint32_t l = cut;
    EXPECT_EQ(int_read(std::span<const uint8_t>(t.data(), cut), tr).status, IntStatus::kBadShim);
    EXPECT_EQ(int_append_hop(t, l, tr, h), IntStatus::kBadShim);
    EXPECT_EQ(l, cut);
  }
  // A reference that is not a RoCE frame.
  EXPECT_EQ(int_read(std::span<const uint8_t>(buf.data(), len), IntFrameRef{}).status, IntStatus::kNotRoce);
}

// 6. The switch's fast parse gives the same reference as the full parser.
TEST(IntShim, RefFromFastParse) {
  uint32_t len = 0;
  std::vector<uint8_t> buf = int_frame(Ipv4Spec{}, Opcode::kRcWriteOnly, 64, len);
  FwdHeaders fh;
  ASSERT_TRUE(parse_fwd(buf.data(), len, len, true, fh));
  const IntFrameRef a = int_frame_ref(fh);
  const IntFrameRef b = ref_of(buf, len);
  EXPECT_EQ(a.ip_offset, b.ip_offset);
  EXPECT_EQ(a.udp_offset, b.udp_offset);
  EXPECT_EQ(a.ip_version, b.ip_version);
  EXPECT_EQ(int_open(buf, len, a), IntStatus::kOk);
}

// 7. Records: wire widths and saturation.
TEST(IntShim, HopEncoding) {
  const IntHop h = make_int_hop((uint64_t{1} << 32) + 5, 64 * 10 + 63, uint64_t{1} << 40, 800'000'000'000);
  EXPECT_EQ(h.ts_ns.value(), 5u);
  EXPECT_EQ(h.tx_units.value(), 10u);
  EXPECT_EQ(h.qlen_bytes.value(), UINT32_MAX);
  EXPECT_EQ(h.rate_mbps.value(), 800'000u);
  const IntHop a = make_int_hop(UINT32_MAX - 9, (uint64_t{1} << 32) * 64 - 640, 0, 0);
  const IntHop b = make_int_hop(uint64_t{UINT32_MAX} + 11, (uint64_t{1} << 32) * 64 + 640, 0, 0);
  EXPECT_EQ(int_ts_delta_ns(b, a), 20u);
  EXPECT_EQ(int_tx_delta_bytes(b, a), 1280u);
  EXPECT_FALSE(bth_int_flag(Bth{}));
}

}  // namespace
}  // namespace sf::wire
