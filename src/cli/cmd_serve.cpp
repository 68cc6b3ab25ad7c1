// sparserl serve: the evaluation harness as an HTTP/1.1 JSON reward service for RL engines
// (verl, OpenRLHF, TRL). docs/reward-service.md has the API; src/serve/ the server.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/runner_choice.h"
#include "eval/evaluator.h"
#include "serve/bearer_token.h"
#include "serve/listen_address.h"
#include "serve/reward_server.h"
#include "sparse/error.h"

namespace sparserl::cli {

namespace {

struct serve_args {
  std::string listen = "127.0.0.1:8808", token_file, device = "auto", matrices, arch;
  int workers = 2, threads = 0, max_programs = 64, queue = 256, trials = 3;  // threads 0: workers
  size_t max_body = size_t{32} << 20;
  double timeout_s = 5;
};

// SIGINT/SIGTERM write a byte here; a thread reads it and stops the server (which is not
// async-signal-safe, so the handler itself only writes).
int signal_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int) {
  const char c = 's';
  const ssize_t written = write(signal_pipe[1], &c, 1);
  (void)written;
}

class stop_signals {
 public:
  explicit stop_signals(reward_server& server) {
    if (pipe(signal_pipe) != 0) throw error("serve: cannot create the signal pipe");
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
    watcher_ = std::thread([&server] { watch(server); });
  }
  ~stop_signals() {
    const char quit = 'q';
    const ssize_t written = write(signal_pipe[1], &quit, 1);
    (void)written;
    watcher_.join();
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    close(signal_pipe[0]);
    close(signal_pipe[1]);
  }

 private:
  static void watch(reward_server& server) {
    int signals = 0;
    char c = 0;
    while (read(signal_pipe[0], &c, 1) == 1 && c != 'q') {
      if (++signals > 1) {
        std::fprintf(stderr, "sparserl serve: second signal: exiting without draining\n");
        _exit(1);
      }
      std::fprintf(stderr,
                   "sparserl serve: stopping: answering the admitted requests (a second signal "
                   "exits at once)\n");
      server.stop();
    }
  }

  struct sigaction old_int_ {
  }, old_term_{};
  std::thread watcher_;
};

void run_serve(const serve_args& a) {
  const listen_address address = parse_listen_address(a.listen);
  if (a.trials < 1) throw error("--trials must be at least 1");
  if (a.timeout_s <= 0) throw error("--timeout must be positive");
  if (a.workers < 1) throw error("--workers must be at least 1");
  if (a.threads < 0) throw error("--threads must not be negative");
  serve_options options;
  options.workers = a.threads > 0 ? a.threads : a.workers;  // evaluation threads
  options.queue_capacity = a.queue;
  options.max_body_bytes = a.max_body;
  options.request.max_programs = a.max_programs;
  options.matrices_dir = a.matrices;
  if (!a.token_file.empty()) options.token = read_token_file(a.token_file);
  validate_serve_options(options);  // before the runner, which takes a while to start

  std::unique_ptr<program_runner> runner = make_runner(a.device, a.workers);
  options.executor = runner->name();
  eval_options eval_opts;
  eval_opts.trials = a.trials;
  eval_opts.compile.arch = a.arch.empty() ? device_arch(*runner) : a.arch;
  eval_opts.limits.launch_timeout_s = a.timeout_s;
  evaluator eval(*runner, eval_opts);

  reward_server server(eval, options);
  const int port = server.bind(address);
  listen_address bound = address;
  bound.port = port;
  if (!is_loopback_host(address.host) && options.token.empty())
    std::fprintf(stderr,
                 "sparserl serve: warning: %s is reachable from other machines and no --token is "
                 "set: anyone who reaches it can run programs here\n",
                 bound.to_string().c_str());
  const std::string gpu_workers =
      std::string(runner->name()) == "gpu" ? ", " + std::to_string(a.workers) + " GPU workers" : "";
  std::printf(
      "sparserl serve: listening on http://%s (executor %s%s, %d evaluation threads, "
      "queue %d)\n",
      bound.to_string().c_str(), runner->name(), gpu_workers.c_str(), options.workers, a.queue);
  std::fflush(stdout);
  {
    stop_signals signals(server);
    server.run();
  }
  std::printf("sparserl serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<serve_args>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve the evaluation harness as an HTTP JSON reward service (docs/reward-service.md)");
  cmd->add_option("--listen", args->listen,
                  "HOST:PORT to listen on; PORT alone binds loopback, port 0 a free port")
      ->capture_default_str();
  cmd->add_option("--token", args->token_file,
                  "file holding a bearer token that every evaluate/metrics request must send");
  // --workers are GPU worker processes, as in every command; until issue 19 they were serve's
  // evaluation threads too, so --threads defaults to them and old command lines mean the same.
  cmd->add_option("--workers", args->workers, "GPU worker processes")->capture_default_str();
  cmd->add_option("--threads", args->threads, "programs evaluated at once (default: --workers)");
  cmd->add_option("--device", args->device, "gpu, cpu (emulator) or auto")->capture_default_str();
  cmd->add_option("--max-body", args->max_body, "largest request body in bytes (413 above)")
      ->capture_default_str();
  cmd->add_option("--max-programs", args->max_programs, "programs per request (400 above)")
      ->capture_default_str();
  cmd->add_option("--queue", args->queue, "programs waiting for a worker (429 when full)")
      ->capture_default_str();
  cmd->add_option("--matrices,--dataset-dir", args->matrices,
                  "directory of .mtx/.mtx.gz files requests may name ({\"name\": FILE-STEM})");
  cmd->add_option("--trials", args->trials, "fresh random inputs each program is verified on")
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "seconds per trial before a run is killed")
      ->capture_default_str();
  cmd->add_option("--arch", args->arch,
                  "NVRTC --gpu-architecture (default: the GPU's, else sm_90)");
  cmd->callback([args] { run_serve(*args); });
}

}  // namespace sparserl::cli
