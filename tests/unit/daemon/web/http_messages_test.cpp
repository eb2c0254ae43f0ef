// Requests and responses between Beast's types and the handlers' (http_messages), on their own,
// with no I/O: the request as handlers see it, the response with the security headers and a
// header that could split it dropped, a stream's head, and which failed read gets which answer.
#include "daemon/web/http_messages.h"

#include <gtest/gtest.h>

#include <string>

#include "daemon/base/log.h"
#include "tests/log_capture.h"

namespace vigil {
namespace {

namespace http = boost::beast::http;
using http_messages::BeastRequest;
using http_messages::Headers;

BeastRequest beastRequest(http::verb method, const std::string& target, std::string body = "") {
  BeastRequest r{method, target, 11};
  r.set("Host", "hall.lan");
  r.set("X-Trace", "abc");
  r.body() = std::move(body);
  return r;
}

TEST(HttpMessagesTest, ARequestIsItsMethodPathQueryHeadersInOrderAndBody) {
  const auto request = http_messages::requestOf(
      beastRequest(http::verb::post, "/api/cameras/door/latest.jpg?boxes=1&x=y", "data"));
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->method, "POST");
  EXPECT_EQ(request->path, "/api/cameras/door/latest.jpg");
  EXPECT_EQ(request->query, "boxes=1&x=y");
  EXPECT_EQ(request->body, "data");
  ASSERT_EQ(request->headers.size(), 2U);
  EXPECT_EQ(request->headers[0], (std::pair<std::string, std::string>{"Host", "hall.lan"}));
  EXPECT_EQ(request->headers[1], (std::pair<std::string, std::string>{"X-Trace", "abc"}));
  EXPECT_EQ(request->header("x-trace"), "abc");

  const auto plain = http_messages::requestOf(beastRequest(http::verb::get, "/metrics"));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->path, "/metrics");
  EXPECT_EQ(plain->query, "");
}

TEST(HttpMessagesTest, ATargetThatIsNotAPathIsNotARequestToServe) {
  EXPECT_FALSE(http_messages::requestOf(beastRequest(http::verb::get, "http://hall.lan/metrics")));
  EXPECT_FALSE(http_messages::requestOf(beastRequest(http::verb::options, "*")));
}

TEST(HttpMessagesTest, AResponseHasTheSecurityHeadersItsOwnTheServerTypeLengthAndBody) {
  HttpResponse in;
  in.status = 201;
  in.contentType = "application/json";
  in.body = "{\"ok\":true}";
  in.headers = {{"Cache-Control", "no-store"}};
  const Headers always = {{"X-Frame-Options", "deny"}};
  auto out = http_messages::responseOf(in, always, false, true, 11, *logger("http"));
  EXPECT_EQ(out.result_int(), 201U);
  EXPECT_EQ(out.version(), 11U);
  EXPECT_EQ(out[http::field::server], "vigil");
  EXPECT_EQ(out[http::field::content_type], "application/json");
  EXPECT_EQ(out["X-Frame-Options"], "deny");
  EXPECT_EQ(out["Cache-Control"], "no-store");
  EXPECT_EQ(out[http::field::content_length], "11");
  EXPECT_EQ(out.body(), "{\"ok\":true}");
  EXPECT_EQ(in.body, "") << "the body moved";
  EXPECT_TRUE(out.keep_alive());
}

TEST(HttpMessagesTest, AHeaderThatCouldSplitTheResponseIsDroppedAndSaid) {
  testing::LogCapture log("http");
  HttpResponse in;
  in.headers = {{"X-Ok", "fine"},
                {"X-Evil", "a\r\nSet-Cookie: stolen"},
                {"X-Bad:Name", "b"},
                {"X-Line", "c\nd"}};
  auto out = http_messages::responseOf(in, {}, false, false, 11, *logger("http"));
  EXPECT_EQ(out["X-Ok"], "fine");
  EXPECT_EQ(out.count("X-Evil"), 0U);
  EXPECT_EQ(out.count("Set-Cookie"), 0U);
  EXPECT_EQ(out.count("X-Line"), 0U);
  EXPECT_EQ(log.text(),
            "dropped header 'X-Evil': CR, LF or ':' in it\n"
            "dropped header 'X-Bad:Name': CR, LF or ':' in it\n"
            "dropped header 'X-Line': CR, LF or ':' in it\n");
  EXPECT_FALSE(out.keep_alive());
}

TEST(HttpMessagesTest, HeadKeepsTheLengthWithoutTheBodyAnd204Or304HaveNoLength) {
  HttpResponse head;
  head.body = "twelve bytes";
  auto headOut = http_messages::responseOf(head, {}, true, true, 11, *logger("http"));
  EXPECT_EQ(headOut[http::field::content_length], "12");
  EXPECT_EQ(headOut.body(), "");

  for (int status : {204, 304}) {
    HttpResponse empty;
    empty.status = status;
    auto out = http_messages::responseOf(empty, {}, false, true, 11, *logger("http"));
    EXPECT_EQ(out.count(http::field::content_length), 0U) << status;
  }
}

TEST(HttpMessagesTest, AnHttp10RequestIsAnsweredInHttp10AndAnyOtherIn11) {
  HttpResponse a;
  EXPECT_EQ(http_messages::responseOf(a, {}, false, false, 10, *logger("http")).version(), 10U);
  HttpResponse b;
  EXPECT_EQ(http_messages::responseOf(b, {}, false, false, 20, *logger("http")).version(), 11U);
}

TEST(HttpMessagesTest, AStatusAnswerIsTheStatusWithItsReasonAsTheBody) {
  const HttpResponse answer = http_messages::statusAnswer(http::status::not_found);
  EXPECT_EQ(answer.status, 404);
  EXPECT_EQ(answer.body, "Not Found\n");
  EXPECT_EQ(http_messages::statusAnswer(http::status::payload_too_large).body,
            "Payload Too Large\n");
}

TEST(HttpMessagesTest, AStreamsHeadIsTheHeaderBlockWithItsBlankLine) {
  HttpResponse stream;
  stream.contentType = "multipart/x-mixed-replace; boundary=frame";
  stream.headers = {{"Cache-Control", "no-cache"}, {"X-Evil", "a\r\nb"}};
  EXPECT_EQ(http_messages::streamHead(stream, {{"X-Frame-Options", "deny"}}),
            "HTTP/1.1 200 OK\r\n"
            "Server: vigil\r\n"
            "Content-Type: multipart/x-mixed-replace; boundary=frame\r\n"
            "Connection: close\r\n"
            "X-Frame-Options: deny\r\n"
            "Cache-Control: no-cache\r\n"
            "\r\n");
}

TEST(HttpMessagesTest, AFailedReadIsAnswered431413Or400OrNotAtAll) {
  http::request_parser<http::string_body> fresh;
  EXPECT_EQ(http_messages::answerToReadError(http::error::header_limit, fresh),
            http::status::request_header_fields_too_large);
  EXPECT_EQ(http_messages::answerToReadError(http::error::buffer_overflow, fresh),
            http::status::request_header_fields_too_large)
      << "the buffer filled before the header ended";
  EXPECT_EQ(http_messages::answerToReadError(http::error::body_limit, fresh),
            http::status::payload_too_large);
  EXPECT_EQ(http_messages::answerToReadError(http::error::bad_method, fresh),
            http::status::bad_request);
  EXPECT_EQ(http_messages::answerToReadError(http::error::bad_version, fresh),
            http::status::bad_request);
  EXPECT_EQ(http_messages::answerToReadError(http::error::partial_message, fresh), std::nullopt)
      << "a client gone mid-request: nobody to answer";
  EXPECT_EQ(http_messages::answerToReadError(boost::asio::error::connection_reset, fresh),
            std::nullopt);
  EXPECT_EQ(http_messages::answerToReadError(boost::beast::error::timeout, fresh), std::nullopt);

  http::request_parser<http::string_body> headerDone;
  boost::beast::error_code ec;
  const std::string header = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n";
  headerDone.put(boost::asio::buffer(header), ec);
  ASSERT_TRUE(headerDone.is_header_done()) << ec.message();
  EXPECT_EQ(http_messages::answerToReadError(http::error::buffer_overflow, headerDone),
            http::status::payload_too_large)
      << "the buffer filled with the body";
}

}  // namespace
}  // namespace vigil
