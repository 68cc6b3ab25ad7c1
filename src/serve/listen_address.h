#pragma once
// The --listen HOST:PORT of `sparserl serve`. Without a host the service binds loopback: only an
// explicit address (0.0.0.0, ::, a LAN address) exposes it beyond this machine.
#include <string>

namespace sparserl {

struct listen_address {
  std::string host = "127.0.0.1";  // IPv6 without brackets ("::1")
  int port = 8808;                 // 0: the kernel picks a free port

  std::string to_string() const;  // "127.0.0.1:8808", "[::1]:8808"
};

// "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (the last two: 127.0.0.1). Throws sparserl::error
// "--listen <text>: <why>".
listen_address parse_listen_address(const std::string& text);

// True for 127.0.0.0/8, ::1 and "localhost": addresses other machines cannot reach.
bool is_loopback_host(const std::string& host);

}  // namespace sparserl
