// Input format of the MRC receive-path fuzz target (fuzz_mrc.cc), shared
// with its seed generator (make_seeds.cc) so both agree on the encoding.
//
// The node under test: one NicNode with two 2-port hosts, host h on node
// ports 2h (plane 0) and 2h + 1 (plane 1), each port with its own MAC and IP;
// node port p is wired to node port p ^ 2 (the same plane of the other host).
// Per host: an MRC QP connected to the other host's (RTS, MTU 256, 2 planes,
// 8 EVs with one backup per plane, the peer's per-plane addresses, a 4 KiB
// window, short timers: RTO 20 us, OOO tolerance 5 us, 3 timeouts; host 0's
// mpr 16 and send PSNs about to wrap, host 1's mpr 256 with 8-aligned SACK
// bases), a second MRC QP left
// in RESET and an RC QP connected to the other host's RC QP; an 8 KiB MR (all
// rights) with 4 KiB guard bytes on each side and a local-write-only MR over
// the same bytes; an MR of another PD over a separate 1 KiB buffer; and a
// 16 KiB local-only source MR of 8 slots of 2 KiB that only WRITEs read.
//
// An input is a sequence of records, each starting with an op byte; the node
// port of an RX or CTRL op is bits 0..1 (host = port >> 1, plane = port & 1).
//   op < 0x20          RAW RX into port (op & 3). Bits 2..4: mbuf segment size
//                      (0 one segment, k: k x 64 bytes). Then BE u16 length
//                      and that many frame bytes (fewer when the input ends).
//   0x20 <= op < 0x60  CRAFTED MRC frame into port (op & 3), built with the
//                      common/wire MRC builder (valid ICRC unless asked),
//                      op kind kAllMrcOps[((op - 0x20) >> 2) % 12], from a
//                      kMrcCraftedBytes record:
//                        [0] QP: 0 the MRC QP, 1 the RESET MRC QP, 2 the RC
//                            QP, 0xFF the endpoint QPN 2, else that QPN
//                        [1] b0 IPv6, b1 VLAN, b2 CE, b3 corrupt the ICRC,
//                            b4 trim (data: cut to the headers by trim_frame),
//                            b5 with the last-hop DSCP (47) else 46, b6 METH
//                            RTX, b7 METH TS
//                        [2] b0..1 source: 0 the peer's same-plane port,
//                            1 its other plane, 2 this host (not the peer),
//                            3 the peer's plane 0 over IPv4 only;
//                            b2 wrong P_Key; b3..5 R_Key: 0 the MR's, 1 the
//                            local-write-only MR's, 2 the other PD's, 3 from
//                            bytes [16..19], 4..7 the MR's; b6 AckReq; b7 SE
//                        [3..4] PSN delta (BE, signed): data and probes from
//                            the target QP's expected PSN (CACK + 1); SACK /
//                            ACK CACK and NACK PSN from its oldest unacked
//                            PSN (the NACK's BTH PSN is that - 1)
//                        [5..6] RETH VA offset from the MR start (BE, signed)
//                        [7..8] RETH DMA length (BE)
//                        [9..10] payload bytes (BE, at most kMrcMaxPayload)
//                        [11..12] METH msg_offset (BE)
//                        [13] METH msn delta from the responder's oldest
//                             open message (signed)
//                        [14] EV (METH / SETH / NETH / PETH / ERTH ev)
//                        [15] METH rqmsn, probe id, endpoint request id
//                        [16..23] SACK bitmap (BE u64); NACK: [16] reason,
//                             [17] vendor code; endpoint: [16] op,
//                             [17] num_ports, [18] port mask, [19] status
//                        [24] SACK sack_offset (signed)  [25] SACK mpr
//                        [26] SACK b0..1 M, b2 PR, b3 CE; ImmDt seed
//                        [27] payload pattern seed
//   0x60 <= op < 0x80  POST on host (op & 1)'s MRC QP, kind (op >> 1) & 0xF:
//                      0 WRITE, 1 WRITE_WITH_IMM (imm = wr_id), 2 RECV,
//                      3 SEND and 4 READ (refused by an MRC QP: checked),
//                      5 WRITE solicited, else WRITE; then BE u16 length
//                      (mod 2 KiB + 1) and BE u16 offset into the peer's MR
//                      (mod 8 KiB; the range may run past its end). The
//                      payload comes from a free source slot (none free: no
//                      post), filled with a pattern of the wr_id.
//   op >= 0x80         CTRL kind (op >> 2) & 0x1F on port (op & 3):
//                      0 drop:    transmit up to next byte + 1 frames, free them
//                      1 wire:    transmit up to next byte + 1 frames and
//                                 deliver them to port ^ 2
//                      2 time:    now += next byte x 1 us (0xFF: + 1 ms)
//                      3 corrupt: transmit one frame, flip the bit at BE u16
//                                 index (mod its length x 8), deliver it
//                      4 poll:    drain every CQ (and check the completions)
//                      5 remr:    host (op & 1), next byte b: bit 0 = 0
//                                 deregisters the 8 KiB MR (keys go stale,
//                                 bytes filled with kMrcFreedByte, which must
//                                 stay); bit 0 = 1 registers it again (new
//                                 keys), deregistering it first if live
//                      6 link:    next byte bit 0: node port up (1) / down (0)
//                                 (NicNode::set_port_up: the host's MRC QPs
//                                 stop that plane and tell the peer)
//                      7 trim:    transmit one frame; an MRC data frame is cut
//                                 to its headers (DSCP 47 if next byte bit 0,
//                                 else 46), then delivered
//                      8 dup:     transmit one frame, deliver it twice
//                      9 reorder: transmit up to (next byte & 7) + 2 frames,
//                                 deliver them in reverse order
//                      10 hold:   transmit one frame and hold it (8 at most)
//                      11 release: deliver the held frames, newest first if
//                                 next byte bit 0, else oldest first
//                      12..31:    no-op
// Virtual time advances 50 ns per record; after each record the node is
// advanced if a wakeup is due. After the input, time moves on in 10 ms steps
// with every port transmitting (frames freed) for a while.
//
// Checked (fuzz_mrc.cc): no crash / UB (ASan, UBSan); no byte outside a live
// MR changes (guards, the other PD's MR, a deregistered MR's bytes, the
// source slots); every frame delivered to the node moves exactly one reason
// counter (a node drop reason, a QP's receive action, an MRC endpoint frame
// taken); every frame the node sends parses with a correct ICRC; send
// completions come in WQE order, and a successful WRITE is in the peer's
// memory byte for byte (unless another write to the same bytes, a crafted /
// raw frame or a re-registration could have touched them); a WRITE past the
// peer's MR never succeeds unless a crafted / raw frame could have
// acknowledged it (a forged SACK, or a crafted data frame that took its PSN
// at the peer, which then SACKs the real packet as a duplicate without
// touching memory: corpus past_mr_duplicate_psn, past_mr_forged_sack);
// WRITE_WITH_IMM completions at the responder come
// in message order with the right length; every mbuf is back in the pool.
#pragma once

#include <cstdint>

namespace sf::fuzz {

inline constexpr uint8_t kMrcOpCrafted = 0x20;
inline constexpr uint8_t kMrcOpPost = 0x60;
inline constexpr uint8_t kMrcOpCtrl = 0x80;
inline constexpr uint8_t kMrcCtrlDrop = 0;
inline constexpr uint8_t kMrcCtrlWire = 1;
inline constexpr uint8_t kMrcCtrlTime = 2;
inline constexpr uint8_t kMrcCtrlCorrupt = 3;
inline constexpr uint8_t kMrcCtrlPoll = 4;
inline constexpr uint8_t kMrcCtrlRemr = 5;
inline constexpr uint8_t kMrcCtrlLink = 6;
inline constexpr uint8_t kMrcCtrlTrim = 7;
inline constexpr uint8_t kMrcCtrlDup = 8;
inline constexpr uint8_t kMrcCtrlReorder = 9;
inline constexpr uint8_t kMrcCtrlHold = 10;
inline constexpr uint8_t kMrcCtrlRelease = 11;
inline constexpr uint8_t kMrcPostWrite = 0;
inline constexpr uint8_t kMrcPostWriteImm = 1;
inline constexpr uint8_t kMrcPostRecv = 2;
inline constexpr uint8_t kMrcPostSend = 3;
inline constexpr uint8_t kMrcPostRead = 4;
inline constexpr uint8_t kMrcPostWriteSolicited = 5;
inline constexpr uint8_t kMrcFreedByte = 0x5F;
inline constexpr uint32_t kMrcCraftedBytes = 28;
inline constexpr uint32_t kMrcMaxPayload = 1200;

constexpr uint8_t mrc_raw_op(uint8_t port, uint8_t seg64 = 0) {
  return static_cast<uint8_t>((seg64 & 7) << 2 | (port & 3));
}
// `kind`: index into wire::kAllMrcOps.
constexpr uint8_t mrc_crafted_op(uint8_t port, uint8_t kind) {
  return static_cast<uint8_t>(kMrcOpCrafted + ((kind & 0xF) << 2) + (port & 3));
}
constexpr uint8_t mrc_post_op(uint8_t host, uint8_t kind) {
  return static_cast<uint8_t>(kMrcOpPost | (kind & 0xF) << 1 | (host & 1));
}
constexpr uint8_t mrc_ctrl_op(uint8_t kind, uint8_t port) {
  return static_cast<uint8_t>(kMrcOpCtrl | (kind & 0x1F) << 2 | (port & 3));
}

}  // namespace sf::fuzz
