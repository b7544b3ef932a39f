// Input format of the NIC receive-path fuzz target (fuzz_nic.cc), shared with
// the seed generator (make_seeds.cc) so both agree on the encoding.
//
// The node under test: one NicNode with two hosts, host h on node port h,
// each with one RC QP (connected to the other host's QP, RTS, MTU 256) and a
// second, unconnected QP in RESET (host 0's connected QP runs DCQCN); per host one 8 KiB MR (all rights) and a
// local-write-only MR over the same bytes, with 4 KiB guard bytes on each
// side, and an MR of another PD over a separate 1 KiB buffer. Port 1 has a
// receive ring drained at 10 Gb/s (16 frames) that asserts PFC on priority 3.
//
// An input is a sequence of records, each starting with an op byte; the port
// (and host) of every op is bit 0.
//   op < 0x40          RAW RX: a frame arrives on port (op & 1). Bits 1..5
//                      pick the mbuf segment size (0 = one segment, k = k x 64
//                      bytes per segment). Then a big-endian u16 length and
//                      that many frame bytes (fewer when the input ends).
//   0x40 <= op < 0x80  CRAFTED RX on port (op & 1), built by the harness with
//                      common/wire builders from a kCraftedBytes record:
//                        [0] opcode   [1] qp: 0 = the connected QP, 1 = the
//                        RESET QP, else that QPN   [2..3] PSN delta (BE,
//                        signed, from the QP's expected PSN for requests,
//                        from acked PSN + 1 for responses)   [4] flags: bit 0
//                        AckReq, 1 SE, 2 FECN, 3 BECN, 4..5 PadCnt is set by
//                        the builder (ignored), 6 CE, 7 VLAN
//                        [5..6] VA offset from the MR start (BE, signed)
//                        [7..8] RETH DMA length (BE)  [9..10] payload bytes
//                        (BE, at most 4200)  [11] AETH syndrome / ImmDt seed.
//                      op bits: 1 IPv6, 2 corrupt the ICRC, 3..5 the rkey:
//                      0 the MR's, 1 the local-write-only MR's, 2 the other
//                      PD's MR's, 3 random (from the record), 4..7 the MR's.
//                      The source addresses are the other host's (the
//                      QPs' AVs are IPv4: an IPv6 frame to a connected QP
//                      is dropped as rx_bad_src; P_Key 0xFFFF).
//   0x80 <= op < 0xC0  POST on host (op & 1)'s connected QP, kind (op >> 1) & 7:
//                      0 SEND, 1 WRITE, 2 WRITE_WITH_IMM, 3 READ, 4 RECV,
//                      5..7 SEND with solicited + fence; then BE u16 length
//                      and BE u16 offset (into the local and the peer's MR;
//                      the remote range may fall outside the peer's MR).
//   op >= 0xC0         CTRL, kind (op >> 1) & 0x1F, port (op & 1):
//                      0 drop:    transmit up to next byte + 1 frames, free them
//                      1 wire:    transmit up to next byte + 1 frames and
//                                 deliver them to the other port
//                      2 time:    now += next byte x 1 us (0xFF: + 50 ms)
//                      3 corrupt: transmit one frame, flip the bit at BE u16
//                                 index (mod its length x 8), deliver it
//                      4 poll:    drain every CQ
//                      5 remr:    on host (op & 1), next byte b: b bit 0 = 0
//                                 deregisters the 8 KiB MR (its keys go
//                                 stale: posts and crafted frames keep using
//                                 them) and fills its bytes with kFreedByte,
//                                 which must stay until it is registered
//                                 again (no write through a dead MR); bit 0 =
//                                 1 registers it again over the same bytes
//                                 (new keys), deregistering it first if live
//                                 (a key change mid-message)
//                      6..31:     no-op
// Virtual time advances 50 ns per record; after each record the node is
// advanced if a wakeup is due. After the input, time moves on in 10 ms steps
// with every port transmitting (frames freed) until the node is idle; then
// the guards and the other PD's MR must be unchanged and every mbuf back in
// the pool once the node is destroyed.
#pragma once

#include <cstdint>

namespace sf::fuzz {

inline constexpr uint8_t kNicOpCrafted = 0x40;
inline constexpr uint8_t kNicOpPost = 0x80;
inline constexpr uint8_t kNicOpCtrl = 0xC0;
inline constexpr uint8_t kNicCtrlDrop = 0;
inline constexpr uint8_t kNicCtrlWire = 1;
inline constexpr uint8_t kNicCtrlTime = 2;
inline constexpr uint8_t kNicCtrlCorrupt = 3;
inline constexpr uint8_t kNicCtrlPoll = 4;
inline constexpr uint8_t kNicCtrlRemr = 5;
inline constexpr uint8_t kFreedByte = 0x5F;
inline constexpr uint8_t kNicPostSend = 0;
inline constexpr uint8_t kNicPostWrite = 1;
inline constexpr uint8_t kNicPostWriteImm = 2;
inline constexpr uint8_t kNicPostRead = 3;
inline constexpr uint8_t kNicPostRecv = 4;
inline constexpr uint32_t kCraftedBytes = 12;
inline constexpr uint32_t kMaxCraftedPayload = 4200;

constexpr uint8_t nic_raw_op(uint8_t port, uint8_t seg64 = 0) {
  return static_cast<uint8_t>((seg64 & 0x1F) << 1 | (port & 1));
}
constexpr uint8_t nic_crafted_op(uint8_t port, bool ipv6, bool bad_icrc, uint8_t rkey_sel) {
  return static_cast<uint8_t>(kNicOpCrafted | (rkey_sel & 7) << 3 | (bad_icrc ? 4 : 0) | (ipv6 ? 2 : 0) | (port & 1));
}
constexpr uint8_t nic_post_op(uint8_t host, uint8_t kind) {
  return static_cast<uint8_t>(kNicOpPost | (kind & 7) << 1 | (host & 1));
}
constexpr uint8_t nic_ctrl_op(uint8_t kind, uint8_t port) {
  return static_cast<uint8_t>(kNicOpCtrl | (kind & 0x1F) << 1 | (port & 1));
}

}  // namespace sf::fuzz
