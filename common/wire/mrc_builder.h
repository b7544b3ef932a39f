// Builders for MRC frames (mrc.h) over Eth[/802.1Q] / IPv4 | IPv6 | SRv6
// (IPv6-in-IPv6, uSID outer destination: srv6.h) / UDP: data packets (BTH,
// METH, RETH, [ImmDt], payload), transport ACK, SACK (+ CC state), NACK,
// reliability probe, endpoint request / response. Like build_roce_frame():
// a caller buffer, no allocation, every length, IPv4 checksum(s), UDP
// checksum 0, PadCnt, zero pad and the ICRC (RoCEv2's, over the inner IP
// header for SRv6).
#pragma once

#include <cstdint>
#include <span>

#include "common/wire/frame_builder.h"
#include "common/wire/mrc.h"

namespace sf::wire {

struct MrcBthSpec {
  uint32_t dest_qp = 0;  // 24 bits; endpoint ops always get kMrcEndpointQpn
  // Data: the packet's PSN. ACK / SACK / NACK: the CACK. Probe: the sender's
  // next PSN (a probe consumes none). Endpoint ops: always 0.
  Psn psn;
  bool ack_req = false;
  bool se = false;
  uint16_t pkey = Bth::kDefaultPkey;
  bool fecn = false;
  bool becn = false;
};

struct MethSpec {  // LAST comes from the op
  bool rtx = false;
  bool ts_valid = false;
  uint16_t rqmsn = 0;
  uint32_t msn = 0;
  uint32_t msg_offset = 0;
  uint32_t ev = 0;
  uint32_t tx_ts = 0;
};

struct SackSpec {
  MrcSkip skip = MrcSkip::kNone;
  bool probe_response = false;
  bool ce = false;
  int16_t ack_psn_offset = 0;  // or the probe id (probe_response)
  uint32_t ev = 0;
  int16_t sack_offset = 1;
  uint16_t mpr = 0;
  uint64_t bitmap = 0;
};

struct MrcCcStateSpec {
  uint32_t ts_echo = 0;
  uint32_t rcvd_bytes = 0;
  uint16_t ecn_count = 0;
  uint16_t ooo_count = 0;
  uint8_t rcv_cwnd_pen = 0;  // 0..127
  MrcCcType cc_type = MrcCcType::kNone;
  uint16_t service_time = 0;
};

struct NackSpec {
  MrcNackReason reason = MrcNackReason::kTrimmed;
  bool ce = false;
  bool rtx = false;
  uint8_t vendor_code = 0;
  uint32_t ev = 0;
  Psn nack_psn;
  uint32_t ts_echo = 0;
};

struct ProbeSpec {
  uint16_t probe_id = 0;
  uint32_t ev = 0;
  uint32_t tx_ts = 0;
};

struct EndpointRequestSpec {
  MrcEndpointOp op = MrcEndpointOp::kEvProbe;
  uint8_t num_ports = 0;  // 0..32
  uint16_t request_id = 0;
  uint32_t ev = 0;
  uint32_t port_status_mask = 0;
  uint32_t tx_ts = 0;
};

struct EndpointResponseSpec {
  MrcEndpointOp op = MrcEndpointOp::kEvProbe;
  MrcEndpointStatus status = MrcEndpointStatus::kOk;
  uint16_t request_id = 0;
  uint32_t ev = 0;
  uint32_t port_status_mask = 0;
  uint32_t ts_echo = 0;
};

// One frame; only the headers mrc_layout(op) has are written.
struct MrcFrameSpec {
  L2Spec l2;
  L3Spec l3 = Ipv4Spec{};
  uint16_t udp_src_port = 0xC000;  // entropy
  MrcWireConfig wire{};            // UDP destination port and opcode base
  MrcOp op = MrcOp::kWriteOnly;
  MrcBthSpec bth;
  MethSpec meth;
  uint64_t reth_va = 0;            // address of this packet's first payload byte
  uint32_t reth_rkey = 0;
  uint32_t reth_dma_length = 0;    // the whole message's length
  uint32_t immdt = 0;
  uint8_t aeth_syndrome = Aeth::make_syndrome(AethType::kAck, kAethCreditUnlimited);
  uint32_t aeth_msn = 0;
  SackSpec sack;
  MrcCcStateSpec cc;
  NackSpec nack;
  ProbeSpec probe;
  EndpointRequestSpec ep_request;
  EndpointResponseSpec ep_response;
};

// Bytes the frame takes (headers + payload + pad + ICRC); 0 when the wire
// config is invalid.
std::size_t mrc_frame_bytes(const MrcFrameSpec& spec, std::size_t payload_bytes);

// All headers with every length and PadCnt final, no payload / pad / ICRC
// (for mbuf chains: append payload + pad + 4 bytes, then icrc_store_mbuf).
// Errors: kUnknownOpcode (invalid wire config), kPayloadNotAllowed (payload
// on a non-data op), kTooLong, kBufferTooSmall.
BuildResult build_mrc_headers(std::span<uint8_t> out, const MrcFrameSpec& spec, std::size_t payload_bytes);

// A complete frame: headers, payload, zero pad, ICRC.
BuildResult build_mrc_frame(std::span<uint8_t> out, const MrcFrameSpec& spec, std::span<const uint8_t> payload);

}  // namespace sf::wire
