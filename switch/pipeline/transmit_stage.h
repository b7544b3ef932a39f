// Transmit stage E's per-packet helpers (docs/architecture.md "Switch
// pipeline"): SwitchNode::transmit (switch_node_tx.cc) runs the scheduler over
// a port's egress queues (PortScheduler: strict + DWRR, repeat() while the
// same queue goes on), pops, releases the cells and hands the frames to the
// driver; these are the parts of that loop with their own state or logic:
// - ReleaseBatch: the cells of consecutive packets of one (queue, ingress
//   port, PG) released in one Mmu::release_sum instead of one release each;
// - int_candidate: whether a frame dequeued from an INT queue may ask for a
//   hop record, from a few header loads (the INT stage, int_stage.h,
//   parses what this does not decide).
// Plain memory; inline so that the transmit loop compiles into one loop.
#pragma once

#include <rte_mbuf.h>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "common/wire/int_shim.h"
#include "common/wire/ipv4.h"
#include "common/wire/udp.h"
#include "switch/mmu/mmu.h"
#include "switch/pipeline/credit_link.h"
#include "switch/pipeline/egress_queue.h"
#include "switch/qos/scheduler.h"

namespace sf::sw {

// A pending release of summed tickets, all of one (queue, ingress port, PG)
// of the transmitting port. The caller opens it after releasing a packet
// itself (with its PFC update) when the PFC update of that PG is a no-op
// and would stay one (release only lowers the PG's use and raises its
// limit), adds the tickets of the packets that follow with the same key,
// and flushes it before anything that reads the MMU.
class ReleaseBatch {
 public:
  bool open() const { return q_ >= 0; }
  // Whether a packet of queue q from (in, pg) joins the open batch.
  bool joins(int q, uint16_t in, uint8_t pg) const { return q == q_ && in == in_ && pg == pg_; }
  void begin(int q, uint16_t in, uint8_t pg) {
    q_ = q;
    in_ = in;
    pg_ = pg;
  }
  void add(const Ticket& t) { sum_.add(t); }
  void add(const Mmu::TicketSum& s) { sum_.add(s); }
  bool open_on(int q) const { return q_ == q; }
  uint16_t in_port() const { return in_; }
  const Mmu::TicketSum& sum() const { return sum_; }  // added so far
  uint8_t pg() const { return pg_; }
  // Releases what was added (egress port `port`) and closes the batch.
  void flush(Mmu& mmu, uint16_t port) {
    if (q_ < 0) return;
    mmu.release_sum(in_, pg_, port, static_cast<uint8_t>(q_), sum_);
    sum_ = {};
    q_ = -1;
  }

 private:
  Mmu::TicketSum sum_;
  int q_ = -1;
  uint16_t in_ = 0;
  uint8_t pg_ = 0;
};

// The plain packets of a queue in a row, for SwitchNode::transmit's loop
// (switch_node_tx.cc): after it sent a packet of queue q with the release
// batch `rel` open, and nothing of the port (credit, watchdog, INT on q)
// nor any hold FIFO acts per packet, each further head of q that joins
// `rel` (same ingress port and PG), is not trimmed, holds no credit and that
// the scheduler's repeat() takes is popped, its ticket added to `rel` and
// its mbuf written to out[0, room): exactly what the loop does for it.
// Stops at the first head that would need more (or room, or repeat()
// false: changing nothing, so the loop's own repeat() decides alike).
// `head` is queue q's head bytes (kept up to date).
struct TxRun {
  uint16_t packets = 0;
  uint64_t bytes = 0;
};
// The tickets of tx_run's packets summed: four 16-bit fields widened and
// added as one vector (SSE4.1: two instructions a ticket), else field by field.
class TicketAcc {
 public:
#if defined(__SSE4_1__)
  void add(const Ticket& t) {
    acc_ = _mm_add_epi32(acc_, _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&t))));
  }
  Mmu::TicketSum sum() const {
    static_assert(sizeof(Mmu::TicketSum) == 16 && offsetof(Mmu::TicketSum, ing_shared) == 4 &&
                  offsetof(Mmu::TicketSum, ing_hdrm) == 8 && offsetof(Mmu::TicketSum, eg_shared) == 12 &&
                  offsetof(Ticket, ing_shared) == 2 && offsetof(Ticket, ing_hdrm) == 4 &&
                  offsetof(Ticket, eg_shared) == 6);
    Mmu::TicketSum s;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&s), acc_);
    return s;
  }

 private:
  __m128i acc_ = _mm_setzero_si128();
#else
  void add(const Ticket& t) { sum_.add(t); }
  Mmu::TicketSum sum() const { return sum_; }

 private:
  Mmu::TicketSum sum_;
#endif
};

[[gnu::always_inline]] inline TxRun tx_run(PortScheduler& sched, EgressQueue& eq, int q, ReleaseBatch& rel,
                                           uint32_t& head, rte_mbuf** out, uint16_t room) {
  TxRun r;
  if (!rel.open_on(q) || head == 0) return r;
  const uint16_t in = rel.in_port();
  // A head joins when its in_port is `in` and the word at its pg reads, in
  // the bytes of pg, trimmed and credit_vl: rel's PG, not trimmed, no credit.
  static_assert(std::endian::native == std::endian::little && offsetof(QueuedPkt, trimmed) == offsetof(QueuedPkt, pg) + 3 &&
                offsetof(QueuedPkt, credit_vl) == offsetof(QueuedPkt, pg) + 6 &&
                offsetof(QueuedPkt, pg) + 8 <= sizeof(QueuedPkt));
  constexpr uint64_t kJoinMask = 0x00FF'0000'FF00'00FFu;
  const uint64_t join = uint64_t{rel.pg()} | uint64_t{kNoCreditVl} << 48;
  TicketAcc sum;
  int64_t budget = sched.repeat_budget(q);  // repeat(), head by head
  const EgressQueue::Popped p = eq.pop_while(room, [&](const QueuedPkt& f, uint32_t k) {
    uint64_t w;
    std::memcpy(&w, &f.pg, sizeof w);
    if (f.in_port != in || (w & kJoinMask) != join) return false;
    const int64_t left = budget - int64_t{f.bytes};
    if (left < 0) return false;
    budget = left;
    sum.add(f.ticket);
    out[k] = f.mbuf;
    return true;
  });
  sched.repeat_settle(q, budget);
  head = eq.head_bytes();
  rel.add(sum.sum());
  r.packets = static_cast<uint16_t>(p.packets);
  r.bytes = p.bytes;
  return r;
}

// int_candidate(): the frame surely asks for no hop record (IPv4 with IHL 5
// or IPv6 that is not UDP to 4791, or whose BTH INT flag is clear); or
// parse it in full (IPv4 options, SRv6 and other IPv6 next headers, flooded
// copies with ip_version 0); any other value: the UDP header's offset.
inline constexpr uint16_t kIntNo = 0;
inline constexpr uint16_t kIntParse = 0xFFFF;
inline uint16_t int_candidate(const QueuedPkt& pkt) {
  const rte_mbuf* m = pkt.mbuf;
  const auto* d = rte_pktmbuf_mtod(m, const uint8_t*);
  const uint32_t l3 = pkt.l3_offset;
  uint32_t udp;
  if (pkt.ip_version == 4 && d[l3] == 0x45) {
    if (d[l3 + 9] != wire::kIpProtoUdp) return kIntNo;
    udp = l3 + 20;
  } else if (pkt.ip_version == 6 && d[l3 + 6] == wire::kIpProtoUdp) {
    udp = l3 + 40;
  } else {
    return kIntParse;
  }
  if (udp + 8 + 9 > m->data_len) return kIntParse;
  if ((d[udp + 2] << 8 | d[udp + 3]) != wire::kRoceUdpPort) return kIntNo;
  return (d[udp + 8 + 8] & wire::kBthIntFlag) != 0 ? static_cast<uint16_t>(udp) : kIntNo;
}

}  // namespace sf::sw
