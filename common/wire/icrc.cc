// ICRC computation (endpoint.md 1.7) with the VPCLMULQDQ kernel or ISA-L.
#include "common/wire/icrc.h"

#include <isa-l/crc.h>

#include <cstring>

namespace sf::wire {

namespace {
// crc32_gzip_refl(0, 8 x 0xFF): the CRC after the pseudo-LRH that replaces the
// InfiniBand LRH (= ~0xDEBB20E3, rxe's seed; checked in icrc_test.cc).
constexpr uint32_t kCrcAfterPseudoLrh = 0x2144DF1Cu;

// mask_icrc_headers() on the block at ip (constexpr: also builds kIcrcMasks).
constexpr void mask_block(uint8_t* ip, IcrcLayout layout) {
  if (layout.ip_version == IpVersion::kV4) {
    ip[Ipv4Header::kOffTos] = 0xFF;
    ip[Ipv4Header::kOffTtl] = 0xFF;
    ip[Ipv4Header::kOffChecksum] = 0xFF;
    ip[Ipv4Header::kOffChecksum + 1] = 0xFF;
  } else {
    // Version nibble kept; traffic class (8 bits) and flow label (20 bits) all ones.
    ip[0] |= 0x0F;
    ip[1] = 0xFF;
    ip[2] = 0xFF;
    ip[3] = 0xFF;
    ip[Ipv6Header::kOffHopLimit] = 0xFF;
  }
  uint8_t* udp = ip + layout.ip_header_bytes;
  udp[UdpHeader::kOffChecksum] = 0xFF;
  udp[UdpHeader::kOffChecksum + 1] = 0xFF;
  uint8_t* bth = udp + UdpHeader::kSize;
  bth[Bth::kOffBecnByte] = 0xFF;
}

constexpr detail::IcrcMaskTable make_mask_table() {
  detail::IcrcMaskTable t{};
  for (std::size_t i = 0; i < detail::kIcrcMaskV4Rows; ++i) {
    mask_block(t[i].data(), IcrcLayout{IpVersion::kV4, static_cast<uint32_t>(Ipv4Header::kSize + 4 * i)});
  }
  mask_block(t[detail::kIcrcMaskV4Rows].data(), IcrcLayout{IpVersion::kV6, Ipv6Header::kSize});
  return t;
}

// Covered prefix of a parsed frame: [ip_offset, icrc_offset).
bool has_icrc(const FrameInfo& fi) {
  return fi.bth != nullptr && fi.icrc_offset != 0 && fi.ip_header_bytes != 0 &&
         fi.icrc_offset + kIcrcBytes <= fi.frame_bytes;
}
}  // namespace

constexpr detail::IcrcMaskTable detail::kIcrcMasks = make_mask_table();

namespace {
// Bytes from the UDP source port's first byte to the end of a
// begin_prefix() block: UDP (8) + BTH up to AckReq (kOffPsn - 1).
// (The source port is the UDP header's first field.)
constexpr std::size_t kSportToPrefixEnd = UdpHeader::kSize + Bth::kOffPsn - 1;

constexpr detail::IcrcSportTable make_sport_table() {
  detail::IcrcSportTable t{};
  for (int row = 0; row < 2; ++row) {
    for (uint32_t b = 0; b < 256; ++b) {
      // The raw register (start 0) over the byte at its place, then zeros to
      // the prefix's end: the byte's share of the register (linearity).
      uint32_t reg = 0;
      for (std::size_t i = static_cast<std::size_t>(row); i < kSportToPrefixEnd; ++i) {
        const uint32_t in = i == static_cast<std::size_t>(row) ? b : 0u;
        reg ^= in;
        for (int k = 0; k < 8; ++k) reg = (reg >> 1) ^ ((reg & 1u) != 0 ? crc32_const::kPolyRefl : 0u);
      }
      // The fold remainder F with F x^32 = reg (mod P): reg x^-32.
      uint32_t f = reg;
      for (int k = 0; k < 32; ++k) f = (f << 1) ^ ((f & 0x80000000u) != 0 ? 0xDB710641u : 0u);
      t[static_cast<std::size_t>(row)][b] = detail::IcrcSportDelta{reg, f};
    }
  }
  return t;
}
}  // namespace

constexpr detail::IcrcSportTable detail::kIcrcSportDelta = make_sport_table();

const char* to_string(IcrcStatus s) {
  switch (s) {
    case IcrcStatus::kOk: return "ok";
    case IcrcStatus::kBad: return "bad";
    case IcrcStatus::kNotRoce: return "not_roce";
  }
  return "?";
}

IcrcLayout icrc_layout(const FrameInfo& fi) {
  if (!has_icrc(fi)) return {};
  return IcrcLayout{fi.ip_version, fi.ip_header_bytes};
}

void mask_icrc_headers(std::span<uint8_t> block, IcrcLayout layout) { mask_block(block.data(), layout); }

namespace {
Crc32Fold isal_state(uint32_t crc) {
#if defined(__x86_64__)
  return _mm_cvtsi32_si128(static_cast<int>(crc));
#else
  return Crc32Fold{{crc, 0}};
#endif
}
}  // namespace

uint32_t IcrcAccumulator::isal_crc(Crc32Fold state) {
#if defined(__x86_64__)
  return static_cast<uint32_t>(_mm_cvtsi128_si32(state));
#else
  return static_cast<uint32_t>(state.q[0]);
#endif
}

Crc32Fold IcrcAccumulator::begin_isal(const uint8_t* headers, std::size_t n, IcrcLayout layout) {
  // n >= constant_bytes(), which covers every masked field (the last is
  // BTH byte 4); the copy is masked_bytes() long so that mask_block()
  // writes inside it.
  uint8_t scratch[kIcrcMaskedMaxBytes];
  std::memcpy(scratch, headers, n);
  mask_icrc_headers(std::span<uint8_t>(scratch, layout.masked_bytes()), layout);
  return isal_state(crc32_gzip_refl(kCrcAfterPseudoLrh, scratch, n));
}

namespace {
// Byte-at-a-time CRC table (reflected 0xEDB88320), for the short pieces
// (AckReq + PSN after a saved state: 4 bytes) where ISA-L's call and set-up
// cost more than the bytes.
constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) != 0 ? 0xEDB88320u : 0u);
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();
constexpr std::size_t kIsalShortBytes = 8;
}  // namespace

Crc32Fold IcrcAccumulator::update_isal(Crc32Fold state, std::span<const uint8_t> bytes) {
  if (bytes.empty()) return state;
  if (bytes.size() <= kIsalShortBytes) {
    uint32_t reg = ~isal_crc(state);
    for (const uint8_t b : bytes) reg = (reg >> 8) ^ kCrcTable[(reg ^ b) & 0xFFu];
    return isal_state(~reg);
  }
  return isal_state(crc32_gzip_refl(isal_crc(state), bytes.data(), bytes.size()));
}

uint32_t icrc_compute(std::span<const uint8_t> covered, IcrcLayout layout) {
  IcrcAccumulator acc;
  if (!acc.begin(covered, layout)) return 0;
  acc.update(covered.subspan(layout.masked_bytes()));
  return acc.value();
}

uint32_t icrc_compute(std::span<const uint8_t> frame, const FrameInfo& fi) {
  if (!has_icrc(fi) || fi.icrc_offset > frame.size()) return 0;
  return icrc_compute(frame.subspan(fi.ip_offset, fi.icrc_offset - fi.ip_offset), icrc_layout(fi));
}

IcrcStatus icrc_verify(std::span<const uint8_t> frame, const FrameInfo& fi) {
  if (!has_icrc(fi) || fi.icrc_offset + kIcrcBytes > frame.size()) return IcrcStatus::kNotRoce;
  const uint32_t want = load_le32(frame.data() + fi.icrc_offset);
  return icrc_compute(frame, fi) == want ? IcrcStatus::kOk : IcrcStatus::kBad;
}

bool icrc_store(std::span<uint8_t> frame, const FrameInfo& fi) {
  if (!has_icrc(fi) || fi.icrc_offset + kIcrcBytes > frame.size()) return false;
  store_le32(frame.data() + fi.icrc_offset, icrc_compute(frame, fi));
  return true;
}

}  // namespace sf::wire
