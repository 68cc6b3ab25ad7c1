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
  expect_one_line_error("serve --device cpu --token " + path("missing"), "cannot open");
  std::ofstream(path("empty-token")) << "\n";
  expect_one_line_error("serve --device cpu --token " + path("empty-token"), "is empty");
  expect_one_line_error("serve --device cpu --matrices " + path("none"), "cannot list");
  expect_one_line_error("serve --device tpu", "--device tpu");
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
