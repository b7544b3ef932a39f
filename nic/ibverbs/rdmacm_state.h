// libsfrdmacm's objects and the CM machinery shared by its two files
// (docs/ibverbs.md "RDMA CM"):
//   rdmacm_service.cc  the device, the CM messages over TCP, the service thread, events
//   rdmacm.cc          the exported librdmacm entry points (RDMACM_1.0)
// Threading: every object here is guarded by State::mu; the service thread
// and the application's calls take it for each step.
#pragma once
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sf::nic::ibverbs::cm {

// ---- wire format of the CM messages (one TCP stream per connection) ----------------

enum class MsgType : uint8_t { kReq = 1, kRep = 2, kRtu = 3, kRej = 4, kDreq = 5, kDrep = 6 };

constexpr uint32_t kMagic = 0x5346434d;  // "SFCM"
constexpr uint8_t kVersion = 1;
constexpr size_t kMaxPrivate = 224;
// librdmacm's private data limits for RDMA_PS_TCP (rdma_connect(3), rdma_accept(3), rdma_reject(3)):
// the IB CM message's private data less the 36-byte CMA header on a REQ.
constexpr uint8_t kReqPrivate = 56;
constexpr uint8_t kRepPrivate = 196;
constexpr uint8_t kRejPrivate = 148;
// REJ reasons (IBA 12.6.7.2), the event's status as the kernel CM reports them.
constexpr int kRejInvalidServiceId = 8;   // no listener on the port
constexpr int kRejConsumerDefined = 28;   // rdma_reject
constexpr uint8_t kMaxRdAtomic = 16;      // the NIC's limit (ibv_query_device max_qp_rd_atom)

// Fixed size, every multi-byte field big-endian (written with hton*).
struct Msg {
  uint32_t magic;
  uint8_t version;
  uint8_t type;
  uint8_t pd_len;
  uint8_t responder_resources;
  uint8_t initiator_depth;
  uint8_t retry_count;
  uint8_t rnr_retry_count;
  uint8_t flow_control;
  uint8_t srq;
  uint8_t pad;
  uint16_t reason;  // REJ
  uint32_t qpn;
  uint32_t psn;
  uint8_t gid[16];
  uint32_t ip;  // the sender's RDMA IPv4 address (network order)
  uint8_t private_data[kMaxPrivate];
};
static_assert(sizeof(Msg) == 268, "CM message size is part of the wire format");

// ---- objects -----------------------------------------------------------------------

struct Channel;

struct Event {
  rdma_cm_event ev;
  uint8_t pdata[kMaxPrivate];
};

enum class IdState {
  kIdle,
  kBound,
  kListening,
  kAddrResolved,
  kRouteResolved,
  kTcpConnecting,  // rdma_connect: the TCP connection is being made
  kTcpRetry,       // refused (no listener yet): tried again at retry_at
  kReqSent,
  kAwaitReq,       // accepted TCP connection, REQ not yet read (internal)
  kReqRcvd,        // CONNECT_REQUEST reported
  kRepSent,
  kConnected,
  kDisconnecting,  // DREQ sent
  kDisconnected,
  kRejected,
};

struct Remote {
  uint32_t qpn = 0, psn = 0;
  ibv_gid gid{};
  uint8_t responder_resources = 0, initiator_depth = 0, retry_count = 0, rnr_retry_count = 0;
};

struct Id {
  rdma_cm_id id;  // first: rdma_cm_id* == Id*
  IdState st = IdState::kIdle;
  int fd = -1;
  Msg rx{};
  size_t rx_len = 0;
  Id* listen = nullptr;  // the listener an accepted id came from
  bool visible = true;   // handed to the application
  Remote rem;
  uint32_t psn = 0;
  uint8_t resp_res = 0, init_depth = 0, retry = 7, rnr_retry = 7;
  uint8_t tos = 0, timeout = 14;
  bool own_cqs = false;
  std::chrono::steady_clock::time_point refused_until{};  // a refusal before this is retried
  std::chrono::steady_clock::time_point retry_at{};
};

struct Channel {
  rdma_event_channel ch;  // first
  std::deque<Event*> q;
  bool signalled = false;  // the eventfd holds a non-zero count
};

struct State {
  std::mutex mu;
  std::vector<Id*> ids;
  std::vector<Channel*> channels;
  int wake_fd = -1;
  bool thread_started = false;
  // The device (the process's first, opened once).
  bool dev_tried = false;
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  uint32_t ip = 0;  // network order
  int gid_index = -1;
  ibv_gid gid{};
  ibv_mtu mtu = IBV_MTU_1024;
  // SFVERBS_CM_HOSTS
  bool hosts_parsed = false;
  bool hosts_ok = true;
  std::vector<std::pair<uint32_t, uint32_t>> hosts;
  int connect_ms = 1000;  // SFVERBS_CM_CONNECT_MS
  std::mt19937 rng{std::random_device{}()};
};

inline State& S() {
  static State* s = new State();  // never destroyed: the service thread may outlive static destruction
  return *s;
}
inline int fail(int e) {
  errno = e;
  return -1;
}
inline Id* id_of(rdma_cm_id* id) { return reinterpret_cast<Id*>(id); }
inline Channel* ch_of(rdma_event_channel* c) { return reinterpret_cast<Channel*>(c); }
inline bool live(State& s, Id* id) { return std::find(s.ids.begin(), s.ids.end(), id) != s.ids.end(); }
inline bool is_v4(const sockaddr* a) { return a != nullptr && a->sa_family == AF_INET; }
inline const sockaddr_in* v4(const sockaddr* a) { return reinterpret_cast<const sockaddr_in*>(a); }

// ---- rdmacm_service.cc (all under State::mu unless said) ----

void wake(State& s);  // the service thread re-reads its socket set
// SFVERBS_CM_HOSTS / SFVERBS_CM_CONNECT_MS, once; false (and a message) when bad.
bool parse_hosts(State& s);
uint32_t tcp_addr(State& s, uint32_t rdma_ip);
bool open_device(State& s);
void attach_device(State& s, Id* id);
void queue_event(Id* id, rdma_cm_event_type type, int status, Id* listen = nullptr, const Msg* m = nullptr,
                 uint8_t pd_len = 0);
void close_fd(Id* id);
bool send_msg(Id* id, MsgType t, const void* pdata, uint8_t pd_len, State& s, uint16_t reason = 0);
int connect_qp(State& s, Id* id);
void qp_to_err(Id* id);
void lost(State& s, Id* id, int err);
void tcp_connect(State& s, Id* x);
bool start_service(State& s);
void drop_events(Id* id);
void free_id(State& s, Id* id);
int create_cqs(Id* id, uint32_t send_wr, uint32_t recv_wr);
void destroy_cqs(Id* id);

}  // namespace sf::nic::ibverbs::cm
