// MsgTracker: the MRC responder's per-message completion tracking for
// out-of-order placement (docs/mrc.md "Transport building blocks",
// endpoint.md 3.2). Pure bookkeeping: the transport checks the MR and copies
// each packet's payload to its RETH address; this class counts the packets of
// each message (by METH msn and msg_offset), says when a message is complete,
// and releases WRITE_IMM completions in message order: an immediate that
// arrives early is held until every earlier message (IMM or not) is complete,
// so a completion implies all earlier writes are placed, as in RC.
//
// Packets are the PMTU-sized pieces of a message: every packet but the last
// carries exactly `pmtu` bytes at msg_offset = k * pmtu, the last ends at the
// message length (a 0-byte message is one packet). Anything else is kInvalid
// (NACK INVALID_REQUEST). Per-packet duplicates inside an open message are
// caught upstream by PSN (SackTracker: a PSN is accepted once); this class
// ignores packets of released or already complete messages and a second
// LAST packet.
//
// Fixed capacity: `max_msgs` messages open at once (a power of two),
// allocated at construction; no allocation afterwards. One lcore.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace sf::nic::mrc {

enum class MsgVerdict : uint8_t {
  kAccepted,     // counted; the message is not complete yet
  kCompleted,    // counted, and this packet completed its message
  kDuplicate,    // message already complete or released, or a second LAST: ignored
  kOutOfWindow,  // msn too far ahead (max_msgs open): NACK, not placed
  kInvalid,      // offset / length / size inconsistent: NACK INVALID_REQUEST
};
const char* to_string(MsgVerdict v);

// What the transport read from one data packet (METH, RETH, ImmDt).
struct MsgPacket {
  uint32_t msn = 0;
  uint32_t msg_offset = 0;
  uint32_t payload = 0;     // payload bytes of this packet
  uint32_t msg_length = 0;  // RETH DMA length: the whole message
  bool last = false;        // opcode LAST / ONLY (METH LAST)
  bool has_imm = false;     // WRITE_LAST_IMM / WRITE_ONLY_IMM
  uint32_t imm = 0;
  uint16_t rqmsn = 0;
};

// A WRITE_IMM completion, released in message order.
struct MsgCompletion {
  uint32_t msn = 0;
  uint32_t length = 0;
  uint32_t imm = 0;
  uint16_t rqmsn = 0;
};

class MsgTracker {
 public:
  // `first_msn`: the first message expected; `pmtu` > 0; `max_msgs`: a power
  // of two in [1, 2^20].
  MsgTracker(uint32_t first_msn, uint32_t pmtu, uint32_t max_msgs);

  MsgVerdict on_packet(const MsgPacket& p);

  // Releases, in message order, the completions of the complete messages at
  // the head (a non-IMM message is released without a completion). Stops at
  // the first incomplete message or when `out` is full; returns how many
  // completions it wrote.
  std::size_t pop_completions(std::span<MsgCompletion> out);

  uint32_t base_msn() const { return base_; }  // oldest message not released
  // IMM completions held behind an incomplete predecessor (or not popped yet).
  uint32_t held_imm() const { return held_imm_; }
  uint64_t messages_released() const { return released_; }
  uint64_t bytes_received() const { return bytes_; }

 private:
  struct Entry {
    bool open = false;
    bool last_seen = false;
    bool has_imm = false;
    uint32_t msn = 0;
    uint32_t length = 0;
    uint32_t expected = 0;  // packets in the message
    uint32_t received = 0;
    uint32_t imm = 0;
    uint16_t rqmsn = 0;
    bool complete() const { return open && received == expected; }
  };
  Entry& entry(uint32_t msn) { return entries_[msn & (max_msgs_ - 1)]; }

  uint32_t pmtu_;
  uint32_t pmtu_shift_ = 0;  // log2(pmtu_) when a power of two (every path MTU), else 0 and divisions
  uint32_t max_msgs_;
  uint32_t base_;
  uint32_t held_imm_ = 0;
  uint64_t released_ = 0;
  uint64_t bytes_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace sf::nic::mrc
