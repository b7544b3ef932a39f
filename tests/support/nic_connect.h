// The verbs connection sequence RESET -> INIT -> RTR -> RTS of an RC QP
// towards a peer QP, as tests, fuzz targets and interop helpers run it.
// Header-only and gtest-free so the fuzz build can use it.
#pragma once

#include <cstdint>

#include "nic/verbs/device.h"

namespace sf::nic::test {

struct ConnParams {
  verbs::Mtu mtu = verbs::Mtu::k4096;
  uint8_t timeout = 10;  // 4.19 ms
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 1;  // 10 us
  uint32_t sq_psn = 0x100;
  uint32_t rq_psn = 0x200;   // the peer's sq_psn
  bool ipv6 = false;
  uint8_t sl = 3;
  uint8_t traffic_class = 26 << 2;
  uint8_t rd_atomic = 16;
  uint8_t static_rate = 0;  // ah_attr.static_rate (an ibv_rate value; 0 = the port's rate)
  int access = verbs::kAccessRemoteWrite | verbs::kAccessRemoteRead | verbs::kAccessLocalWrite;
};

// Moves `self` RESET -> INIT -> RTR -> RTS towards `peer_qp` of the host
// behind `peer`; returns the first failing rc (0: connected).
inline int connect_qp(verbs::Qp* self, const verbs::Context& peer, const verbs::Qp& peer_qp, const ConnParams& p) {
  namespace v = verbs;
  v::QpAttr a;
  a.qp_state = v::QpState::kInit;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = p.access;
  int rc = v::modify_qp(self, &a, v::kQpState | v::kQpPkeyIndex | v::kQpPort | v::kQpAccessFlags);
  if (rc != 0) return rc;
  const rc::LocalAddr& pl = peer.host().local();
  v::QpAttr r;
  r.qp_state = v::QpState::kRtr;
  r.path_mtu = p.mtu;
  r.dest_qp_num = peer_qp.qp_num();
  r.rq_psn = p.rq_psn;
  r.max_dest_rd_atomic = p.rd_atomic;
  r.min_rnr_timer = p.min_rnr_timer;
  r.ah_attr.is_global = 1;
  r.ah_attr.sl = p.sl;
  r.ah_attr.port_num = 1;
  r.ah_attr.grh.sgid_index = p.ipv6 ? 1 : 0;
  r.ah_attr.grh.dgid = p.ipv6 ? pl.ipv6 : v::gid_from_ipv4(pl.ipv4);
  r.ah_attr.grh.traffic_class = p.traffic_class;
  r.ah_attr.static_rate = p.static_rate;
  for (int i = 0; i < 6; ++i) r.ah_attr.dmac[i] = pl.mac.bytes[i];
  rc = v::modify_qp(self, &r,
                    v::kQpState | v::kQpAv | v::kQpPathMtu | v::kQpDestQpn | v::kQpRqPsn | v::kQpMaxDestRdAtomic |
                        v::kQpMinRnrTimer);
  if (rc != 0) return rc;
  v::QpAttr s;
  s.qp_state = v::QpState::kRts;
  s.sq_psn = p.sq_psn;
  s.max_rd_atomic = p.rd_atomic;
  s.retry_cnt = p.retry_cnt;
  s.rnr_retry = p.rnr_retry;
  s.timeout = p.timeout;
  return v::modify_qp(self, &s,
                      v::kQpState | v::kQpSqPsn | v::kQpMaxQpRdAtomic | v::kQpRetryCnt | v::kQpRnrRetry | v::kQpTimeout);
}

}  // namespace sf::nic::test
