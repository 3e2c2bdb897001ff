#include "crawler/byte_pipe.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "crawler/warc.h"

namespace shingled::crawler {
namespace {

std::string Record(int i) {
  const std::string block = "page number " + std::to_string(i) + std::string(500, 'x');
  return "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://h.example/" +
         std::to_string(i) +
         "\r\nWARC-Date: 2024-03-01T12:00:00Z\r\nContent-Length: " + std::to_string(block.size()) +
         "\r\n\r\n" + block + "\r\n\r\n";
}

// A producer writing in odd-sized pieces through a 1 KiB pipe feeds a WarcReader on another
// thread; every record arrives, and the pipe never holds more than its bound.
TEST(BytePipeTest, FeedsAWarcReaderAcrossThreads) {
  std::string file;
  for (int i = 0; i < 200; ++i) file += Record(i);
  auto pipe = std::make_unique<BytePipe>(1024);
  BytePipe* producer_end = pipe.get();
  std::thread producer([&] {
    for (size_t at = 0; at < file.size(); at += 777) {
      ASSERT_TRUE(producer_end->Write(std::string_view(file).substr(at, 777)));
    }
    producer_end->Close();
  });
  WarcReader reader(std::move(pipe));
  WarcRecord record;
  int count = 0;
  while (reader.Next(&record)) {
    EXPECT_EQ(*record.Header("WARC-Target-URI"), "http://h.example/" + std::to_string(count));
    ++count;
  }
  producer.join();
  EXPECT_EQ(count, 200);
  EXPECT_TRUE(reader.status().ok());
  EXPECT_TRUE(reader.problems().empty());
}

TEST(BytePipeTest, ProducerErrorReachesTheReader) {
  BytePipe pipe(64);
  ASSERT_TRUE(pipe.Write("abc"));
  pipe.Close(UnavailableError("client went away"));
  char buffer[16];
  StatusOr<size_t> n = pipe.Read(buffer, sizeof(buffer));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(pipe.Read(buffer, sizeof(buffer)).status().code(), StatusCode::kUnavailable);
}

TEST(BytePipeTest, CancelUnblocksTheProducer) {
  BytePipe pipe(8);
  std::thread producer([&] { EXPECT_FALSE(pipe.Write(std::string(100, 'x'))); });
  char buffer[4];
  ASSERT_TRUE(pipe.Read(buffer, sizeof(buffer)).ok());
  pipe.Cancel();
  producer.join();
}

// The non-blocking producer: a full pipe says so and calls back once the reader made room.
TEST(BytePipeTest, WriteOrNotifyCallsBackWhenThereIsRoom) {
  BytePipe pipe(8);
  int calls = 0;
  EXPECT_EQ(pipe.WriteOrNotify("abc", [&] { ++calls; }), BytePipe::Offer::kMore);
  // Over the bound: all of it is taken, and the producer is told to wait.
  EXPECT_EQ(pipe.WriteOrNotify("defghijk", [&] { ++calls; }), BytePipe::Offer::kFull);
  char buffer[4];
  ASSERT_EQ(*pipe.Read(buffer, 2), 2u);  // 9 left: still full, no call
  EXPECT_EQ(calls, 0);
  ASSERT_EQ(*pipe.Read(buffer, 4), 4u);  // 5 left: room
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(*pipe.Read(buffer, 4), 4u);
  EXPECT_EQ(calls, 1);  // once
  EXPECT_EQ(std::string(buffer, 4), "ghij");
}

// A cancelled consumer releases a waiting producer, whose next offer is refused.
TEST(BytePipeTest, CancelCallsAWaitingProducerBack) {
  BytePipe pipe(4);
  bool called = false;
  EXPECT_EQ(pipe.WriteOrNotify("abcdef", [&] { called = true; }), BytePipe::Offer::kFull);
  pipe.Cancel();
  EXPECT_TRUE(called);
  EXPECT_EQ(pipe.WriteOrNotify("x", [] {}), BytePipe::Offer::kCancelled);
}

}  // namespace
}  // namespace shingled::crawler
