// Qp transmit side: request packets (MTU segmentation, opcode sequence,
// RETH/ImmDt placement, AckReq coalescing), read responses, and the
// ACK / NAK / RNR NAK / CNP control frames. Frames are built straight into
// mbufs from the pool, chained when a frame exceeds one mbuf's data room,
// payload copied from MR memory, or with HostConfig::tx_zero_copy attached as
// external segments pointing into it; ICRC computed over the bytes as they
// are copied / attached (one pass). Every payload piece is checked by
// MrTable::check in the packet that reads it (request SGEs against their
// lkeys, READ responses against the READ's rkey): an MR deregistered after
// post_send or after the READ request was accepted is never read.
#include <algorithm>
#include <cstring>

#include "common/node.h"
#include "common/wire/icrc.h"
#include "common/wire/int_shim.h"
#include "common/wire/mbuf_icrc.h"
#include "nic/mrc/transport.h"
#include "nic/rc/chain_copy.h"
#include "nic/rc/chain_writer.h"
#include "nic/rc/qp.h"

namespace sf::nic::rc {

using verbs::QpState;
using verbs::WcStatus;
using verbs::WrOpcode;
using wire::Opcode;

namespace {

wire::IcrcLayout layout_of(const wire::RoceFrameSpec& spec) {
  if (std::holds_alternative<wire::Ipv4Spec>(spec.l3)) return {wire::IpVersion::kV4, 20};
  return {wire::IpVersion::kV6, 40};
}

Opcode send_opcode(bool first, bool last, bool imm) {
  if (first && last) return imm ? Opcode::kRcSendOnlyImm : Opcode::kRcSendOnly;
  if (first) return Opcode::kRcSendFirst;
  if (last) return imm ? Opcode::kRcSendLastImm : Opcode::kRcSendLast;
  return Opcode::kRcSendMiddle;
}

Opcode write_opcode(bool first, bool last, bool imm) {
  if (first && last) return imm ? Opcode::kRcWriteOnlyImm : Opcode::kRcWriteOnly;
  if (first) return Opcode::kRcWriteFirst;
  if (last) return imm ? Opcode::kRcWriteLastImm : Opcode::kRcWriteLast;
  return Opcode::kRcWriteMiddle;
}

}  // namespace

rte_mbuf* Qp::build(const TxFields& f, const uint8_t* payload_contig, const SendWqe* wqe, uint32_t offset,
                    uint32_t payload_bytes) {
  rte_mbuf* m = rte_pktmbuf_alloc(env_.pool);
  if (m == nullptr) {
    ++ctr_.alloc_failures;
    return nullptr;
  }
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  uint32_t header_bytes = 0;
  // The ICRC so far and the first header byte it has not seen: from the
  // cache entry's saved state (only AckReq, PSN and the ext headers left to
  // fold), else begun over the whole masked block.
  wire::IcrcAccumulator acc;
  uint32_t icrc_from = 0;
  // The ICRC covers the inner IPv6 header of an SRv6 (IPv6-in-IPv6) frame,
  // as build_roce_frame and the parser have it.
  const uint32_t ip_off = wire::EthHeader::kSize + (spec_.l2.vlan ? wire::VlanTag::kSize : 0) +
                          (std::holds_alternative<wire::Srv6Spec>(spec_.l3) ? wire::Ipv6Header::kSize : 0);
  const wire::IcrcLayout layout = layout_of(spec_);
  int slot = tx_hdr_.find(f.opcode, f.se, payload_bytes);
  if (slot >= 0 && tx_hdr_.bytes(slot) <= rte_pktmbuf_tailroom(m)) {
    // Like an earlier packet of this kind: its headers, this PSN, AckReq, RETH, immediate.
    tx_hdr_.apply(slot, data, f);
    header_bytes = tx_hdr_.bytes(slot);
  } else {
    const wire::RoceFrameSpec spec = f.spec(spec_);
    const wire::BuildResult r = wire::build_roce_headers({data, rte_pktmbuf_tailroom(m)}, spec, payload_bytes);
    if (!r.ok()) {
      rte_pktmbuf_free(m);
      ++ctr_.alloc_failures;
      return nullptr;
    }
    header_bytes = static_cast<uint32_t>(r.header_bytes);
    slot = TxHeaderCache::cacheable(f.opcode) &&
                   tx_hdr_.store(data, header_bytes, f.opcode, f.se, payload_bytes, ip_off, layout)
               ? tx_hdr_.find(f.opcode, f.se, payload_bytes)
               : -1;
  }
  m->data_len = static_cast<uint16_t>(header_bytes);
  m->pkt_len = header_bytes;
  if (f.int_flag) [[unlikely]] {
    const uint32_t bth_off = ip_off + layout.ip_header_bytes + wire::UdpHeader::kSize;
    wire::set_bth_int_flag(*reinterpret_cast<wire::Bth*>(data + bth_off), true);
  }
  if (slot >= 0) {
    acc = tx_hdr_.icrc(slot);
    icrc_from = tx_hdr_.icrc_resume_offset(slot);
  } else {
    acc.begin({data + ip_off, header_bytes - ip_off}, layout);
    icrc_from = ip_off + layout.masked_bytes();
  }
  ChainWriter cw(env_.pool, m);
  cw.fold(&acc, data + icrc_from, header_bytes - icrc_from);
  bool ok = true;
  if (payload_contig != nullptr) {
    ok = cw.append(payload_contig, payload_bytes, &acc);
  } else if (wqe != nullptr) {
    uint32_t skip = offset;
    uint32_t left = payload_bytes;
    for (uint32_t i = 0; i < wqe->num_sge && left > 0 && ok; ++i) {
      const verbs::Sge& s = wqe->sge[i];
      if (skip >= s.length) {
        skip -= s.length;
        continue;
      }
      const uint32_t k = std::min(s.length - skip, left);
      const auto* src = reinterpret_cast<const uint8_t*>(s.addr) + skip;
      const verbs::Mr* mr = nullptr;
      if (env_.mr_shinfo != nullptr && k >= kZeroCopyMinBytes &&
          env_.mrs->check(s.lkey, false, pd_, s.addr + skip, k, 0, &mr) == verbs::MrCheck::kOk) {
        ok = cw.attach(src, k, &env_.mr_shinfo[mr->handle], &acc);
      } else {
        ok = cw.append(src, k, &acc);
      }
      skip = 0;
      left -= k;
    }
  }
  const uint32_t pad = (4 - (payload_bytes & 3u)) & 3u;
  if (ok && pad > 0) ok = cw.append(nullptr, pad, &acc);
  if (ok) {
    cw.flush();
    ok = cw.append_icrc(acc.value());
  }
  if (!ok) {
    rte_pktmbuf_free(m);
    ++ctr_.alloc_failures;
    return nullptr;
  }
  return m;
}

uint32_t Qp::reads_in_flight() const {
  uint32_t n = 0;
  for (uint64_t i = sq_done_; i < sq_next_; ++i) n += sq_at(i).opcode == WrOpcode::kRdmaRead ? 1u : 0u;
  return n;
}

bool Qp::has_data(TimeNs now) const {
  if (!in_use_) return false;
  if (mrc_ != nullptr) [[unlikely]] return mrc_->has_data(now);
  if (read_count_ > 0 && (state_ == QpState::kRtr || state_ == QpState::kRts)) return true;
  if (state_ != QpState::kRts || sq_next_ == sq_posted_) return false;
  if (rnr_until_ != TimeNs::max() && now < rnr_until_) return false;
  const SendWqe& w = sq_at(sq_next_);
  if (w.local_err != WcStatus::kSuccess) return true;  // make_data moves the QP to ERR
  const Psn psn = w.first_psn + tx_pkt_;
  if (Psn::diff(psn, acked_psn_) > static_cast<int32_t>(env_.cfg->max_unacked_psns)) return false;
  if (w.opcode == WrOpcode::kRdmaRead && tx_pkt_ == 0 &&
      reads_in_flight() >= std::max<uint32_t>(1, attr_.max_rd_atomic)) {
    return false;
  }
  // A fenced WR starts only when every earlier READ has completed (a later
  // WRITE may otherwise be executed before the READ's data is read, IBA 10.8.3).
  if (w.fence && tx_pkt_ == 0 && reads_in_flight() > 0) return false;
  // The ACK-driven CC's window (docs/cc.md "RC integration"): the packet
  // must fit in it, unless nothing is in flight (one packet always may go).
  if (cc_window_ != kNoWindow && cc_inflight_ != 0 && cc_inflight_ + next_request_bytes(w) > cc_window_) {
    return false;
  }
  return true;
}

rte_mbuf* Qp::make_data(TimeNs now) {
  if (mrc_ != nullptr) [[unlikely]] {
    rte_mbuf* mm = mrc_->make_data(now);
    check_overrun(now);
    return mm;
  }
  rte_mbuf* m = read_count_ > 0 ? make_read_response(now) : make_request(now);
  check_overrun(now);
  return m;
}

bool Qp::sges_readable(const SendWqe& w, uint32_t off, uint32_t n) const {
  uint32_t skip = off;
  for (uint32_t i = 0; i < w.num_sge && n > 0; ++i) {
    const verbs::Sge& s = w.sge[i];
    if (skip >= s.length) {
      skip -= s.length;
      continue;
    }
    const uint32_t k = std::min(s.length - skip, n);
    if (env_.mrs->check(s.lkey, false, pd_, s.addr + skip, k, 0) != verbs::MrCheck::kOk) return false;
    n -= k;
    skip = 0;
  }
  return true;
}

rte_mbuf* Qp::make_request(TimeNs now) {
  SendWqe& w = sq_at(sq_next_);
  if (w.local_err != WcStatus::kSuccess) {
    to_error(w.local_err, sq_next_, WcStatus::kWrFlushErr, now);
    return nullptr;
  }
  const Psn psn = w.first_psn + tx_pkt_;
  TxFields f;
  f.psn = psn;
  rte_mbuf* m = nullptr;
  Psn end;
  bool ackreq_sent = false;
  if (w.opcode == WrOpcode::kRdmaRead) {
    const uint32_t off = std::min(w.read_done_bytes, w.length);
    f.opcode = Opcode::kRcReadRequest;
    f.ack_req = true;
    f.reth_va = w.remote_addr + off;
    f.reth_rkey = w.rkey;
    f.reth_dma_length = w.length - off;
    m = build(f, nullptr, nullptr, 0, 0);
    if (m == nullptr) return nullptr;
    if (cc_acks_) cc_track_tx(psn, 0, now);
    end = w.last_psn() + 1;
    ++sq_next_;
    tx_pkt_ = 0;
    ackreq_sent = true;
  } else {
    const uint32_t off = tx_pkt_ * mtu_;
    const uint32_t n = std::min(mtu_, w.length - off);
    const bool first = tx_pkt_ == 0;
    const bool last = tx_pkt_ + 1 == w.npkts;
    const bool is_write = w.opcode == WrOpcode::kRdmaWrite || w.opcode == WrOpcode::kRdmaWriteWithImm;
    const bool imm = w.opcode == WrOpcode::kRdmaWriteWithImm || w.opcode == WrOpcode::kSendWithImm;
    f.opcode = is_write ? write_opcode(first, last, imm) : send_opcode(first, last, imm);
    f.se = w.solicited && last;
    // An ACK-driven CC asks for an ACK per packet (its RTT and delivery
    // samples; a window-limited QP would otherwise wait for the timeout).
    f.ack_req = last || cc_acks_ || pkts_since_ackreq_ + 1 >= env_.cfg->ack_req_every_pkts;
    if (is_write && first) {
      f.reth_va = w.remote_addr;
      f.reth_rkey = w.rkey;
      f.reth_dma_length = w.length;
    }
    f.imm = w.imm;
    // The payload's SGE pieces checked again before a byte is read: the MR
    // may have been deregistered (its buffer freed) since post_send.
    if (!sges_readable(w, off, n)) {
      to_error(WcStatus::kLocProtErr, sq_next_, WcStatus::kWrFlushErr, now);
      return nullptr;
    }
    f.int_flag = cc_int_;
    m = build(f, nullptr, &w, off, n);
    if (m == nullptr) return nullptr;
    if (cc_int_) [[unlikely]] open_int(m);
    if (cc_acks_) cc_track_tx(psn, n, now);
    end = psn + 1;
    ackreq_sent = f.ack_req;
    if (last) {
      ++sq_next_;
      tx_pkt_ = 0;
    } else {
      ++tx_pkt_;
    }
  }
  pkts_since_ackreq_ = ackreq_sent ? 0 : pkts_since_ackreq_ + 1;
  if (psn.before(sent_next_psn_)) ++ctr_.tx_retransmit_pkts;
  if (end.after(sent_next_psn_)) sent_next_psn_ = end;
  ++ctr_.tx_data_pkts;
  ctr_.tx_data_bytes += m->pkt_len;
  if (retx_deadline_ == TimeNs::max()) arm_retx(now);
  // Ran dry with the window open: the rate samples of what is in flight
  // understate the path (BBR ignores them unless they raise its estimate).
  if (cc_acks_ && sq_next_ == sq_posted_ && cc_inflight_ < cc_window_) cc_rs_.on_app_limited(cc_inflight_);
  return m;
}

rte_mbuf* Qp::make_read_response(TimeNs now) {
  ReadCtx& c = reads_[read_head_];
  const uint32_t off = c.sent_bytes;
  const uint32_t n = std::min(mtu_, c.length - off);
  const bool first = off == 0;
  const bool last = off + n == c.length;
  // Checked again per response: the MR may have been deregistered (or the
  // QP's rights changed) since the request was checked. The requester gets a
  // remote access error NAK for this response's PSN; the QP goes to ERR.
  uint64_t local = 0;
  if (n > 0 && ((attr_.qp_access_flags & verbs::kAccessRemoteRead) == 0 ||
                env_.mrs->check(c.rkey, true, pd_, c.va + off, n, verbs::kAccessRemoteRead, nullptr, &local) !=
                    verbs::MrCheck::kOk)) {
    // Sent in this data slot: the host asked for a frame now and has already
    // served the control frames of this call.
    nak(wire::NakCode::kRemoteAccessError, c.psn, true, WcStatus::kWrFlushErr, now);
    return make_ctrl(now);
  }
  TxFields f;
  f.psn = c.psn;
  f.opcode = first && last ? Opcode::kRcReadResponseOnly
                    : first       ? Opcode::kRcReadResponseFirst
                    : last        ? Opcode::kRcReadResponseLast
                                  : Opcode::kRcReadResponseMiddle;
  f.aeth_syndrome = wire::Aeth::make_syndrome(wire::AethType::kAck, wire::kAethCreditUnlimited);
  f.aeth_msn = msn_;
  rte_mbuf* m = build(f, n > 0 ? reinterpret_cast<const uint8_t*>(local) : nullptr, nullptr, 0, n);
  if (m == nullptr) return nullptr;
  c.sent_bytes += n;
  c.psn += 1;
  if (last) {
    read_head_ = (read_head_ + 1) % kMaxRdAtomic;
    --read_count_;
  }
  ++ctr_.tx_data_pkts;
  ctr_.tx_data_bytes += m->pkt_len;
  return m;
}

rte_mbuf* Qp::make_ctrl(TimeNs now) {
  if (mrc_ != nullptr) [[unlikely]] return mrc_->make_ctrl(now);
  if (!has_ctrl()) return nullptr;
  wire::RoceFrameSpec spec = spec_;
  spec.bth.opcode = Opcode::kRcAck;
  bool is_cnp = false;
  const bool send_nak = nak_pending_ && read_count_ == 0;
  const bool send_ack = !send_nak && ack_pending_ && read_count_ == 0;
  if (send_nak) {
    spec.bth.psn = nak_psn_;
    spec.ext.aeth_syndrome = nak_syndrome_;
  } else if (send_ack) {
    spec.bth.psn = epsn_ - 1;
    spec.ext.aeth_syndrome = wire::Aeth::make_syndrome(wire::AethType::kAck, wire::kAethCreditUnlimited);
  } else {
    is_cnp = true;
    if (auto* v4 = std::get_if<wire::Ipv4Spec>(&spec.l3)) {
      v4->dscp = env_.cfg->cnp_dscp;
      v4->ecn = wire::Ecn::kNotEct;
    } else if (auto* v6 = std::get_if<wire::Ipv6Spec>(&spec.l3)) {
      v6->dscp = env_.cfg->cnp_dscp;
      v6->ecn = wire::Ecn::kNotEct;
    }
  }
  spec.ext.aeth_msn = msn_;
  rte_mbuf* m = rte_pktmbuf_alloc(env_.pool);
  if (m == nullptr) {
    ++ctr_.alloc_failures;
    return nullptr;
  }
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const wire::BuildResult r = is_cnp ? wire::build_cnp_frame({data, rte_pktmbuf_tailroom(m)}, spec)
                                     : wire::build_roce_frame({data, rte_pktmbuf_tailroom(m)}, spec, {});
  if (!r.ok()) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  m->data_len = static_cast<uint16_t>(r.frame_bytes);
  m->pkt_len = static_cast<uint32_t>(r.frame_bytes);
  if (send_ack && int_rx_pending_) [[unlikely]] echo_int(m, now);
  if (send_nak) {
    nak_pending_ = false;
    const auto t = static_cast<wire::AethType>((nak_syndrome_ >> 5) & 3u);
    if (t == wire::AethType::kRnrNak) {
      ++ctr_.tx_rnr_naks;
    } else {
      ++ctr_.tx_naks;
    }
  } else if (send_ack) {
    ack_pending_ = false;
    ++ctr_.tx_acks;
  } else {
    cnp_pending_ = false;
    ++ctr_.tx_cnps;
  }
  return m;
}

void Qp::on_departed(uint32_t frame_bytes, TimeNs now) {
  if (rate_.bps() == 0) {
    pace_next_ = now;
  } else {
    // pace_next_ is this frame's scheduled departure (file_departure).
    TimeNs gap = rate_.tx_time(wire_bytes(frame_bytes));
    if (pace_per_port_) [[unlikely]] gap = gap * mrc_pace_planes();  // this port's share of the QP's rate
    // From the bucket: a whole gap overdue when filed (with B = 0 the
    // schedule is never before the filing time).
    if (pace_next_ + gap <= pace_filed_) ctr_.pace_burst_bytes += frame_bytes;
    const TimeNs next = pace_next_ + gap;
    const TimeNs floor = now - pace_burst_ns_;
    if (next < floor) {
      ctr_.pace_lost_ns += static_cast<uint64_t>((floor - next).ns());
      pace_next_ = floor;
    } else {
      pace_next_ = next;
    }
  }
  cc_on_tx_bytes(frame_bytes, now);
}

}  // namespace sf::nic::rc
