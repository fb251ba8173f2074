#include "server/request_head.h"

#include <gtest/gtest.h>

#include <string>

namespace headroom::server {
namespace {

HeadLimits limits() { return {}; }

TEST(RequestHead, WaitsForTheBlankLine) {
  EXPECT_EQ(inspect_head("POST /v1/check HTTP/1.1\r\nHost: x\r\n", limits()).verdict, HeadVerdict::incomplete);
  EXPECT_EQ(inspect_head("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", limits()).verdict, HeadVerdict::ready);
}

TEST(RequestHead, WaitsForASmallBodyAnnouncedByContentLength) {
  std::string head = "POST /v1/check HTTP/1.1\r\ncontent-LENGTH: 10\r\n\r\n";
  EXPECT_EQ(inspect_head(head + "12345", limits()).verdict, HeadVerdict::incomplete);
  auto done = inspect_head(head + "1234567890", limits());
  EXPECT_EQ(done.verdict, HeadVerdict::ready);
  EXPECT_EQ(done.head_bytes, head.size());
}

// A JSON body (at most whole_body_bytes) reaches a worker whole: one that trickles in after its
// first 32 KiB is the reception's to time out, not a worker's.
TEST(RequestHead, WaitsForTheWholeOfABodyUpToTheLimit) {
  HeadLimits l = limits();
  l.whole_body_bytes = 100000;
  std::string head = "POST /v1/check HTTP/1.1\r\nContent-Length: 100000\r\n\r\n";
  auto partial = inspect_head(head + std::string(l.body_prefix_bytes + 10, 'x'), l);
  EXPECT_EQ(partial.verdict, HeadVerdict::incomplete);
  EXPECT_EQ(partial.head_bytes, head.size());
  EXPECT_EQ(partial.wanted_bytes, head.size() + 100000);
  EXPECT_EQ(inspect_head(head + std::string(100000, 'x'), l).verdict, HeadVerdict::ready);
  // One byte over the limit: an upload, waited for by its first bytes.
  std::string upload = "POST /v1/diagnose HTTP/1.1\r\nContent-Length: 100001\r\n\r\n";
  EXPECT_EQ(inspect_head(upload + std::string(l.body_prefix_bytes, 'x'), l).wanted_bytes, upload.size() + l.body_prefix_bytes);
}

TEST(RequestHead, WaitsForOnlyTheFirstBytesOfALargeBody) {
  HeadLimits l = limits();
  l.body_prefix_bytes = 4;
  std::string head = "POST /v1/diagnose HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n";
  EXPECT_EQ(inspect_head(head + "123", l).verdict, HeadVerdict::incomplete);
  EXPECT_EQ(inspect_head(head + "1234", l).verdict, HeadVerdict::ready);
}

TEST(RequestHead, DoesNotWaitForAChunkedBody) {
  EXPECT_EQ(inspect_head("POST /v1/diagnose HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 50\r\n\r\n", limits()).verdict,
            HeadVerdict::ready);
}

TEST(RequestHead, RefusesTooManyHeaderLines) {
  std::string head = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) head += "X: y\r\n";
  EXPECT_EQ(inspect_head(head, limits()).verdict, HeadVerdict::too_many_headers);
}

TEST(RequestHead, RefusesHeadersOverTheirTotalSizeBeforeTheyEnd) {
  std::string head = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 20; ++i) head += "X-Filler: " + std::string(500, 'a') + "\r\n";
  EXPECT_EQ(inspect_head(head, limits()).verdict, HeadVerdict::headers_too_large);
  // One line without its end is counted as it arrives.
  EXPECT_EQ(inspect_head("GET / HTTP/1.1\r\nX: " + std::string(9000, 'a'), limits()).verdict, HeadVerdict::headers_too_large);
}

TEST(RequestHead, RefusesALongRequestLine) {
  EXPECT_EQ(inspect_head("GET /" + std::string(9000, 'a'), limits()).verdict, HeadVerdict::line_too_long);
  EXPECT_EQ(inspect_head("GET /" + std::string(100, 'a'), limits()).verdict, HeadVerdict::incomplete);
}

TEST(RequestHead, PeeksEnoughForTheLargestHeadItAccepts) {
  EXPECT_GE(peek_bytes(limits()), limits().max_request_line_bytes + limits().max_header_bytes + limits().body_prefix_bytes);
}

}  // namespace
}  // namespace headroom::server
