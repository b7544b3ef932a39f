// Plain, immutable description of the shared buffer (SONiC BUFFER_POOL,
// BUFFER_PROFILE, BUFFER_PG, BUFFER_QUEUE), already resolved to indices.
// Produced by the switch config loader; consumed by Mmu. Units: bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sf::sw {

inline constexpr int kNumPgs = 8;
inline constexpr int kNumQueues = 8;
inline constexpr int16_t kNoProfile = -1;

enum class PoolDir : uint8_t { kIngress, kEgress };
enum class ThresholdMode : uint8_t { kStatic, kDynamic };
enum class DiscardAction : uint8_t { kDrop, kTrim };

struct PoolConfig {
  std::string name;
  PoolDir dir = PoolDir::kIngress;
  ThresholdMode mode = ThresholdMode::kDynamic;
  uint64_t size_bytes = 0;
  // Ingress lossless pools only: size of the shared headroom pool (SONiC pool
  // `xoff`). 0 = every lossless PG has private headroom of its profile's xoff.
  uint64_t xoff_bytes = 0;
};

struct ProfileConfig {
  std::string name;
  uint16_t pool = 0;                 // index into MmuConfig::pools
  uint64_t reserved_bytes = 0;       // SONiC `size`: guaranteed minimum
  ThresholdMode mode = ThresholdMode::kDynamic;
  int dynamic_th = 0;                // alpha = 2^dynamic_th; -8 = 0, 7 = unlimited
  uint64_t static_th_bytes = 0;      // static shared cap; 0 = unlimited (SAI)
  // Lossless ingress PG profiles (xoff > 0): headroom after XOFF and XON hysteresis.
  uint64_t xoff_bytes = 0;
  uint64_t xon_bytes = 0;
  uint64_t xon_offset_bytes = 0;
  DiscardAction discard = DiscardAction::kDrop;

  bool lossless() const { return xoff_bytes > 0; }
};

struct MmuConfig {
  uint32_t cell_bytes = 256;
  uint64_t total_bytes = 0;  // physical buffer memory shared by every port
  std::vector<PoolConfig> pools;
  std::vector<ProfileConfig> profiles;
  // Profile index per (port, PG) and (port, queue); kNoProfile = no buffer.
  std::vector<std::array<int16_t, kNumPgs>> pg_profile;
  std::vector<std::array<int16_t, kNumQueues>> queue_profile;

  uint16_t num_ports() const { return static_cast<uint16_t>(pg_profile.size()); }
};

}  // namespace sf::sw
