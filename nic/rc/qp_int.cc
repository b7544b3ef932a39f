// HPCC's in-band telemetry at the RC QP (docs/cc.md "RC integration", the
// shim: common/wire/int_shim.h, docs/wire-formats.md "INT shim"), also
// Swift's remote delay (the responder's turnaround in the echo, cc_params
// remote_delay; docs/cc.md "Endpoint delay"):
//  * requester of an HPCC QP: every request frame carries the BTH INT flag
//    (set by build() before the ICRC) and an empty shim (open_int) that
//    INT-enabled switches append their hop records to;
//  * responder: the records of the latest request (the host strips the shim
//    and hands them over, set_rx_int) are echoed in the next ACK (echo_int);
//  * requester: the echoed records reach HPCC in the ACK's AckEvent
//    (cc_feedback, qp_cc.cc).
// No allocation but an mbuf segment when a chained frame's last segment has
// no room for the shim's 4 bytes.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/wire/icrc.h"
#include "common/wire/int_shim.h"
#include "common/wire/mbuf_icrc.h"
#include "nic/rc/qp.h"

namespace sf::nic::rc {

namespace {

// Writes n bytes at frame offset `off` of a chain.
void write_chain(rte_mbuf* m, uint32_t off, const uint8_t* src, uint32_t n) {
  for (rte_mbuf* s = m; s != nullptr && n > 0; s = s->next) {
    if (off >= s->data_len) {
      off -= s->data_len;
      continue;
    }
    const uint32_t k = std::min<uint32_t>(s->data_len - off, n);
    std::memcpy(rte_pktmbuf_mtod_offset(s, uint8_t*, off), src, k);
    src += k;
    n -= k;
    off = 0;
  }
}

// The IP / UDP lengths of a frame whose headers are in its first segment grow by `d`.
void grow_lengths(const wire::FrameInfo& fi, uint16_t d) {
  if (fi.outer_ipv6 != nullptr) {
    auto* o = const_cast<wire::Ipv6Header*>(fi.outer_ipv6);
    o->payload_length.set(static_cast<uint16_t>(o->payload_length.value() + d));
  }
  if (fi.ipv4 != nullptr) {
    auto* h = const_cast<wire::Ipv4Header*>(fi.ipv4);
    h->total_length.set(static_cast<uint16_t>(h->total_length.value() + d));
    wire::ipv4_set_checksum(*h);
  } else if (fi.ipv6 != nullptr) {
    auto* h = const_cast<wire::Ipv6Header*>(fi.ipv6);
    h->payload_length.set(static_cast<uint16_t>(h->payload_length.value() + d));
  }
  auto* u = const_cast<wire::UdpHeader*>(fi.udp);
  u->length.set(static_cast<uint16_t>(u->length.value() + d));
}

}  // namespace

void Qp::open_int(rte_mbuf* m) {
  const wire::FrameInfo fi = wire::parse_mbuf(m);
  const wire::IntFrameRef ref = wire::int_frame_ref(fi);
  if (fi.ok() && ref.ip_version != 0) {
    if (m->nb_segs == 1) {
      uint32_t len = m->data_len;
      const std::span<uint8_t> buf(rte_pktmbuf_mtod(m, uint8_t*), m->data_len + rte_pktmbuf_tailroom(m));
      if (wire::int_open(buf, len, ref, wire::kIntDefaultMaxHops, cc_int_open_flags_) == wire::IntStatus::kOk) {
        m->data_len = static_cast<uint16_t>(len);
        m->pkt_len = len;
        ++cc_stats_.int_opened;
        return;
      }
    } else if (fi.udp != nullptr && fi.udp->length.value() + wire::IntTail::kSize <= 0xFFFF) {
      // Chained (payload in further segments): the tail takes the ICRC's
      // place, the ICRC moves 4 bytes on, the lengths in the head grow.
      const uint32_t end = m->pkt_len;
      uint8_t icrc[wire::kIcrcBytes];
      const void* p = rte_pktmbuf_read(m, end - wire::kIcrcBytes, wire::kIcrcBytes, icrc);
      if (p != icrc) std::memcpy(icrc, p, wire::kIcrcBytes);
      rte_mbuf* last = rte_pktmbuf_lastseg(m);
      rte_mbuf* extra = nullptr;
      if (rte_pktmbuf_tailroom(last) < wire::kIcrcBytes) {
        extra = rte_pktmbuf_alloc(env_.pool);
        if (extra == nullptr) {
          ++ctr_.alloc_failures;
        }
      }
      if (rte_pktmbuf_tailroom(last) >= wire::kIcrcBytes || extra != nullptr) {
        const wire::IntTail tail{wire::IntTail::kMagic, cc_int_open_flags_, 0, wire::kIntDefaultMaxHops};
        write_chain(m, end - wire::kIcrcBytes, reinterpret_cast<const uint8_t*>(&tail), wire::IntTail::kSize);
        if (extra != nullptr) {
          last->next = extra;
          ++m->nb_segs;
          last = extra;
        }
        std::memcpy(rte_pktmbuf_mtod_offset(last, uint8_t*, last->data_len), icrc, wire::kIcrcBytes);
        last->data_len = static_cast<uint16_t>(last->data_len + wire::kIcrcBytes);
        m->pkt_len += wire::kIcrcBytes;
        grow_lengths(fi, static_cast<uint16_t>(wire::IntTail::kSize));
        ++cc_stats_.int_opened;
        return;
      }
    }
  }
  // No room for the shim: the frame goes without it (flag cleared, ICRC again).
  ++cc_stats_.int_unopened;
  if (fi.ok() && fi.bth != nullptr) {
    wire::set_bth_int_flag(*const_cast<wire::Bth*>(fi.bth), false);
    wire::icrc_store_mbuf(m, fi);
  }
}

void Qp::take_rx_int(const wire::IntHop* hops, uint32_t n, uint8_t flags, TimeNs now) {
  const uint32_t k = std::min<uint32_t>(n, wire::kIntMaxHops);
  std::copy(hops, hops + k, int_rx_hops_.begin());
  int_rx_n_ = static_cast<uint8_t>(k);
  int_rx_flags_ = flags;
  int_rx_pending_ = true;
  int_rx_at_ = now;
}

void Qp::echo_int(rte_mbuf* m, TimeNs now) {
  int_rx_pending_ = false;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const wire::FrameInfo fi = wire::parse_frame({data, m->data_len});
  if (!fi.ok() || fi.bth == nullptr || m->nb_segs != 1) return;
  wire::set_bth_int_flag(*const_cast<wire::Bth*>(fi.bth), true);
  const std::span<uint8_t> buf(data, m->data_len + rte_pktmbuf_tailroom(m));
  wire::icrc_store(buf.first(m->data_len), fi);
  uint32_t len = m->data_len;
  const uint8_t overflow = int_rx_flags_ & wire::IntTail::kFlagOverflow;
  // Swift's endpoint delay (t3 - t2): from the request that asked for it
  // reaching this QP to its ACK being built, ns, saturated at 2^32 - 1.
  std::optional<uint32_t> turnaround;
  if ((int_rx_flags_ & wire::IntTail::kFlagTurnaround) != 0) {
    turnaround = static_cast<uint32_t>(std::clamp<int64_t>((now - int_rx_at_).ns(), 0, UINT32_MAX));
  }
  if (wire::int_echo(buf, len, wire::int_frame_ref(fi), {int_rx_hops_.data(), int_rx_n_}, overflow, turnaround) !=
      wire::IntStatus::kOk) {
    // No room: sent without the echo (flag off, ICRC again).
    wire::set_bth_int_flag(*const_cast<wire::Bth*>(fi.bth), false);
    wire::icrc_store(buf.first(m->data_len), fi);
    return;
  }
  m->data_len = static_cast<uint16_t>(len);
  m->pkt_len = len;
  ++cc_stats_.int_echoed;
}

}  // namespace sf::nic::rc
