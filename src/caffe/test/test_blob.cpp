#include "caffe/blob.hpp"
#include "caffe/filler.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename Dtype>
class BlobTest : public ::testing::Test {
 protected:
  BlobTest() : blob_preshaped_(2, 3, 4, 5) {}
  Blob<Dtype> blob_;
  Blob<Dtype> blob_preshaped_;
};
TYPED_TEST_SUITE(BlobTest, TestDtypes);

TYPED_TEST(BlobTest, StartsEmptyAndPreshapedHasShape) {
  EXPECT_EQ(this->blob_.count(), 0);
  EXPECT_EQ(this->blob_preshaped_.num(), 2);
  EXPECT_EQ(this->blob_preshaped_.channels(), 3);
  EXPECT_EQ(this->blob_preshaped_.height(), 4);
  EXPECT_EQ(this->blob_preshaped_.width(), 5);
  EXPECT_EQ(this->blob_preshaped_.count(), 120);
  EXPECT_EQ(this->blob_preshaped_.shape_string(), "2 3 4 5 (120)");
}

TYPED_TEST(BlobTest, ZeroAxisBlobHasCountOneAndPrintsLikeBvlc) {
  this->blob_.Reshape(vector<int>{});
  EXPECT_EQ(this->blob_.count(), 1);
  EXPECT_EQ(this->blob_.shape_string(), "(1)");
}

TYPED_TEST(BlobTest, CountOverAxesAndNegativeAxes) {
  Blob<TypeParam> blob(vector<int>{2, 3, 4, 5, 6});
  EXPECT_EQ(blob.count(1, 3), 12);
  EXPECT_EQ(blob.count(3), 30);
  EXPECT_EQ(blob.shape(-1), 6);
  EXPECT_EQ(blob.CanonicalAxisIndex(-5), 0);
  EXPECT_THROW(blob.CanonicalAxisIndex(5), Error);
  EXPECT_THROW(blob.num(), Error);  // legacy accessors need <= 4 axes
}

TYPED_TEST(BlobTest, RejectsNegativeAndOverflowingShapes) {
  EXPECT_THROW(this->blob_.Reshape(vector<int>{2, -1}), Error);
  EXPECT_THROW(this->blob_.Reshape(vector<int>{65536, 65536}), Error);
  // The message states the whole shape's count, not the product of the dims checked so far.
  const string error = ErrorOf([this] { this->blob_.Reshape(vector<int>{100000, 100000, 1000}); });
  EXPECT_NE(error.find("blob shape 100000 100000 1000 (10000000000000) has dims whose product "
                       "exceeds INT_MAX (10000000000000 vs. 2147483647)"),
            string::npos)
      << error;
  // Past int64 too: held at its largest, still rejected.
  EXPECT_NE(ErrorOf([this] { this->blob_.Reshape(vector<int>(8, 1 << 30)); })
                .find("(9223372036854775807) has dims whose product exceeds INT_MAX "
                      "(9223372036854775807 vs. 2147483647)"),
            string::npos);
  // An empty blob's other dims must fit too: count(1) of this shape would overflow.
  EXPECT_NE(ErrorOf([this] {
              this->blob_.Reshape(vector<int>{0, 1 << 16, 1 << 16});
            })
                .find("blob shape 0 65536 65536 (0) has dims whose product exceeds INT_MAX "
                      "(4294967296 vs. 2147483647)"),
            string::npos);
  this->blob_.Reshape(vector<int>{0, 1 << 15, 1 << 15});
  EXPECT_EQ(this->blob_.count(), 0);
  EXPECT_EQ(this->blob_.count(1), 1 << 30);
}

TYPED_TEST(BlobTest, ReshapeKeepsMemoryWhenShrinking) {
  const TypeParam* before = this->blob_preshaped_.cpu_data();
  this->blob_preshaped_.Reshape(vector<int>{2, 3});
  EXPECT_EQ(this->blob_preshaped_.cpu_data(), before);
}

TYPED_TEST(BlobTest, UpdateSubtractsDiff) {
  Blob<TypeParam>& blob = this->blob_preshaped_;
  FillGaussian<TypeParam>(&blob, 3);
  vector<TypeParam> data(blob.cpu_data(), blob.cpu_data() + blob.count());
  for (int i = 0; i < blob.count(); ++i) blob.mutable_cpu_diff()[i] = TypeParam(i) / 10;
  blob.Update();
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_NEAR(blob.cpu_data()[i], data[i] - TypeParam(i) / 10, 1e-6);
  }
}

TYPED_TEST(BlobTest, ProtoRoundTripKeepsShapeAndValues) {
  Blob<TypeParam>& blob = this->blob_preshaped_;
  FillGaussian<TypeParam>(&blob, 4);
  BlobProto proto;
  blob.ToProto(&proto, true);
  Blob<TypeParam> copy;
  copy.FromProto(proto);
  ASSERT_EQ(copy.shape(), blob.shape());
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(copy.cpu_data()[i], blob.cpu_data()[i]);
  EXPECT_TRUE(blob.ShapeEquals(proto));
}

TYPED_TEST(BlobTest, FromProtoReadsLegacyShapeAndRejectsMismatch) {
  BlobProto proto;
  proto.set_num(1);
  proto.set_channels(2);
  proto.set_height(1);
  proto.set_width(3);
  for (int i = 0; i < 6; ++i) proto.add_data(i);
  Blob<TypeParam> blob;
  blob.FromProto(proto);
  EXPECT_EQ(blob.shape_string(), "1 2 1 3 (6)");
  Blob<TypeParam> wrong(vector<int>{6});
  EXPECT_THROW(wrong.FromProto(proto, false), Error);
}

TYPED_TEST(BlobTest, SumsAndScales) {
  Blob<TypeParam> blob(vector<int>{4});
  TypeParam* data = blob.mutable_cpu_data();
  data[0] = 1;
  data[1] = -2;
  data[2] = 3;
  data[3] = -4;
  EXPECT_NEAR(blob.asum_data(), 10, 1e-6);
  EXPECT_NEAR(blob.sumsq_data(), 30, 1e-6);
  blob.scale_data(2);
  EXPECT_NEAR(blob.asum_data(), 20, 1e-6);
}

TYPED_TEST(BlobTest, ShareDataAliasesMemory) {
  Blob<TypeParam> other(2, 3, 4, 5);
  other.ShareData(this->blob_preshaped_);
  EXPECT_EQ(other.cpu_data(), this->blob_preshaped_.cpu_data());
}

}  // namespace caffe
