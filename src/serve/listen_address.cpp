#include "serve/listen_address.h"

#include <arpa/inet.h>

#include <cctype>

#include "sparse/error.h"

namespace sparserl {

namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw error("--listen " + text + ": " + why);
}

int parse_port(const std::string& text, const std::string& port) {
  if (port.empty() || port.size() > 5) bad(text, "expected a port number 0..65535");
  for (char c : port)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      bad(text, "port \"" + port + "\" is not a number");
  const int value = std::stoi(port);
  if (value > 65535) bad(text, "port " + port + " is above 65535");
  return value;
}

}  // namespace

std::string listen_address::to_string() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

listen_address parse_listen_address(const std::string& text) {
  listen_address a;
  if (text.empty()) bad(text, "empty address");
  if (text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) bad(text, "missing ] after the IPv6 address");
    if (close + 1 >= text.size() || text[close + 1] != ':') bad(text, "expected :PORT after ]");
    a.host = text.substr(1, close - 1);
    if (a.host.empty()) bad(text, "empty IPv6 address");
    a.port = parse_port(text, text.substr(close + 2));
    return a;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    a.port = parse_port(text, text);
    return a;
  }
  if (text.find(':') != colon) bad(text, "an IPv6 address needs brackets: [::1]:8808");
  if (colon > 0) a.host = text.substr(0, colon);
  a.port = parse_port(text, text.substr(colon + 1));
  return a;
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace sparserl
