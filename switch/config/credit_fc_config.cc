// CREDIT_FC loader and its consistency checks. See credit_fc_config.h.
#include "switch/config/credit_fc_config.h"

#include <bit>
#include <charconv>
#include <string>

namespace sf::sw {
namespace {

using config::ConfigNode;

int key_int(const ConfigNode& at, const std::string& k, int lo, int hi, const char* what) {
  int v = -1;
  const auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), v);
  if (ec != std::errc() || p != k.data() + k.size() || v < lo || v > hi) {
    at.fail(std::string("key must be ") + what + " " + std::to_string(lo) + ".." + std::to_string(hi));
  }
  return v;
}

std::string vl_list(uint16_t mask) {
  std::string s;
  for (int v = 0; v < kMaxVls; ++v) {
    if ((mask >> v) & 1u) s += (s.empty() ? "" : ",") + std::to_string(v);
  }
  return s;
}

CreditFcConfig parse_entry(ConfigNode& n) {
  CreditFcConfig f;
  n.expect_object();
  if (auto m = n.opt_child("mtu")) f.mtu_bytes = static_cast<uint32_t>(m->as_int_or_string(256, 65536));
  const int vls = n.has("vls") ? static_cast<int>(n.child("vls").as_int_or_string(1, 15)) : 1;
  const bool mgmt = n.opt<bool>("management_vl", false);
  f.vl_mask = static_cast<uint16_t>(((1u << vls) - 1) | (mgmt ? 1u << kManagementVl : 0u));
  const uint64_t buf = n.opt_bytes("vl_buffer", 1u << 20, config::in_range<uint64_t>(1, 1ull << 31));
  if (buf < f.mtu_bytes) {
    n.fail_key("vl_buffer", std::to_string(buf) + " bytes per VL hold less than one MTU (" +
                                std::to_string(f.mtu_bytes) + " bytes = one credit)");
  }
  for (int v = 0; v < kMaxVls; ++v) f.vl_buffer_bytes[v] = f.vl_valid(v) ? static_cast<uint32_t>(buf) : 0;
  const uint32_t credits = static_cast<uint32_t>(buf / f.mtu_bytes);
  if (auto t = n.opt_child("update_threshold")) {
    f.update_threshold = static_cast<uint32_t>(t->as_int_or_string(1, INT32_MAX));
    if (f.update_threshold > credits) {
      t->fail(std::to_string(f.update_threshold) + " exceeds the pool of " + std::to_string(credits) +
              " credits per VL (vl_buffer / mtu): the receiver would never advertise");
    }
  }
  f.sl_to_vl.fill(0);
  if (auto m = n.opt_child("sl_to_vl")) {
    m->expect_object();
    for (auto& [k, v] : m->members()) {
      const int sl = key_int(v, k, 0, 7, "a service level (traffic class)");
      const int vl = static_cast<int>(v.as_int_or_string(0, 255));
      if (!f.vl_valid(vl)) {
        v.fail("unknown VL " + std::to_string(vl) + " (this port uses VLs " + vl_list(f.vl_mask) +
               "; see vls and management_vl)");
      }
      f.sl_to_vl[sl] = static_cast<uint8_t>(vl);
    }
  }
  if (auto a = n.opt_child("vl_arbitration")) {
    a->expect_object();
    for (auto& [k, v] : a->members()) {
      const int vl = key_int(v, k, 0, 15, "a VL");
      if (!f.vl_valid(vl)) {
        v.fail("unknown VL " + std::to_string(vl) + " (this port uses VLs " + vl_list(f.vl_mask) + ")");
      }
      f.vl_weight[vl] = static_cast<uint32_t>(v.as_int_or_string(0, 255));
    }
    uint32_t sum = 0;
    for (uint32_t w : f.vl_weight) sum += w;
    if (sum == 0) a->fail("every weight is zero: no VL could ever send");
  } else {
    for (int v = 0; v < kMaxVls; ++v) f.vl_weight[v] = f.vl_valid(v) ? 1 : 0;
  }
  for (int sl = 0; sl < 8; ++sl) {
    const int vl = f.sl_to_vl[sl];
    if (f.vl_weight[vl] == 0) {
      n.fail_key("vl_arbitration", "VL " + std::to_string(vl) + " carries SL " + std::to_string(sl) +
                                       " but has weight 0: its packets would never leave");
    }
  }
  n.finish();
  return f;
}

}  // namespace

void parse_credit_fc(ConfigNode& root, SwitchConfig& c) {
  const size_t nports = c.ports.ports.size();
  c.credit_fc.assign(nports, std::nullopt);
  auto t = root.opt_child("CREDIT_FC");
  if (!t) return;
  t->expect_object();
  uint64_t total_bytes = 0;
  for (auto& [key, n] : t->members()) {
    const CreditFcConfig f = parse_entry(n);
    size_t start = 0;
    while (start <= key.size()) {
      const size_t comma = key.find(',', start);
      const std::string name = key.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const int p = c.ports.find(name);
      if (p < 0) n.fail("unknown port \"" + name + "\" (not in PORT)");
      if (c.credit_fc[static_cast<size_t>(p)]) n.fail("port \"" + name + "\" is already in another CREDIT_FC entry");
      // The longest frame the port takes must fit the pool, or it could never be sent.
      const uint32_t max_frame = c.ports.ports[static_cast<size_t>(p)].mtu_bytes + 18;
      if (f.credits_for(max_frame) > f.credits(0)) {
        n.fail_key("vl_buffer", "port \"" + name + "\": " + std::to_string(f.credits(0)) + " credits per VL, but a " +
                                    std::to_string(max_frame) + "-byte frame (PORT mtu + 18) takes " +
                                    std::to_string(f.credits_for(max_frame)) + " (one per mtu + 128 bytes)");
      }
      const PortQos& q = c.qos[static_cast<size_t>(p)];
      if (q.pfc_enable != 0) {
        n.fail("port \"" + name + "\" has PFC enabled (PORT_QOS_MAP pfc_enable); credit FC and PFC are " +
               "alternative link modes");
      }
      // Each egress queue must belong to one VL: the VL arbiter picks a VL,
      // then the queue scheduler a queue of it.
      std::array<int, 8> queue_vl;
      queue_vl.fill(-1);
      for (int tc = 0; tc < 8; ++tc) {
        const int qi = q.tc_to_queue[tc];
        const int vl = f.sl_to_vl[tc];
        if (queue_vl[qi] >= 0 && queue_vl[qi] != vl) {
          n.fail_key("sl_to_vl", "port \"" + name + "\": traffic classes of queue " + std::to_string(qi) +
                                     " map to VLs " + std::to_string(queue_vl[qi]) + " and " + std::to_string(vl));
        }
        queue_vl[qi] = vl;
      }
      total_bytes += static_cast<uint64_t>(std::popcount(f.vl_mask)) * f.vl_buffer_bytes[0];
      if (total_bytes > c.mmu.total_bytes) {
        n.fail_key("vl_buffer", "credit buffers of the CREDIT_FC ports total " + std::to_string(total_bytes) +
                                    " bytes, more than mmu_size " + std::to_string(c.mmu.total_bytes));
      }
      c.credit_fc[static_cast<size_t>(p)] = f;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
}

}  // namespace sf::sw
