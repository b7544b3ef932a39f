#include "nic/mrc/msg_tracker.h"

#include <cstdio>
#include <cstdlib>

namespace sf::nic::mrc {

const char* to_string(MsgVerdict v) {
  switch (v) {
    case MsgVerdict::kAccepted: return "accepted";
    case MsgVerdict::kCompleted: return "completed";
    case MsgVerdict::kDuplicate: return "duplicate";
    case MsgVerdict::kOutOfWindow: return "out_of_window";
    case MsgVerdict::kInvalid: return "invalid";
  }
  return "?";
}

MsgTracker::MsgTracker(uint32_t first_msn, uint32_t pmtu, uint32_t max_msgs)
    : pmtu_(pmtu), max_msgs_(max_msgs), base_(first_msn) {
  if (pmtu == 0 || max_msgs == 0 || max_msgs > (1u << 20) || (max_msgs & (max_msgs - 1)) != 0) {
    std::fprintf(stderr, "nic/mrc/msg_tracker: pmtu %u must be > 0, max_msgs %u a power of two in [1, 2^20]\n",
                 pmtu, max_msgs);
    std::abort();
  }
  entries_.resize(max_msgs);
  if (pmtu > 1 && (pmtu & (pmtu - 1)) == 0) pmtu_shift_ = static_cast<uint32_t>(__builtin_ctz(pmtu));
}

MsgVerdict MsgTracker::on_packet(const MsgPacket& p) {
  // MSN distance from the head, modulo 2^32.
  const int32_t d = static_cast<int32_t>(p.msn - base_);
  if (d < 0) return MsgVerdict::kDuplicate;  // released
  if (static_cast<uint32_t>(d) >= max_msgs_) return MsgVerdict::kOutOfWindow;

  // Shape of the packet within its message.
  const uint64_t end = uint64_t{p.msg_offset} + p.payload;
  const uint32_t misaligned = pmtu_shift_ != 0 ? p.msg_offset & (pmtu_ - 1) : p.msg_offset % pmtu_;
  if (misaligned != 0 || end > p.msg_length) return MsgVerdict::kInvalid;
  if (p.last ? end != p.msg_length : (p.payload != pmtu_ || end == p.msg_length)) return MsgVerdict::kInvalid;
  if (p.has_imm && !p.last) return MsgVerdict::kInvalid;

  Entry& e = entry(p.msn);
  if (!e.open) {
    e = Entry{};
    e.open = true;
    e.msn = p.msn;
    e.length = p.msg_length;
    const uint32_t up = p.msg_length + pmtu_ - 1;  // (32-bit, as it always was)
    e.expected = p.msg_length == 0 ? 1 : (pmtu_shift_ != 0 ? up >> pmtu_shift_ : up / pmtu_);
  } else {
    if (e.complete()) return MsgVerdict::kDuplicate;
    if (e.length != p.msg_length) return MsgVerdict::kInvalid;
  }
  if (p.last) {
    if (e.last_seen) return MsgVerdict::kDuplicate;
    e.last_seen = true;
    e.has_imm = p.has_imm;
    e.imm = p.imm;
    e.rqmsn = p.rqmsn;
  }
  ++e.received;
  bytes_ += p.payload;
  if (!e.complete()) return MsgVerdict::kAccepted;
  if (e.has_imm) ++held_imm_;
  return MsgVerdict::kCompleted;
}

std::size_t MsgTracker::pop_completions(std::span<MsgCompletion> out) {
  std::size_t n = 0;
  for (;;) {
    Entry& e = entry(base_);
    if (!e.complete() || e.msn != base_) break;
    if (e.has_imm) {
      if (n == out.size()) break;
      out[n++] = MsgCompletion{e.msn, e.length, e.imm, e.rqmsn};
      --held_imm_;
    }
    e.open = false;
    ++base_;
    ++released_;
  }
  return n;
}

}  // namespace sf::nic::mrc
