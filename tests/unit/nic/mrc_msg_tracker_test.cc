// MsgTracker (nic/mrc/msg_tracker.h): per-message completion under any packet
// order, WRITE_IMM completions in message order, duplicates and bad shapes.
#include "nic/mrc/msg_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

#include "common/rng.h"
#include "nic/mrc/sack_tracker.h"

namespace sf::nic::mrc {
namespace {

constexpr uint32_t kPmtu = 1024;

// The packets of one message of `len` bytes, as a sender cuts it.
std::vector<MsgPacket> cut(uint32_t msn, uint32_t len, bool imm, uint32_t imm_value = 0, uint16_t rqmsn = 0) {
  std::vector<MsgPacket> v;
  uint32_t off = 0;
  do {
    MsgPacket p;
    p.msn = msn;
    p.msg_offset = off;
    p.payload = std::min(kPmtu, len - off);
    p.msg_length = len;
    off += p.payload;
    p.last = off == len;
    p.has_imm = imm && p.last;
    p.imm = p.has_imm ? imm_value : 0;
    p.rqmsn = rqmsn;
    v.push_back(p);
  } while (off < len);
  return v;
}

// 1. Every permutation of a 5-packet message: complete exactly at the last
//    packet to arrive, whichever it is; the IMM completion then released.
TEST(MrcMsgTracker, EveryPermutationOneMessage) {
  const auto pkts = cut(7, 4 * kPmtu + 100, true, 0xABCD, 3);
  ASSERT_EQ(pkts.size(), 5u);
  std::vector<int> order(pkts.size());
  std::iota(order.begin(), order.end(), 0);
  int perms = 0;
  do {
    MsgTracker t(7, kPmtu, 8);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const MsgVerdict v = t.on_packet(pkts[order[i]]);
      EXPECT_EQ(v, i + 1 == order.size() ? MsgVerdict::kCompleted : MsgVerdict::kAccepted);
    }
    std::array<MsgCompletion, 4> out{};
    ASSERT_EQ(t.pop_completions(out), 1u);
    EXPECT_EQ(out[0].msn, 7u);
    EXPECT_EQ(out[0].imm, 0xABCDu);
    EXPECT_EQ(out[0].rqmsn, 3);
    EXPECT_EQ(out[0].length, 4 * kPmtu + 100);
    EXPECT_EQ(t.bytes_received(), 4 * kPmtu + 100);
    EXPECT_EQ(t.base_msn(), 8u);
    ++perms;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(perms, 120);
}

// 2. Every interleaving of three messages (WRITE 2 pkts, WRITE_IMM 2 pkts,
//    WRITE_IMM 3 pkts = 7! orders), each packet duplicated once at a random
//    later point and filtered by PSN (SackTracker): completions come out in
//    message order, an early immediate is held until its predecessors
//    complete, and nothing is counted twice.
TEST(MrcMsgTracker, EveryInterleavingInOrderCompletions) {
  std::vector<MsgPacket> pkts;
  for (const auto& p : cut(0, 2 * kPmtu, false)) pkts.push_back(p);
  for (const auto& p : cut(1, 2 * kPmtu - 1, true, 111, 0)) pkts.push_back(p);
  for (const auto& p : cut(2, 3 * kPmtu, true, 222, 1)) pkts.push_back(p);
  ASSERT_EQ(pkts.size(), 7u);
  const uint32_t total_bytes = 2 * kPmtu + 2 * kPmtu - 1 + 3 * kPmtu;
  std::vector<int> order(pkts.size());
  std::iota(order.begin(), order.end(), 0);  // packet i has PSN 1000 + i
  Rng rng(99);
  int perms = 0;
  do {
    MsgTracker t(0, kPmtu, 4);
    SackTracker psns(wire::Psn(1000));
    std::vector<int> feed(order.begin(), order.end());
    for (int i : order) {  // a duplicate of each, somewhere after it
      const auto at = std::find(feed.begin(), feed.end(), i) + 1;
      const std::ptrdiff_t room = feed.end() - at;
      feed.insert(at + static_cast<std::ptrdiff_t>(rng.below(static_cast<uint64_t>(room) + 1)), i);
    }
    std::vector<uint32_t> completed_imms;
    bool seen_complete[3] = {false, false, false};
    for (int i : feed) {
      if (psns.on_packet(wire::Psn(1000 + static_cast<uint32_t>(i))) != PsnVerdict::kNew) continue;
      if (t.on_packet(pkts[i]) == MsgVerdict::kCompleted) seen_complete[pkts[i].msn] = true;
      std::array<MsgCompletion, 1> out{};  // pop one at a time
      while (t.pop_completions(out) == 1) {
        completed_imms.push_back(out[0].imm);
        // Released only once every earlier message is complete.
        for (uint32_t m = 0; m <= out[0].msn; ++m) EXPECT_TRUE(seen_complete[m]);
      }
    }
    EXPECT_EQ(completed_imms, (std::vector<uint32_t>{111, 222}));
    EXPECT_EQ(t.bytes_received(), total_bytes);
    EXPECT_EQ(t.messages_released(), 3u);
    EXPECT_EQ(t.held_imm(), 0u);
    EXPECT_EQ(psns.rx_duplicate(), 7u);
    ++perms;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(perms, 5040);
}

// 3. Early immediate held: message 1 (IMM) complete before message 0.
TEST(MrcMsgTracker, EarlyImmediateHeld) {
  MsgTracker t(0, kPmtu, 4);
  const auto m0 = cut(0, 2 * kPmtu, false);
  const auto m1 = cut(1, 10, true, 5, 0);
  EXPECT_EQ(t.on_packet(m1[0]), MsgVerdict::kCompleted);
  EXPECT_EQ(t.on_packet(m0[1]), MsgVerdict::kAccepted);
  std::array<MsgCompletion, 4> out{};
  EXPECT_EQ(t.pop_completions(out), 0u);
  EXPECT_EQ(t.held_imm(), 1u);
  EXPECT_EQ(t.on_packet(m0[0]), MsgVerdict::kCompleted);
  ASSERT_EQ(t.pop_completions(out), 1u);
  EXPECT_EQ(out[0].msn, 1u);
  EXPECT_EQ(t.held_imm(), 0u);
  // A full span stops the release; the next call continues.
  const auto m2 = cut(2, 0, true, 20, 1);  // zero-length WRITE_ONLY_IMM
  const auto m3 = cut(3, 1, true, 30, 2);
  ASSERT_EQ(m2.size(), 1u);
  EXPECT_EQ(t.on_packet(m3[0]), MsgVerdict::kCompleted);
  EXPECT_EQ(t.on_packet(m2[0]), MsgVerdict::kCompleted);
  std::array<MsgCompletion, 1> one{};
  ASSERT_EQ(t.pop_completions(one), 1u);
  EXPECT_EQ(one[0].imm, 20u);
  ASSERT_EQ(t.pop_completions(one), 1u);
  EXPECT_EQ(one[0].imm, 30u);
}

// 4. Duplicates of complete or released messages, and a second LAST.
TEST(MrcMsgTracker, Duplicates) {
  MsgTracker t(0, kPmtu, 4);
  const auto m0 = cut(0, 3 * kPmtu, true, 1, 0);
  EXPECT_EQ(t.on_packet(m0[2]), MsgVerdict::kAccepted);
  EXPECT_EQ(t.on_packet(m0[2]), MsgVerdict::kDuplicate);  // second LAST
  EXPECT_EQ(t.on_packet(m0[0]), MsgVerdict::kAccepted);
  EXPECT_EQ(t.on_packet(m0[1]), MsgVerdict::kCompleted);
  EXPECT_EQ(t.on_packet(m0[1]), MsgVerdict::kDuplicate);  // complete, not released
  std::array<MsgCompletion, 4> out{};
  EXPECT_EQ(t.pop_completions(out), 1u);
  EXPECT_EQ(t.on_packet(m0[0]), MsgVerdict::kDuplicate);  // released
  EXPECT_EQ(t.bytes_received(), 3 * kPmtu);
}

// 5. Bad shapes are refused without counting.
TEST(MrcMsgTracker, Invalid) {
  MsgTracker t(0, kPmtu, 4);
  MsgPacket p = cut(0, 3 * kPmtu, false)[1];
  MsgPacket q = p;
  q.msg_offset = 100;  // not a PMTU multiple
  EXPECT_EQ(t.on_packet(q), MsgVerdict::kInvalid);
  q = p;
  q.payload = 500;  // short middle packet
  EXPECT_EQ(t.on_packet(q), MsgVerdict::kInvalid);
  q = p;
  q.last = true;  // LAST not at the end
  EXPECT_EQ(t.on_packet(q), MsgVerdict::kInvalid);
  q = p;
  q.msg_offset = 3 * kPmtu;  // past the end
  EXPECT_EQ(t.on_packet(q), MsgVerdict::kInvalid);
  q = p;
  q.has_imm = true;  // immediate on a middle packet
  EXPECT_EQ(t.on_packet(q), MsgVerdict::kInvalid);
  EXPECT_EQ(t.on_packet(p), MsgVerdict::kAccepted);
  q = cut(0, 4 * kPmtu, false)[0];  // length differs from the first packet's
  EXPECT_EQ(t.on_packet(q), MsgVerdict::kInvalid);
  EXPECT_EQ(t.bytes_received(), kPmtu);
}

// 6. Window and MSN wrap: at most max_msgs open; MSNs wrap at 2^32.
TEST(MrcMsgTracker, WindowAndMsnWrap) {
  MsgTracker t(0xFFFFFFFEu, kPmtu, 4);
  EXPECT_EQ(t.on_packet(cut(0xFFFFFFFEu + 4, 10, false)[0]), MsgVerdict::kOutOfWindow);
  for (uint32_t k = 3; k != 0xFFFFFFFFu; --k) {  // msn 1, 0, 0xFFFFFFFF, 0xFFFFFFFE
    EXPECT_EQ(t.on_packet(cut(0xFFFFFFFEu + k, 10, true, k, 0)[0]), MsgVerdict::kCompleted);
  }
  std::array<MsgCompletion, 8> out{};
  ASSERT_EQ(t.pop_completions(out), 4u);
  for (uint32_t k = 0; k < 4; ++k) EXPECT_EQ(out[k].imm, k);
  EXPECT_EQ(t.base_msn(), 2u);
  EXPECT_EQ(t.on_packet(cut(0xFFFFFFFFu, 10, false)[0]), MsgVerdict::kDuplicate);
}

}  // namespace
}  // namespace sf::nic::mrc
