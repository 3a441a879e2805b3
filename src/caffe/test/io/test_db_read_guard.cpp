// Faults while reading a database: a trapped read that touches a page past the end of a mapped
// file (SIGBUS), an address nothing maps (SIGSEGV) or fails the library's own check returns the
// fault, again and again; a fault outside a trap in a thread reading a database is one line
// naming it and `caffe_db verify`, exit status 1; a fault in a thread reading none still kills
// the process by its signal.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "caffe/io/db_read_guard.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

// Two pages of a one-page file mapped: the second is past the end of the file.
class MappedFile {
 public:
  explicit MappedFile(const string& path) : page_(sysconf(_SC_PAGESIZE)) {
    WriteWholeFile(path, string(page_, 'x'));
    const int fd = open(path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << path;
    map_ = static_cast<char*>(mmap(nullptr, 2 * page_, PROT_READ, MAP_SHARED, fd, 0));
    close(fd);
    EXPECT_NE(map_, MAP_FAILED);
  }
  ~MappedFile() { munmap(map_, 2 * page_); }
  const char* in_file() const { return map_; }
  const char* past_end() const { return map_ + page_; }

 private:
  size_t page_;
  char* map_;
};

struct Read {
  const char* from;
  char got;
};
void ReadOneByte(void* argument) {
  auto* read = static_cast<Read*>(argument);
  read->got = *static_cast<const volatile char*>(read->from);
}
void FailLibraryCheck(void*) {
  db::OnDatabaseLibraryAssertion("mdb.c:5921: Assertion 'IS_LEAF(mp)' failed in mdb_cursor_next()");
}

class DBReadGuardTest : public ::testing::Test {
 protected:
  DBReadGuardTest() : dir_(MakeTempDir("caffe_test_db_read_guard")), file_(dir_.path() + "/f") {}
  ScopedTempDir dir_;
  MappedFile file_;
};

TEST_F(DBReadGuardTest, ATrappedReadThatFaultsReturnsTheSignalEveryTime) {
  for (int attempt = 0; attempt < 3; ++attempt) {  // the signal is unblocked after each
    Read read{file_.past_end(), 0};
    db::ReadFault fault;
    EXPECT_FALSE(db::TrapReadFaults(&ReadOneByte, &read, &fault));
    EXPECT_EQ(fault.signal, SIGBUS);
    EXPECT_EQ(fault.Describe(), "SIGBUS (a page past the end of the file)");
  }
  const size_t page = sysconf(_SC_PAGESIZE);
  void* unmapped = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(unmapped, MAP_FAILED);
  Read read{static_cast<const char*>(unmapped), 0};
  db::ReadFault fault;
  EXPECT_FALSE(db::TrapReadFaults(&ReadOneByte, &read, &fault));
  EXPECT_EQ(fault.signal, SIGSEGV);
  EXPECT_EQ(fault.Describe(), "SIGSEGV (an address outside the database's memory map)");
  munmap(unmapped, page);
}

TEST_F(DBReadGuardTest, ATrappedReadThatDoesNotFaultRuns) {
  Read read{file_.in_file(), 0};
  db::ReadFault fault;
  EXPECT_TRUE(db::TrapReadFaults(&ReadOneByte, &read, &fault));
  EXPECT_EQ(read.got, 'x');
}

TEST_F(DBReadGuardTest, TheLibrarysFailedCheckEndsATrappedRead) {
  db::ReadFault fault;
  EXPECT_FALSE(db::TrapReadFaults(&FailLibraryCheck, nullptr, &fault));
  EXPECT_EQ(fault.signal, 0);
  EXPECT_EQ(fault.Describe(),
            "LMDB's own check: mdb.c:5921: Assertion 'IS_LEAF(mp)' failed in mdb_cursor_next()");
}

TEST_F(DBReadGuardTest, KeysInMessagesArePrintable) {
  EXPECT_EQ(db::PrintableKey("00000041"), "00000041");
  EXPECT_EQ(db::PrintableKey(string("a\x01\\b\xff", 5)), "a\\x01\\x5cb\\xff");
  EXPECT_EQ(db::PrintableKey(string(70, 'k')), string(64, 'k') + "...");
}

using DBReadGuardDeathTest = DBReadGuardTest;

TEST_F(DBReadGuardDeathTest, AFaultOutsideATrapInAReadingThreadNamesTheDatabase) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const string source = "/data/train_lmdb", key = "00000041";
  // As in a data layer's prefetch thread.
  auto read_in_a_thread = [&](void (*fail)(const char*)) {
    std::thread reader([&] {
      db::DatabaseReadScope reading("LMDB", source, key);
      fail(file_.past_end());
    });
    reader.join();
    std::exit(0);  // not reached
  };
  EXPECT_EXIT(read_in_a_thread([](const char* past_end) {
                Read read{past_end, 0};
                ReadOneByte(&read);
              }),
              ::testing::ExitedWithCode(1),
              "^[a-z_]+: error: LMDB '/data/train_lmdb' is damaged: reading it after key "
              "'00000041' failed: SIGBUS \\(a page past the end of the file\\); check every "
              "record with `caffe_db verify /data/train_lmdb`\n$");
  EXPECT_EXIT(read_in_a_thread([](const char*) { FailLibraryCheck(nullptr); }),
              ::testing::ExitedWithCode(1),
              "LMDB '/data/train_lmdb' is damaged: reading it after key '00000041' failed: "
              "LMDB's own check: mdb.c:5921: Assertion 'IS_LEAF\\(mp\\)' failed in "
              "mdb_cursor_next\\(\\); check every record with `caffe_db verify "
              "/data/train_lmdb`");
}

TEST_F(DBReadGuardDeathTest, AFaultInAThreadReadingNoDatabaseStillKillsBySignal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto fault_after_reading = [&] {
    { db::DatabaseReadScope reading("LMDB", "/data/train_lmdb", ""); }  // handler installed
    Read read{file_.past_end(), 0};
    ReadOneByte(&read);
    std::exit(0);  // not reached
  };
  EXPECT_EXIT(fault_after_reading(), ::testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace caffe
