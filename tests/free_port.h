#pragma once
// A free loopback TCP port for a test's server or rendezvous store: the kernel's pick, released
// for the test to bind (another process could take it in between; on a test machine none does).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sparserl::testing {

inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace sparserl::testing
