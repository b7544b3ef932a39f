// Transmit stage E's INT hop record (int_stage.h; docs/switch.md "INT").
#include <rte_mbuf.h>

#include "common/wire/frame_parser.h"
#include "common/wire/int_shim.h"
#include "common/wire/udp.h"
#include "switch/pipeline/int_stage.h"

namespace sf::sw {

namespace {

// Every segment writable by us alone (a flooded copy shares its bytes).
bool writable(const rte_mbuf* m) {
  for (const rte_mbuf* s = m; s != nullptr; s = s->next) {
    if (!RTE_MBUF_DIRECT(s) || rte_mbuf_refcnt_read(s) != 1) return false;
  }
  return true;
}

}  // namespace

uint32_t int_insert(const QueuedPkt& pkt, uint16_t udp_offset, const IntHopPort& port, TimeNs now, PortCounters& ctr) {
  rte_mbuf* m = pkt.mbuf;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t head_bytes = m->data_len;
  wire::IntFrameRef ref;
  wire::FwdHeaders h;
  if (udp_offset != 0) {  // int_candidate found it (and the flag)
    ref.ip_version = pkt.ip_version;
    ref.ip_offset = pkt.l3_offset;
    ref.udp_offset = udp_offset;
  } else if (wire::parse_fwd(data, head_bytes, m->pkt_len, false, h)) {
    if (h.udp_offset == 0) return 0;
    ref = wire::int_frame_ref(h);
  } else {
    const wire::FrameInfo f = wire::parse_frame({data, head_bytes}, m->pkt_len);  // SRv6, IPv4 options ...
    if (f.udp == nullptr) return 0;
    ref = wire::int_frame_ref(f);
    if (ref.ip_version == 0) return 0;
  }
  // Only RoCEv2 / MRC (UDP 4791) frames carry a BTH where the flag is read.
  const uint32_t dport_off = ref.udp_offset + 2u;
  if (dport_off + 2 > head_bytes ||
      static_cast<uint16_t>(data[dport_off] << 8 | data[dport_off + 1]) != wire::kRoceUdpPort) {
    return 0;
  }
  uint64_t qlen_bytes = 0;
  for (const EgressQueue& q : port.queues) qlen_bytes += q.bytes();
  const wire::IntHop hop = wire::make_int_hop(now.ns(), port.tx_before_bytes, qlen_bytes, port.rate_bps);
  wire::IntStatus st;
  if (!writable(m)) {
    // Shared bytes: tell a frame that asks for INT from one that does not.
    const uint32_t bth = ref.udp_offset + 8u;
    if (bth + 9 > head_bytes || (data[bth + 8] & wire::kBthIntFlag) == 0) return 0;
    st = wire::IntStatus::kNoRoom;
  } else if (m->nb_segs == 1) {
    uint32_t len = head_bytes;
    st = wire::int_append_hop({data, size_t{head_bytes} + rte_pktmbuf_tailroom(m)}, len, ref, hop);
    if (st == wire::IntStatus::kOk) {
      m->data_len = static_cast<uint16_t>(len);
      m->pkt_len = len;
    }
  } else {
    rte_mbuf* last = rte_pktmbuf_lastseg(m);
    uint8_t* ld = rte_pktmbuf_mtod(last, uint8_t*);
    st = wire::int_append_hop_chain({data, head_bytes}, m->pkt_len, {ld, size_t{last->data_len} + rte_pktmbuf_tailroom(last)},
                                    last->data_len, ref, hop);
    if (st == wire::IntStatus::kOk) {
      last->data_len = static_cast<uint16_t>(last->data_len + wire::IntHop::kSize);
      m->pkt_len += wire::IntHop::kSize;
    }
  }
  switch (st) {
    case wire::IntStatus::kOk:
      ++ctr.int_records;
      ctr.int_bytes += wire::IntHop::kSize;
      return wire::IntHop::kSize;
    case wire::IntStatus::kFull: ++ctr.int_full; break;
    case wire::IntStatus::kNoRoom: ++ctr.int_no_room; break;
    case wire::IntStatus::kBadShim: ++ctr.int_bad_shim; break;
    default: break;  // no flag, an echo (ACK), not RoCE: nothing asked
  }
  return 0;
}

}  // namespace sf::sw
