// `sparserl serve` through the real binary: bad options are one-line errors with exit 1 before
// anything listens.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli_testing.h"

namespace sparserl {
namespace {

class ServeCli : public testing::cli_test {};

TEST_F(ServeCli, BadOptionsAreOneLineErrors) {
  expect_one_line_error("serve --device cpu --listen nope:xx", "--listen nope:xx: port \"xx\"");
  expect_one_line_error("serve --device cpu --listen ::1:80", "brackets");
  expect_one_line_error("serve --device cpu --max-programs 10 --queue 5",
                        "--max-programs 10 is above --queue 5");
  expect_one_line_error("serve --device cpu --workers 0", "--workers must be at least 1");
  expect_one_line_error("serve --device cpu --threads -1", "--threads must not be negative");
  expect_one_line_error("serve --device cpu --token " + path("missing"), "cannot open");
  std::ofstream(path("empty-token")) << "\n";
  expect_one_line_error("serve --device cpu --token " + path("empty-token"), "is empty");
  expect_one_line_error("serve --device cpu --matrices " + path("none"), "cannot list");
  expect_one_line_error("serve --device tpu", "--device tpu");
}

// --threads are the evaluations at once; --workers, as in every command, GPU worker processes,
// and the threads' default, so that a command line from before --threads means what it meant.
TEST_F(ServeCli, ThreadsDefaultToWorkers) {
  auto started = [&](const std::string& args) {
    const std::string out = path("serve.out");
    // SIGTERM once the start line is written (at most 60 s: a loaded machine, or the sanitized
    // build, took more than the 5 s this once waited): the server drains and exits.
    const std::string serve = std::string(SPARSERL_CLI) +
                              " serve --device cpu --listen 127.0.0.1:0 " + args + " >" + out +
                              " 2>/dev/null </dev/null";
    const std::string until_started = "for i in $(seq 600); do grep -q 'evaluation threads' " +
                                      out + " && break; sleep 0.1; done";
    const std::string command =
        "(" + serve + " & pid=$!; " + until_started + "; kill -TERM $pid; wait $pid)";
    EXPECT_NE(std::system(command.c_str()), -1);
    return testing::slurp(out);
  };
  EXPECT_THAT(started("--threads 3"), ::testing::HasSubstr("(executor cpu, 3 evaluation threads"));
  EXPECT_THAT(started("--workers 4"), ::testing::HasSubstr("(executor cpu, 4 evaluation threads"));
  EXPECT_THAT(started(""), ::testing::HasSubstr("(executor cpu, 2 evaluation threads"));
}

TEST_F(ServeCli, APortInUseIsReported) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  expect_one_line_error("serve --device cpu --listen 127.0.0.1:" + port, "cannot bind");
  close(fd);
}

}  // namespace
}  // namespace sparserl
