// RoCEv2 ICRC (endpoint.md 1.7): CRC-32 (IEEE 802.3, reflected) over
//   8 x 0xFF | masked IP header | UDP (checksum masked) | BTH (byte 4 masked)
//   | ext headers | payload | pad,
// stored little-endian in the last 4 bytes of the UDP payload. One
// implementation for IPv4 and IPv6: only mask_icrc_headers() differs per
// version. The CRC is our VPCLMULQDQ folding kernel where the CPU has it,
// else ISA-L crc32_gzip_refl (icrc_crc32.h chooses; both continue across
// buffers and give identical values).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/wire/frame_parser.h"
#include "common/wire/icrc_crc32.h"
#include "common/wire/icrc_vpclmul.h"

namespace sf::wire {

// Where the masked header block starts and how long its IP part is.
struct IcrcLayout {
  IpVersion ip_version = IpVersion::kNone;
  uint32_t ip_header_bytes = 0;  // 20..60 for IPv4, 40 for IPv6
  // Bytes of IP + UDP + BTH that get masked (the prefix fed through the mask).
  constexpr uint32_t masked_bytes() const {
    return ip_header_bytes + static_cast<uint32_t>(UdpHeader::kSize + Bth::kSize);
  }
  // The leading bytes of the masked block that every request of one QP and
  // one kind (opcode, SE, payload length) shares: IP + UDP + BTH up to (not
  // including) the AckReq byte, after which come AckReq and PSN (per packet,
  // not masked). begin_prefix() stops here.
  constexpr uint32_t constant_bytes() const {
    return ip_header_bytes + static_cast<uint32_t>(UdpHeader::kSize + Bth::kOffPsn - 1);
  }
};
inline constexpr std::size_t kIcrcMaskedMaxBytes = 60 + UdpHeader::kSize + Bth::kSize;

namespace detail {
// OR masks equal to mask_icrc_headers() of the masked block, one row per
// layout: IPv4 with 5..15 header words, then IPv6 (built at compile time in
// icrc.cc; a table, not a function-local static, so begin() has no guard).
inline constexpr std::size_t kIcrcMaskV4Rows = 11;
using IcrcMaskTable = std::array<std::array<uint8_t, kIcrcMaskedMaxBytes>, kIcrcMaskV4Rows + 1>;
extern const IcrcMaskTable kIcrcMasks;

// The UDP source port's share of a begin_prefix() state (IcrcAccumulator::
// xor_udp_sport): per byte of the port (row 0 the high byte, row 1 the low),
// the CRC register that byte gives followed by the rest of the prefix as
// zeros (`reg`, the ISA-L state), and the same as a fold remainder
// (`fold` = reg x^-32 mod P, the VPCLMULQDQ state's top 32 bits). CRC is
// linear over GF(2), so XOR-ing these into a state changes the port the
// state has seen; the port's distance from the prefix's end is the same for
// every layout (UDP 8 + BTH up to AckReq 8 = 16 bytes from its first byte).
struct IcrcSportDelta {
  uint32_t reg;
  uint32_t fold;
};
using IcrcSportTable = std::array<std::array<IcrcSportDelta, 256>, 2>;
extern const IcrcSportTable kIcrcSportDelta;

inline bool icrc_layout_valid(IcrcLayout l) {
  if (l.ip_version == IpVersion::kV4) return l.ip_header_bytes >= Ipv4Header::kSize && l.ip_header_bytes <= 60;
  if (l.ip_version == IpVersion::kV6) return l.ip_header_bytes == Ipv6Header::kSize;
  return false;
}
// For a valid layout.
inline const uint8_t* icrc_mask_of(IcrcLayout l) {
  return l.ip_version == IpVersion::kV6 ? kIcrcMasks[kIcrcMaskV4Rows].data()
                                        : kIcrcMasks[(l.ip_header_bytes - Ipv4Header::kSize) / 4].data();
}
}  // namespace detail

// Layout of a parsed frame (ip_version kNone when the frame has no BTH).
IcrcLayout icrc_layout(const FrameInfo& fi);

// Overwrites the ICRC-variant fields of an IP|UDP|BTH block (laid out per
// `layout`, at least layout.masked_bytes() long) with all ones.
void mask_icrc_headers(std::span<uint8_t> block, IcrcLayout layout);

// Incremental ICRC: begin() with the first masked_bytes() bytes from the IP
// header on (masked on the fly, the input is not written), then update() with
// every following covered byte, in order and in any split; value() is the
// ICRC. The implementation (crc32_impl()) is fixed at begin().
class IcrcAccumulator {
 public:
  // Returns false (state unchanged) if headers.size() < layout.masked_bytes()
  // or the layout is invalid (begin_prefix: < layout.constant_bytes()).
  // Inline (as update() and value() are), so that a local accumulator's
  // state stays in a vector register from begin() to value() instead of
  // going through memory between the calls.
  bool begin(std::span<const uint8_t> headers, IcrcLayout layout) {
    if (!detail::icrc_layout_valid(layout)) return false;
    return begin_n(headers, layout, layout.masked_bytes());
  }
  // Like begin(), but over the first layout.constant_bytes() only (the rest
  // of the masked block, AckReq and PSN, is not masked: update() takes it
  // with the bytes after it). A copy of the accumulator after this is a
  // saved state: each copy continues on its own, with the same result bit
  // for bit as begin() over the whole block (TxHeaderCache keeps one per
  // kind of request header, so that a frame folds only from its PSN on).
  bool begin_prefix(std::span<const uint8_t> headers, IcrcLayout layout) {
    if (!detail::icrc_layout_valid(layout)) return false;
    return begin_n(headers, layout, layout.constant_bytes());
  }
  // On a state from begin_prefix() (nothing update()d since): the state
  // begin_prefix() gives for the same block with its UDP source port XOR-ed
  // with `delta` (two table loads and an XOR, instead of folding the masked
  // block again). An MRC QP's header cache keeps a state per kind of header
  // with the source port 0 and puts each packet's port (its entropy value)
  // in so.
  void xor_udp_sport(uint16_t delta) { xor_udp_sport_share(udp_sport_share(delta, impl_)); }
  // xor_udp_sport() in two halves, for a sender that keeps the share of
  // each source port it uses (an MRC QP: one 4-byte word per EV, instead of
  // two loads from the 4 KiB tables per packet): the 32 bits xor_udp_sport
  // (delta) puts into a state of implementation `impl`, and the XOR of such
  // a share into this state (whose impl() must be that `impl`).
  static uint32_t udp_sport_share(uint16_t delta, Crc32Impl impl) {
    const detail::IcrcSportDelta& hi = detail::kIcrcSportDelta[0][delta >> 8];
    const detail::IcrcSportDelta& lo = detail::kIcrcSportDelta[1][delta & 0xFFu];
    return impl == Crc32Impl::kVpclmul ? hi.fold ^ lo.fold : hi.reg ^ lo.reg;
  }
  void xor_udp_sport_share(uint32_t share) {
#if defined(__x86_64__)
    const __m128i d = impl_ == Crc32Impl::kVpclmul ? _mm_set_epi32(static_cast<int>(share), 0, 0, 0)
                                                   : _mm_cvtsi32_si128(static_cast<int>(share));
    fold_ = _mm_xor_si128(fold_, d);
#else
    if (impl_ == Crc32Impl::kVpclmul) {
      fold_.q[1] ^= static_cast<uint64_t>(share) << 32;
    } else {
      fold_.q[0] ^= share;
    }
#endif
  }
  void update(std::span<const uint8_t> bytes) {
    if (impl_ == Crc32Impl::kVpclmul) {
      fold_ = crc32_fold_update(fold_, bytes.data(), bytes.size());
    } else {
      fold_ = update_isal(fold_, bytes);
    }
  }
  uint32_t value() const { return impl_ == Crc32Impl::kVpclmul ? crc32_fold_finish(fold_) : isal_crc(fold_); }
  // The implementation fixed at begin() (a saved state keeps its own, so a
  // later crc32_select_impl() does not change what its copies compute).
  Crc32Impl impl() const { return impl_; }

 private:
  // The pseudo-LRH and then the first n (24 <= n <= layout.masked_bytes())
  // bytes of the masked block, masked; layout valid.
  bool begin_n(std::span<const uint8_t> headers, IcrcLayout layout, uint32_t n) {
    if (headers.size() < n) return false;
    impl_ = crc32_impl();
    if (impl_ == Crc32Impl::kVpclmul) {
      // The 8 x 0xFF pseudo-LRH is a constant state; the masked fields are
      // OR-ed in as the blocks are loaded.
      fold_ = crc32_fold_pseudo_lrh_or(headers.data(), n, detail::icrc_mask_of(layout));
    } else {
      fold_ = begin_isal(headers.data(), n, layout);
    }
    return true;
  }

  // Static, taking and returning the state by value: no member function
  // outside this header sees `this`, so a local accumulator's address never
  // escapes. Both implementations keep their state in the one vector
  // register (ISA-L's CRC in its low 32 bits), so that a loop of update()
  // calls passes it from call to call without spilling it to memory.
  static Crc32Fold begin_isal(const uint8_t* headers, std::size_t n, IcrcLayout layout);
  static Crc32Fold update_isal(Crc32Fold state, std::span<const uint8_t> bytes);
  static uint32_t isal_crc(Crc32Fold state);

  // kVpclmul: the unreduced remainder (icrc_vpclmul.h); kIsal: the CRC so
  // far in the low 32 bits.
  Crc32Fold fold_{};
  Crc32Impl impl_ = Crc32Impl::kIsal;
};

// ICRC of `covered` = the bytes from the IP header up to (excluding) the ICRC.
// Returns 0 if covered is shorter than layout.masked_bytes().
uint32_t icrc_compute(std::span<const uint8_t> covered, IcrcLayout layout);

enum class IcrcStatus : uint8_t { kOk, kBad, kNotRoce };
const char* to_string(IcrcStatus s);

// Frame-level helpers for a parsed contiguous frame (fi from parse_frame on
// the same bytes). A frame with a BTH and an ICRC position qualifies even if
// its opcode is unknown; otherwise kNotRoce / false.
uint32_t icrc_compute(std::span<const uint8_t> frame, const FrameInfo& fi);
IcrcStatus icrc_verify(std::span<const uint8_t> frame, const FrameInfo& fi);
// Computes the ICRC and stores it little-endian at fi.icrc_offset.
bool icrc_store(std::span<uint8_t> frame, const FrameInfo& fi);

}  // namespace sf::wire
