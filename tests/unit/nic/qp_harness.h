// A QP with its environment (MR table, PD, CQs, a 4 KiB registered buffer),
// without a node: for the tests of the verbs control path and of posting,
// which need no mbufs and transmit nothing.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "nic/rc/qp.h"
#include "nic/verbs/cq.h"

namespace sf::nic::test {

struct QpHarness {
  verbs::MrTable mrs{4};
  rc::LocalAddr local;
  rc::RcConfig cfg;
  verbs::Pd pd{nullptr, 1};
  verbs::Cq scq{nullptr, 64};
  verbs::Cq rcq{nullptr, 64};
  rc::Qp qp;
  std::vector<uint8_t> buf = std::vector<uint8_t>(4096);
  verbs::Mr* mr = nullptr;

  // The QP created (RESET) with `max_wr` send and receive WRs, `max_send_sge`
  // SGEs a send WR and one a receive WR; `buf` registered as `mr`.
  QpHarness(uint32_t max_wr, uint32_t max_send_sge) {
    local.has_ipv4 = true;
    local.ipv4 = {{10, 0, 0, 1}};
    rc::QpEnv env{nullptr, &mrs, &local, &cfg, 1};
    verbs::QpInitAttr ia;
    ia.send_cq = &scq;
    ia.recv_cq = &rcq;
    ia.cap.max_send_wr = max_wr;
    ia.cap.max_recv_wr = max_wr;
    ia.cap.max_send_sge = max_send_sge;
    ia.cap.max_recv_sge = 1;
    EXPECT_EQ(qp.create(env, 0x11, &pd, ia), 0);
    int err = 0;
    mr = mrs.add(&pd, buf.data(), buf.size(), verbs::kAccessLocalWrite, &err);
  }
};

}  // namespace sf::nic::test
