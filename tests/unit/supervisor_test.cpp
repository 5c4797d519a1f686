// The supervisor against a fake worker that speaks the protocol structs in-process: each
// candidate's behaviour is scripted (measured, invalid, a crash, a hang, nonsense, a refusal, a
// CUDA error after which the worker exits), and the fake records every request and every start.
#include <tuner/core/search/supervisor.hpp>

#include <csignal>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include <tuner/core/process/stop_signals.hpp>

namespace tune {
namespace {

struct Crash {
  int signal = SIGSEGV;
  std::string words;
};
struct Hang {};
struct Garbage {
  std::string line;
};
struct CudaError {
  std::string reason;
};
using Behaviour = std::variant<double, std::string, Crash, Hang, Garbage, RefusedAnswer, CudaError>;

// What every fake worker of one test shares: the script and what happened.
struct Fleet {
  std::map<std::string, Behaviour> script;  // by config id; unlisted: 1 ms
  WorkerHello hello = [] {
    WorkerHello h;
    h.ready = true;
    h.device = "Fake GPU";
    h.driver = "999.1";
    h.arch = "sm_90";
    return h;
  }();
  std::optional<Crash> dies_before_hello;
  bool hangs_before_hello = false;
  int started = 0;
  std::vector<std::string> requests;  // "measure <id>" or "runoff <id> <id>"
};

class FakeWorker : public WorkerConnection {
 public:
  explicit FakeWorker(Fleet& fleet) : fleet_(fleet), pid_(1000 + ++fleet.started) {
    if (fleet.dies_before_hello) {
      die(*fleet.dies_before_hello);
    } else if (fleet.hangs_before_hello) {
      hung_ = true;
    } else {
      WorkerHello h = fleet.hello;
      h.pid = pid_;
      lines_.push_back(encode(h));
    }
  }
  pid_t pid() const override { return pid_; }
  bool send(std::string_view line) override {
    if (dead_) return false;
    result<WorkerRequest> r = decode_request(line);
    EXPECT_TRUE(r) << line;
    if (const auto* m = std::get_if<MeasureRequest>(&*r)) {
      fleet_.requests.push_back("measure " + m->candidate.config.id());
      answer(m->candidate);
    } else {
      const auto& ro = std::get<RunoffRequest>(*r);
      fleet_.requests.push_back("runoff " + ro.incumbent.config.id() + " " +
                                ro.challenger.config.id());
      RunoffAnswer a;
      a.pairs.incumbent_ms.assign(20, ms(ro.incumbent.config));
      a.pairs.challenger_ms.assign(20, ms(ro.challenger.config));
      a.pairs.device = "Fake GPU";
      lines_.push_back(encode(a));
    }
    return true;
  }
  Subprocess::Read read(std::string& line, double) override {
    if (!lines_.empty()) {
      line = lines_.front();
      lines_.pop_front();
      return Subprocess::Read::line;
    }
    if (dead_) return Subprocess::Read::eof;
    return Subprocess::Read::timeout;  // hung: the deadline passes at once
  }
  ExitStatus wait() override {
    dead_ = true;
    return status_;
  }
  void kill() override {
    if (!dead_) status_ = ExitStatus{true, 0, SIGKILL};
    dead_ = true;
  }
  bool running() override { return !dead_; }
  std::string last_words() const override { return words_; }

 private:
  double ms(const Config& c) const {
    auto it = fleet_.script.find(c.id());
    return it != fleet_.script.end() && std::holds_alternative<double>(it->second)
               ? std::get<double>(it->second)
               : 1.0;
  }
  void die(const Crash& c) {
    dead_ = true;
    status_ = c.signal != 0 ? ExitStatus{true, 0, c.signal} : ExitStatus{false, 3, 0};
    words_ = c.words;
  }
  void answer(const CandidateRef& c) {
    auto it = fleet_.script.find(c.config.id());
    const Behaviour b = it == fleet_.script.end() ? Behaviour{1.0} : it->second;
    MeasureAnswer a;
    if (const double* t = std::get_if<double>(&b)) {
      a.state.value = MeasuredState{*t, *t, 50};
      a.device = "Fake GPU";
    } else if (const auto* reason = std::get_if<std::string>(&b)) {
      a.state.value = InvalidState{*reason};
    } else if (const auto* crash = std::get_if<Crash>(&b)) {
      return die(*crash);
    } else if (std::holds_alternative<Hang>(b)) {
      return;
    } else if (const auto* g = std::get_if<Garbage>(&b)) {
      lines_.push_back(g->line);
      return;
    } else if (const auto* refused = std::get_if<RefusedAnswer>(&b)) {
      lines_.push_back(encode(*refused));
      return;
    } else {
      a.state.value = InvalidState{std::get<CudaError>(b).reason};
      a.exiting = true;
      status_ = ExitStatus{false, 3, 0};
    }
    lines_.push_back(encode(a));
  }

  Fleet& fleet_;
  pid_t pid_;
  std::deque<std::string> lines_;
  bool dead_ = false;
  bool hung_ = false;
  ExitStatus status_;
  std::string words_;
};

std::vector<Config> blocks(std::vector<int> values) {
  std::vector<Config> out;
  for (int v : values)
    out.push_back(Config{{"BLOCK", v}});
  return out;
}

std::string id(int block) {
  return Config{{"BLOCK", block}}.id();
}

class SupervisorTest : public ::testing::Test {
 protected:
  std::unique_ptr<Supervisor> make(std::vector<int> values, SupervisorOptions options = {}) {
    std::vector<std::string> keys;
    for (int v : values)
      keys.push_back("key" + std::to_string(v));
    auto s = std::make_unique<Supervisor>(
        blocks(values), keys, [this] { return std::make_unique<FakeWorker>(fleet_); }, options);
    s->on_note([this](const std::string& n) { notes_.push_back(n); });
    return s;
  }
  Fleet fleet_;
  std::vector<std::string> notes_;
};

TEST_F(SupervisorTest, EachFailureIsAnInvalidTrialAndCostsOneWorker) {
  fleet_.script = {{id(128), Crash{SIGSEGV, "fake: segfault in tile loop"}},
                   {id(256), Hang{}},
                   {id(512), CudaError{"CUDA_ERROR_ILLEGAL_ADDRESS: boom"}},
                   {id(1024), Garbage{"nonsense"}},
                   {id(2048), RefusedAnswer{"bad request"}},
                   {id(4096), std::string("check failed")},
                   {id(64), 2.0}};
  SupervisorOptions options;
  options.timeout_s = 1;
  auto s = make({64, 128, 256, 512, 1024, 2048, 4096, 32}, options);
  auto reason = [&](std::size_t i) {
    const Trial t = s->measure(i);
    return t.is_measured() ? std::string("measured") : t.state.invalid()->reason;
  };
  EXPECT_EQ(reason(0), "measured");
  EXPECT_EQ(reason(1), "worker died: killed by signal SIGSEGV: fake: segfault in tile loop");
  EXPECT_EQ(reason(2), "timed out after 1 s");
  EXPECT_EQ(reason(3), "CUDA_ERROR_ILLEGAL_ADDRESS: boom");
  EXPECT_EQ(reason(4), "unreadable answer from the worker: 'nonsense'");
  EXPECT_EQ(reason(5), R"(the worker refused the request: "bad request")");
  EXPECT_EQ(reason(6), "check failed");  // an invalid candidate keeps its worker
  EXPECT_EQ(reason(7), "measured");
  // The first worker, and one after each of the five that were dropped.
  EXPECT_EQ(s->workers_started(), 6);
  EXPECT_EQ(fleet_.started, 6);
  EXPECT_EQ(s->device(), "Fake GPU");
  EXPECT_EQ(s->driver(), "999.1");
  ASSERT_EQ(notes_.size(), 5u);
  EXPECT_EQ(notes_[0],
            "worker pid 1001 died (killed by signal SIGSEGV); the next candidate gets "
            "a fresh worker");
  EXPECT_EQ(notes_[1],
            "worker pid 1002 timed out after 1 s and was killed; the next candidate "
            "gets a fresh worker");
  EXPECT_EQ(notes_[2],
            "worker pid 1003 exited after a CUDA error (its context cannot be "
            "trusted); the next candidate gets a fresh worker");
  EXPECT_EQ(notes_[3],
            "worker pid 1004 answered something unreadable and was killed; the next "
            "candidate gets a fresh worker");
  EXPECT_EQ(notes_[4],
            "worker pid 1005 refused a request and was killed; the next candidate "
            "gets a fresh worker");
}

TEST_F(SupervisorTest, SkippedCandidatesNeverReachAWorker) {
  auto s = make({32, 64});
  s->skip_when([](std::size_t i) {
    return i == 0 ? std::optional<std::string>("not compiled") : std::nullopt;
  });
  EXPECT_EQ(s->measure(0).state.invalid()->reason, "not compiled");
  EXPECT_EQ(fleet_.started, 0);  // a cached failure costs no GPU time
  EXPECT_TRUE(s->measure(1).is_measured());
  EXPECT_EQ(fleet_.requests, std::vector<std::string>{"measure " + id(64)});
  // A finalist that cannot be loaded forfeits without a worker.
  std::optional<RunoffPairs> pairs = s->runoff(1, 0);
  ASSERT_TRUE(pairs);
  EXPECT_EQ(pairs->challenger_failure, "not compiled");
  EXPECT_EQ(fleet_.requests.size(), 1u);
}

TEST_F(SupervisorTest, RunoffPairsComeBackAndNonsenseIsAFailure) {
  fleet_.script = {{id(64), 2.0}, {id(128), 1.0}};
  auto s = make({64, 128});
  std::optional<RunoffPairs> pairs = s->runoff(0, 1);
  ASSERT_TRUE(pairs);
  EXPECT_FALSE(pairs->failure);
  EXPECT_EQ(pairs->incumbent_ms, std::vector<double>(20, 2.0));
  EXPECT_EQ(pairs->challenger_ms, std::vector<double>(20, 1.0));
  EXPECT_EQ(fleet_.requests.back(), "runoff " + id(64) + " " + id(128));

  fleet_.script[id(64)] = Crash{SIGKILL, ""};  // only measure requests follow the script
  auto crashing = make({64});
  EXPECT_EQ(crashing->measure(0).state.invalid()->reason, "worker died: killed by signal SIGKILL");
}

TEST_F(SupervisorTest, AWorkerThatCannotStartStopsTheTune) {
  auto not_ready = [&] {
    fleet_.hello.ready = false;
    fleet_.hello.error = "no CUDA driver: libcuda.so.1 not found";
    return make({64});
  }();
  try {
    not_ready->measure(0);
    FAIL() << "expected WorkerStartFailure";
  } catch (const WorkerStartFailure& e) {
    EXPECT_STREQ(e.what(),
                 "the measuring worker did not start: no CUDA driver: libcuda.so.1 not found");
  }

  fleet_.hello.ready = true;
  fleet_.hello.protocol = 7;
  SupervisorOptions options;
  options.rebuild_hint = "cmake --build build --target gemm.runner";
  auto other_protocol = make({64}, options);
  try {
    other_protocol->measure(0);
    FAIL() << "expected WorkerStartFailure";
  } catch (const WorkerStartFailure& e) {
    EXPECT_STREQ(e.what(),
                 "the measuring worker did not start: it speaks worker protocol 7 and this "
                 "tuner speaks 1: rebuild it (cmake --build build --target gemm.runner)");
  }

  fleet_.hello.protocol = worker_protocol_version;
  fleet_.dies_before_hello = Crash{0, "no CUDA device: none found"};
  auto dies = make({64});
  EXPECT_THROW(
      {
        try {
          dies->measure(0);
        } catch (const WorkerStartFailure& e) {
          EXPECT_STREQ(e.what(),
                       "the measuring worker did not start: exit status 3: no CUDA "
                       "device: none found");
          throw;
        }
      },
      WorkerStartFailure);

  fleet_.dies_before_hello.reset();
  fleet_.hangs_before_hello = true;
  SupervisorOptions quick;
  quick.start_timeout_s = 2;
  quick.timeout_s = 1;
  auto silent = make({64}, quick);
  EXPECT_THROW(silent->measure(0), WorkerStartFailure);
}

TEST_F(SupervisorTest, AStopSignalAbandonsTheCandidate) {
  auto s = make({64, 128});
  EXPECT_TRUE(s->measure(0).is_measured());
  StopSignals stop;
  std::raise(SIGTERM);
  try {
    s->measure(1);
    FAIL() << "expected Interrupted";
  } catch (const Interrupted& i) {
    EXPECT_EQ(i.signal, SIGTERM);
  }
  EXPECT_EQ(fleet_.requests.size(), 1u);  // the second candidate was never sent
}

TEST_F(SupervisorTest, ConfigsAndKeysMustPair) {
  EXPECT_THROW(Supervisor(blocks({1, 2}), {"k1"}, nullptr, {}), error);
}

}  // namespace
}  // namespace tune
