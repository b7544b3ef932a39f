// CRC-32 VPCLMULQDQ kernel (icrc_vpclmul.h) and the run-time choice
// (icrc_crc32.h): fold constants against slow polynomial arithmetic; the
// kernel against ISA-L crc32_gzip_refl and a bitwise reference for every
// length 0..1024, every alignment 0..63, every length to 9 KiB, large
// buffers, random splits and splits at every offset (as mbuf segments cut
// a frame); the ICRC identical under both implementations.
#include <gtest/gtest.h>

#include <isa-l/crc.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common/rng.h"
#include "common/wire/icrc.h"
#include "common/wire/icrc_crc32.h"
#include "common/wire/icrc_vpclmul.h"
#include "tests/unit/wire/wire_test_util.h"

namespace sf::wire {
namespace {

// Bit at a time, reflected 0xEDB88320, zlib convention (crc = 0 to start).
uint32_t crc32_bitwise(uint32_t crc, const uint8_t* p, std::size_t n) {
  uint32_t r = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    r ^= p[i];
    for (int b = 0; b < 8; ++b) r = (r >> 1) ^ ((r & 1u) != 0 ? 0xEDB88320u : 0u);
  }
  return ~r;
}

// Normal-domain polynomials (bit i <-> x^i), P = x^32 + 0x04C11DB7.
constexpr uint64_t kP = 0x104C11DB7ull;

uint32_t xpow_mod_normal(int e) {
  uint64_t r = 1;
  for (int i = 0; i < e; ++i) {
    r <<= 1;
    if ((r >> 32) != 0) r ^= kP;
  }
  return static_cast<uint32_t>(r);
}

uint32_t mulmod_normal(uint32_t a, uint32_t b) {
  uint64_t prod = 0;
  for (int i = 0; i < 32; ++i) {
    if (((b >> i) & 1u) != 0) prod ^= static_cast<uint64_t>(a) << i;
  }
  for (int i = 63; i >= 32; --i) {
    if (((prod >> i) & 1u) != 0) prod ^= kP << (i - 32);
  }
  return static_cast<uint32_t>(prod);
}

uint64_t reverse_bits(uint64_t v, int width) {
  uint64_t r = 0;
  for (int i = 0; i < width; ++i) {
    if (((v >> i) & 1u) != 0) r |= uint64_t{1} << (width - 1 - i);
  }
  return r;
}

std::vector<uint8_t> random_bytes(Rng& rng, std::size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng.next_u64());
  return v;
}

uint32_t vpclmul_crc(uint32_t crc, const uint8_t* p, std::size_t n) {
  return crc32_fold_finish(crc32_fold_update(crc32_fold_from_crc(crc), p, n));
}

// Restores the default implementation after each test.
class Crc32Vpclmul : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!crc32_vpclmul_supported()) GTEST_SKIP() << "CPU lacks AVX2 + VPCLMULQDQ";
  }
  void TearDown() override { crc32_select_impl(crc32_best_impl()); }
};

// 1. The compile-time constants. Expect: x^e mod P (reflected) equals the
//    bit-serial normal-domain value for e = 0..1200; x^-e * x^e = 1; the
//    multiplier is reflect64(x^(e-1)); mu * P = x^64 + (degree < 32).
TEST(Crc32Const, FoldConstantsMatchSlowPolynomialArithmetic) {
  for (int e = 0; e <= 1200; ++e) {
    ASSERT_EQ(crc32_const::xpow_mod_refl(e), reverse_bits(xpow_mod_normal(e), 32)) << e;
  }
  for (int e = 1; e <= 64; ++e) {
    const uint32_t inv = static_cast<uint32_t>(reverse_bits(crc32_const::xpow_mod_refl(-e), 32));
    EXPECT_EQ(mulmod_normal(inv, xpow_mod_normal(e)), 1u) << e;
  }
  for (int e : {-32, 64, 96, 128, 192, 256, 320, 1024, 1088}) {
    EXPECT_EQ(crc32_const::mul_const(e), reverse_bits(reverse_bits(crc32_const::xpow_mod_refl(e - 1), 32), 64)) << e;
  }
  // mu (normal) from its reflected form; mu * P over GF(2), 65 x 33 bits.
  const uint64_t mu = reverse_bits(crc32_const::barrett_mu_refl(), 64);
  EXPECT_EQ(mu >> 32, 1u);  // degree 32
  uint64_t lo = 0, hi = 0;  // 128-bit product
  for (int i = 0; i < 33; ++i) {
    if (((mu >> i) & 1u) == 0) continue;
    lo ^= kP << i;
    if (i > 0) hi ^= kP >> (64 - i);
  }
  EXPECT_EQ(hi, 1u);                    // x^64 ...
  EXPECT_EQ(lo >> 32, 0u);              // ... plus a remainder below x^32
  EXPECT_EQ(crc32_const::kPolyRefl33, reverse_bits(kP, 33));
}

// 2. Every length 0..1024 (alignment = length mod 64, random start CRC).
//    Expect: kernel == ISA-L == bitwise.
TEST_F(Crc32Vpclmul, EveryLengthEqualsIsalAndBitwise) {
  Rng rng(7);
  const auto buf = random_bytes(rng, 1024 + 64);
  for (std::size_t n = 0; n <= 1024; ++n) {
    const uint8_t* p = buf.data() + n % 64;
    const uint32_t init = n % 3 == 0 ? 0u : static_cast<uint32_t>(rng.next_u64());
    const uint32_t want = crc32_bitwise(init, p, n);
    ASSERT_EQ(crc32_gzip_refl(init, p, n), want) << n;
    ASSERT_EQ(vpclmul_crc(init, p, n), want) << n;
  }
}

// 3. Every alignment 0..63 x every length 0..1024. Expect: kernel == ISA-L.
TEST_F(Crc32Vpclmul, EveryAlignmentEqualsIsal) {
  Rng rng(11);
  const auto buf = random_bytes(rng, 1024 + 64);
  for (std::size_t align = 0; align < 64; ++align) {
    for (std::size_t n = 0; n <= 1024; ++n) {
      const uint8_t* p = buf.data() + align;
      ASSERT_EQ(vpclmul_crc(0x5A5A5A5Au, p, n), crc32_gzip_refl(0x5A5A5A5Au, p, n)) << align << " " << n;
    }
  }
}

// 3b. Every length 1025..9216 (past the wide loop's every remainder, the
//     byte-distance table's last rows and jumbo frames) at alignments 0, 1,
//     17 and 63, random start CRC. Expect: kernel == ISA-L.
TEST_F(Crc32Vpclmul, EveryLengthTo9KiBEqualsIsal) {
  Rng rng(37);
  const auto buf = random_bytes(rng, 9216 + 64);
  for (std::size_t align : {0u, 1u, 17u, 63u}) {
    for (std::size_t n = 1025; n <= 9216; ++n) {
      const uint8_t* p = buf.data() + align;
      const uint32_t init = static_cast<uint32_t>(n * 2654435761u);
      ASSERT_EQ(vpclmul_crc(init, p, n), crc32_gzip_refl(init, p, n)) << align << " " << n;
    }
  }
}

// 4. Large buffers (random lengths to 64 KiB, all-zero and all-one data).
//    Expect: kernel == ISA-L; a few also == bitwise.
TEST_F(Crc32Vpclmul, LargeBuffersEqualIsal) {
  Rng rng(13);
  const auto buf = random_bytes(rng, 65536 + 64);
  for (int i = 0; i < 300; ++i) {
    const std::size_t n = 1025 + rng.below(65536 - 1025);
    const uint8_t* p = buf.data() + rng.below(64);
    ASSERT_EQ(vpclmul_crc(0, p, n), crc32_gzip_refl(0, p, n)) << n;
    if (i < 5) {
      EXPECT_EQ(vpclmul_crc(0, p, n), crc32_bitwise(0, p, n)) << n;
    }
  }
  for (uint8_t fill : {uint8_t{0}, uint8_t{0xFF}}) {
    const std::vector<uint8_t> v(9000, fill);
    for (std::size_t n : {4096u, 4097u, 8191u, 9000u}) EXPECT_EQ(vpclmul_crc(0, v.data(), n), crc32_bitwise(0, v.data(), n));
  }
}

// 5. Continuation at random split points, both by carrying the unreduced
//    state and through the 32-bit CRC (finish, then from_crc).
//    Expect: every split == one shot == ISA-L.
TEST_F(Crc32Vpclmul, RandomSplitsContinue) {
  Rng rng(17);
  const auto buf = random_bytes(rng, 9000);
  for (int i = 0; i < 3000; ++i) {
    const std::size_t n = i < 1500 ? rng.below(300) : rng.below(9000 - 64);
    const uint8_t* p = buf.data() + rng.below(64);
    const uint32_t want = crc32_gzip_refl(0, p, n);
    Crc32Fold f = crc32_fold_from_crc(0);
    uint32_t crc = 0;
    std::size_t off = 0;
    while (off < n) {
      const std::size_t k = std::min<std::size_t>(n - off, rng.below(4) == 0 ? rng.below(8) : rng.below(200));
      f = crc32_fold_update(f, p + off, k);
      crc = vpclmul_crc(crc, p + off, k);
      off += k;
    }
    ASSERT_EQ(crc32_fold_finish(f), want) << n;
    ASSERT_EQ(crc, want) << n;
  }
}

// 5b. A 4200-byte buffer cut in two at every offset, and in pieces of 2048
//     after a first piece of every length 1..2100 (a frame in 2 KiB mbuf
//     segments after any header/headroom split), the state carried across.
//     Expect: == ISA-L of the whole, every time.
TEST_F(Crc32Vpclmul, SplitAtEveryOffsetContinues) {
  Rng rng(41);
  const auto buf = random_bytes(rng, 4200);
  const uint32_t want = crc32_gzip_refl(0, buf.data(), buf.size());
  for (std::size_t cut = 0; cut <= buf.size(); ++cut) {
    Crc32Fold f = crc32_fold_update(crc32_fold_from_crc(0), buf.data(), cut);
    f = crc32_fold_update(f, buf.data() + cut, buf.size() - cut);
    ASSERT_EQ(crc32_fold_finish(f), want) << cut;
  }
  for (std::size_t first = 1; first <= 2100; ++first) {
    Crc32Fold f = crc32_fold_update(crc32_fold_from_crc(0), buf.data(), first);
    for (std::size_t at = first; at < buf.size(); at += 2048) {
      f = crc32_fold_update(f, buf.data() + at, std::min<std::size_t>(2048, buf.size() - at));
    }
    ASSERT_EQ(crc32_fold_finish(f), want) << first;
  }
}

// 6. The masked header block after the pseudo-LRH, n = 24..100, random
//    masks. Expect: == the bitwise CRC of 8 x FF | the OR-ed bytes.
TEST_F(Crc32Vpclmul, PseudoLrhOrMaskedEqualsBitwiseOfMaskedCopy) {
  Rng rng(19);
  for (std::size_t n = 24; n <= 100; ++n) {
    const auto data = random_bytes(rng, n);
    std::vector<uint8_t> mask(n), ored(8 + n, 0xFF);
    for (std::size_t i = 0; i < n; ++i) {
      mask[i] = rng.below(4) == 0 ? static_cast<uint8_t>(rng.next_u64()) : 0;
      ored[8 + i] = data[i] | mask[i];
    }
    EXPECT_EQ(crc32_fold_finish(crc32_fold_pseudo_lrh_or(data.data(), n, mask.data())),
              crc32_bitwise(0, ored.data(), ored.size()))
        << n;
  }
}

// 7. Forcing the choice. Expect: ISA-L selectable and used (crc32_impl),
//    vpclmul selectable exactly when supported; crc32_ieee equal either way.
TEST_F(Crc32Vpclmul, SelectForcesImplementation) {
  Rng rng(23);
  const auto buf = random_bytes(rng, 3000);
  if (!__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(crc32_best_impl(), Crc32Impl::kVpclmul);
  }
  const uint32_t fast = crc32_ieee(0, buf);
  ASSERT_TRUE(crc32_select_impl(Crc32Impl::kIsal));
  EXPECT_EQ(crc32_impl(), Crc32Impl::kIsal);
  EXPECT_EQ(crc32_ieee(0, buf), fast);
  EXPECT_EQ(crc32_ieee(0, buf), crc32_gzip_refl(0, buf.data(), buf.size()));
  ASSERT_TRUE(crc32_select_impl(Crc32Impl::kVpclmul));
  EXPECT_EQ(crc32_impl(), Crc32Impl::kVpclmul);
  EXPECT_STREQ(to_string(Crc32Impl::kIsal), "isal");
  EXPECT_STREQ(to_string(Crc32Impl::kVpclmul), "vpclmul");
}

TEST(Crc32Select, UnsupportedIsRefused) {
  EXPECT_TRUE(crc32_impl_supported(Crc32Impl::kIsal));
  EXPECT_EQ(crc32_select_impl(Crc32Impl::kVpclmul), crc32_vpclmul_supported());
  crc32_select_impl(crc32_best_impl());
}

// ICRC of `f` with the accumulator under `impl`, its covered bytes fed in
// pieces cut at `cuts` (offsets into the part after the masked block).
uint32_t icrc_split(Crc32Impl impl, const std::vector<uint8_t>& f, const FrameInfo& fi,
                    const std::vector<std::size_t>& cuts) {
  EXPECT_TRUE(crc32_select_impl(impl));
  const IcrcLayout l = icrc_layout(fi);
  IcrcAccumulator acc;
  EXPECT_TRUE(acc.begin(std::span<const uint8_t>(f).subspan(fi.ip_offset), l));
  const std::size_t start = fi.ip_offset + l.masked_bytes();
  std::size_t at = start;
  for (std::size_t c : cuts) {
    if (start + c < at || start + c > fi.icrc_offset) continue;
    acc.update(std::span<const uint8_t>(f.data() + at, start + c - at));
    at = start + c;
  }
  acc.update(std::span<const uint8_t>(f.data() + at, fi.icrc_offset - at));
  return acc.value();
}

// 8. RoCE frames (IPv4, IPv6, SRv6; payload 0..9000) under both
//    implementations, whole, split at random odd offsets and at every 2 KiB
//    segment boundary.
//    Expect: the ICRC the builder stored, every time.
TEST_F(Crc32Vpclmul, IcrcOfFramesUnchangedBothImplementations) {
  Rng rng(29);
  const L3Spec l3s[] = {test::sample_v4(), test::sample_v6(), test::sample_srv6()};
  for (const L3Spec& l3 : l3s) {
    for (std::size_t pl : {0u, 1u, 3u, 15u, 16u, 17u, 63u, 64u, 255u, 256u, 1000u, 1024u, 4095u, 4096u, 4097u,
                           8192u, 9000u}) {
      const auto f = test::build(test::sample_spec(Opcode::kRcWriteOnly, l3), pl);
      ASSERT_FALSE(f.empty());
      const FrameInfo fi = parse_frame(f);
      ASSERT_TRUE(fi.ok()) << to_string(fi.reason);
      const uint32_t stored = load_le32(f.data() + fi.icrc_offset);
      for (Crc32Impl impl : {Crc32Impl::kIsal, Crc32Impl::kVpclmul}) {
        ASSERT_TRUE(crc32_select_impl(impl));
        EXPECT_EQ(icrc_compute(f, fi), stored) << to_string(impl) << " " << pl;
        EXPECT_EQ(icrc_verify(f, fi), IcrcStatus::kOk);
        for (int k = 0; k < 8; ++k) {
          std::vector<std::size_t> cuts;
          for (int c = 0; c < 4; ++c) cuts.push_back(rng.below(pl + 17) | 1u);
          std::sort(cuts.begin(), cuts.end());
          EXPECT_EQ(icrc_split(impl, f, fi, cuts), stored) << to_string(impl) << " " << pl;
        }
        // Cut where 2 KiB mbuf segments end (frame offsets 2048 k).
        const std::size_t start = fi.ip_offset + icrc_layout(fi).masked_bytes();
        std::vector<std::size_t> seg_cuts;
        for (std::size_t at = 2048; at < fi.icrc_offset; at += 2048) seg_cuts.push_back(at - start);
        EXPECT_EQ(icrc_split(impl, f, fi, seg_cuts), stored) << to_string(impl) << " " << pl;
      }
    }
  }
}

// 9. Every header layout (IPv4 with 20..60 header bytes, IPv6), random
//    header bytes. Expect: begin() == the bitwise CRC of 8 x FF | the block
//    masked by mask_icrc_headers(), under both implementations.
TEST_F(Crc32Vpclmul, MaskedBeginEveryLayout) {
  Rng rng(31);
  std::vector<IcrcLayout> layouts;
  for (uint32_t h = 20; h <= 60; h += 4) layouts.push_back(IcrcLayout{IpVersion::kV4, h});
  layouts.push_back(IcrcLayout{IpVersion::kV6, 40});
  for (const IcrcLayout l : layouts) {
    for (int i = 0; i < 20; ++i) {
      const auto hdr = random_bytes(rng, l.masked_bytes() + 100);
      std::vector<uint8_t> pseudo(8 + hdr.size(), 0xFF);
      std::memcpy(pseudo.data() + 8, hdr.data(), hdr.size());
      mask_icrc_headers(std::span<uint8_t>(pseudo.data() + 8, l.masked_bytes()), l);
      const std::size_t extra = rng.below(101);
      const uint32_t want = crc32_bitwise(0, pseudo.data(), 8 + l.masked_bytes() + extra);
      for (Crc32Impl impl : {Crc32Impl::kIsal, Crc32Impl::kVpclmul}) {
        ASSERT_TRUE(crc32_select_impl(impl));
        IcrcAccumulator acc;
        ASSERT_TRUE(acc.begin(hdr, l));
        acc.update(std::span<const uint8_t>(hdr.data() + l.masked_bytes(), extra));
        EXPECT_EQ(acc.value(), want) << to_string(impl) << " " << l.ip_header_bytes;
      }
    }
  }
}

// 10. An accumulator keeps the implementation it began with, even if the
//     selection changes before it finishes. Expect: the right ICRC.
TEST_F(Crc32Vpclmul, AccumulatorKeepsItsImplementation) {
  const auto f = test::build(test::sample_spec(Opcode::kRcWriteOnly), 500);
  const FrameInfo fi = parse_frame(f);
  const IcrcLayout l = icrc_layout(fi);
  const std::size_t start = fi.ip_offset + l.masked_bytes();
  for (Crc32Impl first : {Crc32Impl::kIsal, Crc32Impl::kVpclmul}) {
    ASSERT_TRUE(crc32_select_impl(first));
    IcrcAccumulator acc;
    ASSERT_TRUE(acc.begin(std::span<const uint8_t>(f).subspan(fi.ip_offset), l));
    ASSERT_TRUE(crc32_select_impl(first == Crc32Impl::kIsal ? Crc32Impl::kVpclmul : Crc32Impl::kIsal));
    acc.update(std::span<const uint8_t>(f.data() + start, fi.icrc_offset - start));
    EXPECT_EQ(acc.value(), load_le32(f.data() + fi.icrc_offset)) << to_string(first);
  }
}

}  // namespace
}  // namespace sf::wire
