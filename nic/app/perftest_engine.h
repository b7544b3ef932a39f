// The perftest workloads of sf-nic (write/read/send x bw/lat, server and
// client) as verbs programs on one host of a NicNode, run by the node's
// thread through App::poll(). A Workload is set up and connected on the
// control path (before the driver runs: verbs objects, buffers, QP info for
// the out-of-band exchange, RESET -> RTS), then driven per poll.
//
// What each test does (as perftest does it, docs/nic-app.md):
//  *_bw   client keeps up to tx_depth WRs outstanding per QP (message m to
//         remote slot m % slots), posted as one list per QP per poll (one
//         post_send call), every cq_moderation()-th signalled (perftest's CQ
//         moderation) and the last of each list too, so a completion stands
//         for every earlier message of its QP (RC completes in order); the
//         server is passive (READ: its buffer holds the pattern; SEND: it keeps
//         receives posted).
//  write_lat  ping-pong: each side WRITEs into the other's buffer and polls
//         the last byte of its own for the iteration's marker.
//  send_lat   ping-pong with SEND / receive completions.
//  read_lat   client READs, one outstanding.
// --verify: every message carries pattern_byte(qp, message, offset); WRITEs
// become WRITE_WITH_IMM (imm = message index) so the server sees each one
// land and checks it; SEND receivers and READ requesters check theirs.
//
// Threading: setup/connect on the control thread before the loop, poll() on
// the node's thread; set_peer_done() and traffic_done() are the only calls
// from the OOB threads (atomics). Allocation: setup only; poll() allocates
// nothing (sample arrays are reserved at connect).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nic/app/qp_conn_info.h"
#include "nic/app/sf_nic_config.h"
#include "nic/host/nic_node.h"
#include "nic/verbs/device.h"

namespace sf::nic::app {

// Byte `offset` of message `msg` on QP `qp`: what --verify writes and checks.
inline uint8_t pattern_byte(uint32_t qp, uint64_t msg, uint64_t offset) {
  return static_cast<uint8_t>((msg * 0x9E3779B1ull >> 11) + offset * 31 + qp * 7);
}

// Latency samples are kept for up to this many iterations; per-message
// post/completion times for perftest's BW peak for the first kMaxPeakMessages
// messages only (the peak search is quadratic in the messages it looks at).
inline constexpr uint64_t kMaxRecordedMessages = 1u << 22;
inline constexpr uint64_t kMaxPeakMessages = 8192;

struct WorkloadResult {
  std::string status = "ok";  // "ok", an ibv_wc_status string, or why it failed
  bool failed = false;
  uint64_t messages = 0;      // completed (client) / received and checked (server with verify)
  uint64_t bytes = 0;         // message bytes of those
  TimeNs first_post = TimeNs::max();
  TimeNs last_completion{0};
  uint64_t verify_errors = 0;
  uint64_t first_bad_message = 0;  // valid when verify_errors > 0
  std::vector<TimeNs> posted;      // bw client: per message, when recorded
  std::vector<TimeNs> completed;
  std::vector<TimeNs> lat_posts;   // lat client: post time of each round trip
  std::vector<TimeNs> lat_replies; // paced lat client (interval_us): when each round trip's reply was seen
  uint64_t lat_round_trips = 0;
  uint64_t post_send_calls = 0;    // client: post_send calls that posted (bw: one list per QP per poll)
  uint64_t send_completions = 0;   // client: send CQEs polled (bw: moderated, cq_moderation())
  TimeNs connected_at{0};          // connect(): the origin of start_ms (and of report times)
};

class Workload {
 public:
  // Creates the verbs objects and the buffer (control path). Throws
  // std::runtime_error naming the workload when a verbs call fails.
  Workload(const AppWorkload& cfg, const AppHost& host, NicNode& node, size_t host_index);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // What the peer needs per QP (QPN, PSN, rkey, VA, GID, MAC, MTU, size).
  const std::vector<QpConnInfo>& local_info() const { return local_; }
  // RESET -> INIT -> RTR -> RTS toward `peer` (one entry per QP, same count).
  // Returns an error message, or "" on success. Control path.
  std::string connect(std::span<const QpConnInfo> peer, TimeNs now);
  // Before connect, on a routed host (docs/nic-app.md "Routed fabrics"):
  // empty when every port the workload sends on reaches `peer` (on link or
  // through a resolved gateway), else why not, naming the port. sf-nic and
  // sf-sim ask it once the node's Neighbors settled.
  std::string route_error(std::span<const QpConnInfo> peer) const;

  // Node thread.
  void poll(TimeNs now);
  TimeNs next_wakeup(TimeNs now) const;

  // Client: all messages completed (or the duration is over and nothing is
  // outstanding), or the workload failed. Server: what it had to do is done
  // (bw: at once; lat: responded to every iteration). Any thread.
  bool traffic_done() const { return traffic_done_.load(std::memory_order_acquire); }
  // The peer said DONE at the barrier (OOB thread).
  void set_peer_done() { peer_done_.store(true, std::memory_order_release); }
  bool peer_done() const { return peer_done_.load(std::memory_order_acquire); }
  bool finished() const { return traffic_done() && peer_done(); }
  // write_bw / read_bw server: the client's result, received over OOB after
  // DONE (perftest's server prints the client's BW table). Set by the OOB
  // thread before set_peer_done(); read once peer_done().
  struct PeerBw {
    uint64_t messages = 0;
    TimeNs elapsed;        // first post to last completion
    TimeNs best_msg_time;  // perftest's peak: shortest average time per message (0 = none)
  };
  void set_peer_bw(const PeerBw& r) { peer_bw_ = r; }
  const std::optional<PeerBw>& peer_bw() const { return peer_bw_; }
  // A latency client posts no new round trip from now on (stop_with_others:
  // the process's other clients are done); done once the last reply is in.
  // Node thread.
  void stop_posting() { posting_ = false; }

  const AppWorkload& config() const { return cfg_; }
  const AppHost& host() const { return host_; }
  // The port its QPs are bound to (config().port) and its addresses.
  const AppPort& port() const { return port_; }
  const WorkloadResult& result() const { return res_; }
  size_t num_qps() const { return qps_.size(); }
  const verbs::Qp& qp(size_t i) const { return *qps_[i].qp; }
  // The peer's info of QP i (valid after connect()).
  const QpConnInfo& peer_info(size_t i) const { return qps_[i].peer; }
  uint32_t path_mtu_bytes() const { return mtu_bytes_; }
  // Bandwidth tests: WRs outstanding per QP at most, and every how many a
  // completion is asked for (tx_depth / 4, at most perftest's 100: the
  // window is refilled before it drains below 3/4; perftest's own default
  // is 100 at tx_depth 128).
  uint64_t bw_depth() const { return bw_depth_; }
  uint32_t cq_moderation() const { return cq_mod_; }

 private:
  struct QpRun {
    verbs::Qp* qp = nullptr;
    uint8_t* region = nullptr;  // this QP's slots in the buffer
    QpConnInfo peer;
    uint64_t posted = 0;        // messages posted (client) / responses posted (lat server)
    uint64_t completed = 0;     // send completions
    uint64_t received = 0;      // receive completions / markers seen
    uint64_t recv_posted = 0;   // receive WRs posted
    // bw client: the WR list posted per poll (bw_depth_ entries, filled at
    // connect; per message only wr_id, addresses, imm, flags and next change).
    std::vector<verbs::SendWr> wrs;
    std::vector<verbs::Sge> sges;
    uint64_t next_slot = 0;     // slot of message `posted` (posted % slots_)
    uint64_t next_signal = 0;   // the next message signalled by moderation
  };

  bool client() const { return cfg_.role == Role::kClient; }
  std::string configure_mrc(QpRun& q, const QpConnInfo& p);
  void fail(std::string why);
  uint8_t* slot(QpRun& q, uint64_t msg) { return q.region + (msg % slots_) * cfg_.size_bytes; }
  void fill(uint32_t qi, uint8_t* dst, uint64_t msg) const;
  bool check(uint32_t qi, const uint8_t* src, uint64_t msg);
  int post_one(uint32_t qi, uint64_t msg, TimeNs now);
  // bw client: posts up to `n` messages of QP `qi` as one list; returns
  // post_send's result (the messages before a bad WR stay posted).
  int post_bw_list(uint32_t qi, uint64_t n, TimeNs now);
  void note_first_post(TimeNs now);
  int post_recv_one(uint32_t qi);
  void poll_send_cq(TimeNs now);
  void poll_recv_cq(TimeNs now);
  void poll_bw_client(TimeNs now);
  // write_lat's ping-pong: the starter posts iteration j, then waits for
  // the peer's j; the answerer waits for j, then posts j. sf-nic's own
  // exchange: the client starts. perftest's (oob_format perftest): its
  // ib_write_lat server starts (perftest 4.5's run_iter_lat_write), so ours
  // does, and our client answers and measures. Other tests: the client.
  bool lat_starter() const;
  // A latency round trip counted (the reply's time kept when `reply`).
  void count_round_trip(TimeNs now, bool reply);
  // The starter's next post on QP qi when it is idle and due; false if the
  // workload failed.
  bool start_round_trip(uint32_t qi, TimeNs now, bool over);
  void poll_write_lat(TimeNs now);
  void poll_lat(TimeNs now);
  void update_done(TimeNs now);

  AppWorkload cfg_;
  AppHost host_;
  AppPort port_;
  NicNode& node_;
  std::unique_ptr<verbs::Context> ctx_;
  verbs::Pd* pd_ = nullptr;
  verbs::Cq* scq_ = nullptr;
  verbs::Cq* rcq_ = nullptr;
  verbs::Mr* mr_ = nullptr;
  // calloc'd: pages the run never writes stay the kernel's shared zero page
  // (a client's 1 MiB buffer is only read), so memory follows the data.
  struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, FreeDeleter> buf_;
  uint64_t buf_bytes_ = 0;
  uint64_t slots_ = 1;           // message slots per QP
  uint32_t mtu_bytes_ = 0;
  uint64_t target_ = 0;          // messages per QP (0 = duration mode)
  uint64_t bw_depth_ = 1;
  uint32_t cq_mod_ = 1;
  std::vector<QpRun> qps_;
  std::vector<QpConnInfo> local_;
  TimeNs start_at_{0};           // client: traffic starts here
  TimeNs stop_posting_at_ = TimeNs::max();
  TimeNs next_post_at_{0};       // lat client with interval_us: the next round trip not before
  bool connected_ = false;
  bool posting_ = true;
  std::atomic<bool> traffic_done_{false};
  std::atomic<bool> peer_done_{false};
  std::optional<PeerBw> peer_bw_;
  WorkloadResult res_;
};

// The NicNode of an sf-nic process: node ports in host order and each
// host's ports in port_num order (host 0's ports first), each at its speed
// with its own addresses, honouring PFC when the host has pfc_enable
// priorities. node_ports_of lists (host index, port_num) per node port.
NicConfig nic_config_of(const AppConfig& cfg);
std::vector<std::pair<size_t, uint8_t>> node_ports_of(const AppConfig& cfg);
// True for the DPDK virtual devices whose transmit copies frames with the CPU
// and frees them (memif in copy mode, null, pcap, tap): sf-nic gives hosts on them zero-copy
// transmit (HostConfig::tx_zero_copy); a DMA device would need the MR's
// IOVA. nic_config_of leaves it off: a simulator keeps frames in its links
// past the workloads' lifetime (sf-sim), a driver frees them at tx_burst.
bool copies_with_cpu(const std::string& devargs);

// The App the NicNode runs: the workloads' polls, in the order they were
// added. Cost follows the work (DESIGN): a poll runs the workloads of the
// hosts the node touched since the last one (touch_host: a frame received,
// a timer fired, a frame sent; the only ways a workload's CQs, send queue
// room or memory change) and those whose own deadline (start, stop, the
// next paced round trip) has come, kept in a min-heap; the others' polls
// would do nothing. The stop_with_others clients are stopped (and polled)
// once every other client has finished its traffic, counted as they finish.
// Workloads are added and connected before the engine first runs.
class PerftestEngine final : public App {
 public:
  void add(Workload* w);
  void poll(TimeNs now) override;
  TimeNs next_wakeup(TimeNs now) const override;
  void touch_host(size_t host) override;
  // Every workload polled at the next poll (after a change the engine did
  // not see, e.g. a connect() after it ran).
  void touch_all();

 private:
  struct Due {
    TimeNs at;
    uint32_t w;
    bool operator>(const Due& o) const { return at > o.at || (at == o.at && w > o.w); }
  };
  void mark(uint32_t w);
  // Files w's next_wakeup(now) in the heap when it changed.
  void file(uint32_t w, TimeNs now) const;
  void prime(TimeNs now) const;

  std::vector<Workload*> workloads_;
  std::vector<std::vector<uint32_t>> by_host_;   // host index -> its workloads
  std::vector<uint8_t> dirty_;                   // per workload
  std::vector<uint32_t> dirty_list_;
  std::vector<uint32_t> polling_;                // scratch: this poll's workloads, sorted
  std::vector<uint32_t> stop_with_others_;
  uint32_t others_running_ = 0;                  // clients (not stop_with_others) not done
  bool others_done_ = false;
  std::vector<uint8_t> counted_done_;            // per workload: left others_running_
  // Deadlines: the filed time per workload and a lazy min-heap (stale
  // entries, whose time is no longer the filed one, are dropped at the top).
  mutable std::vector<TimeNs> wake_at_;
  mutable std::vector<Due> heap_;
  mutable bool primed_ = false;
};

}  // namespace sf::nic::app
