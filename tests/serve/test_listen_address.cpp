// --listen parsing: loopback unless an address is given, IPv6 in brackets, clear errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "serve/listen_address.h"
#include "sparse/error.h"

namespace sparserl {
namespace {

using ::testing::HasSubstr;

TEST(listen_address, host_and_port) {
  const listen_address a = parse_listen_address("0.0.0.0:9000");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 9000);
  EXPECT_EQ(a.to_string(), "0.0.0.0:9000");
}

TEST(listen_address, a_port_alone_binds_loopback) {
  EXPECT_EQ(parse_listen_address("8808").host, "127.0.0.1");
  EXPECT_EQ(parse_listen_address(":8808").host, "127.0.0.1");
  EXPECT_EQ(parse_listen_address(":0").port, 0);
}

TEST(listen_address, ipv6_in_brackets) {
  const listen_address a = parse_listen_address("[::1]:8808");
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 8808);
  EXPECT_EQ(a.to_string(), "[::1]:8808");
}

TEST(listen_address, malformed_addresses_name_the_problem) {
  auto message = [](const std::string& text) {
    try {
      parse_listen_address(text);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message("localhost:http"), HasSubstr("--listen localhost:http: port \"http\""));
  EXPECT_THAT(message("127.0.0.1:70000"), HasSubstr("above 65535"));
  EXPECT_THAT(message("::1:8808"), HasSubstr("brackets"));
  EXPECT_THAT(message("[::1]8808"), HasSubstr("expected :PORT"));
  EXPECT_THAT(message(""), HasSubstr("empty"));
  EXPECT_THAT(message("127.0.0.1:"), HasSubstr("expected a port"));
}

TEST(listen_address, loopback_hosts) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("::"));
  EXPECT_FALSE(is_loopback_host("10.0.0.1"));
}

}  // namespace
}  // namespace sparserl
