// copy_from_chain: the payload bytes [off, off + n) of a (possibly chained)
// received mbuf into MR memory, one memcpy per segment. Replaces
// rte_pktmbuf_read on the receive path: DPDK's out-of-line
// __rte_pktmbuf_read copies a multi-segment range with the rte_memcpy the
// shared library was built with (SSE), 4-5x the instructions of the C
// library's memcpy for a 4 KiB frame of 2 KiB segments. Frames reach the
// QP only after icrc_verify_mbuf walked the same chain up to the ICRC, which
// lies behind the payload, so the range is there; a shorter chain would stop
// the copy and return false.
//
// copy_bytes: every payload copy of the NIC goes through it (receive: mbuf
// -> MR; transmit, ChainWriter in chain_writer.h: MR -> mbuf). glibc's memcpy
// switches to `rep movsb` above ~2 KiB, and on this AMD CPU (Zen 3) that
// runs 15-30x slower (4 KiB: ~2.3 us instead of ~0.15 us) whenever
// (dst - src) mod 4096 is 1..31, which an MR offset and an mbuf's payload
// offset hit for a fraction of frames once a 4 KiB frame is one segment
// (sf-nic --mbuf-size). Copying in pieces of at most 2 KiB keeps glibc on its
// vector loop: no slow case (the aliasing offsets cost ~1.6x, not 15x), and
// no slower elsewhere (measured: docs/performance.md, "copy_bytes").
#pragma once

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace sf::nic::rc {

inline constexpr uint32_t kCopyPieceBytes = 2048;

inline void copy_bytes(uint8_t* dst, const uint8_t* src, uint32_t n) {
  while (n > kCopyPieceBytes) {
    std::memcpy(dst, src, kCopyPieceBytes);
    dst += kCopyPieceBytes;
    src += kCopyPieceBytes;
    n -= kCopyPieceBytes;
  }
  std::memcpy(dst, src, n);
}

[[nodiscard]] inline bool copy_from_chain(const rte_mbuf* m, uint32_t off, uint32_t n, uint8_t* dst) {
  const rte_mbuf* s = m;
  while (s != nullptr && off >= s->data_len) {
    off -= s->data_len;
    s = s->next;
  }
  if (s != nullptr && off + n <= s->data_len) [[likely]] {
    // The payload in one segment (a one-mbuf frame, or a zero-copy frame's MR segment).
    copy_bytes(dst, rte_pktmbuf_mtod_offset(s, const uint8_t*, off), n);
    return true;
  }
  while (n > 0 && s != nullptr) {
    const uint32_t k = std::min<uint32_t>(n, s->data_len - off);
    copy_bytes(dst, rte_pktmbuf_mtod_offset(s, const uint8_t*, off), k);
    dst += k;
    n -= k;
    off = 0;
    s = s->next;
  }
  return n == 0;
}

}  // namespace sf::nic::rc
