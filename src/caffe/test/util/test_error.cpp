#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/error.hpp"

namespace caffe {

TEST(ErrorTest, CheckPassesSilently) {
  EXPECT_NO_THROW({ CAFFE_CHECK(1 + 1 == 2) << "never"; });
  EXPECT_NO_THROW({ CAFFE_CHECK_EQ(2, 2) << "never"; });
}

TEST(ErrorTest, CheckThrowsWithTheStreamedMessage) {
  EXPECT_EQ(ErrorOf([] {
              CAFFE_CHECK(false) << "cannot open '"
                                 << "x.txt"
                                 << "'";
            }),
            "cannot open 'x.txt'");
}

TEST(ErrorTest, ComparisonAppendsBothValues) {
  int a = 3, b = 4;
  EXPECT_EQ(ErrorOf([&] { CAFFE_CHECK_EQ(a, b) << "sizes differ"; }), "sizes differ (3 vs. 4)");
  EXPECT_EQ(ErrorOf([&] { CAFFE_CHECK_GT(a, b); }), "check failed: a > b (3 vs. 4)");
}

TEST(ErrorTest, ThrowAlwaysThrows) {
  EXPECT_EQ(ErrorOf([] { CAFFE_THROW() << "bad " << 7; }), "bad 7");
}

TEST(ErrorTest, OperandsAreEvaluatedOnce) {
  int calls = 0;
  auto next = [&] { return ++calls; };
  EXPECT_NO_THROW({ CAFFE_CHECK_EQ(next(), 1); });
  EXPECT_EQ(calls, 1);
}

}  // namespace caffe
