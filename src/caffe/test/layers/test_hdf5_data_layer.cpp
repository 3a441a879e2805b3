// HDF5Data over HDF5 files the test writes: top shapes, rows in order across files with
// wrap-around, paths relative to the working directory, shuffling, sharding between solvers,
// integer datasets, and errors naming the file or dataset at fault.
#include <hdf5.h>
#include <hdf5_hl.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "caffe/io/hdf5.hpp"
#include "caffe/layers/hdf5_data_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

// Row r of file f: data (2, 3) with value 1000 f + 10 r + j at index j; label (1) = 1000 f + r.
constexpr int kRowSize = 6;

template <typename TypeParam>
class HDF5DataLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;

  HDF5DataLayerTest() : dir_(MakeTempDir("caffe_test_hdf5_data")) {}

  void TearDown() override {
    Caffe::set_solver_count(1);
    Caffe::set_solver_rank(0);
  }

  // Writes file `f` with `rows` rows to <dir>/<name>; returns its path.
  std::string WriteFile(const std::string& name, int f, int rows,
                        const vector<int>& data_row_shape = {2, 3}, int label_rows = -1) {
    const std::string path = dir_ + "/" + name;
    Hdf5File file(path, H5F_ACC_TRUNC);
    vector<int> data_shape{rows};
    data_shape.insert(data_shape.end(), data_row_shape.begin(), data_row_shape.end());
    Blob<Dtype> data(data_shape), label(vector<int>{label_rows < 0 ? rows : label_rows, 1});
    const int row_size = data.count(1);
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < row_size; ++j)
        data.mutable_cpu_data()[r * row_size + j] = 1000 * f + 10 * r + j;
    }
    for (int r = 0; r < label.shape(0); ++r) label.mutable_cpu_data()[r] = 1000 * f + r;
    hdf5_save_nd_dataset(file.id(), "data", data);
    hdf5_save_nd_dataset(file.id(), "label", label);
    return path;
  }

  // Writes the list of files; returns its path.
  std::string WriteList(const vector<std::string>& files, const std::string& name = "list.txt") {
    const std::string path = dir_ + "/" + name;
    std::ofstream list(path);
    for (const auto& file : files) list << file << "\n";
    return path;
  }

  // `extra` goes into the layer parameter, `hdf5_extra` into hdf5_data_param.
  LayerParameter Param(const std::string& source, int batch_size, const std::string& extra = "",
                       const std::string& hdf5_extra = "") {
    return ParseLayerParam("name: 'h5' type: 'HDF5Data' top: 'data' top: 'label' " + extra +
                           " hdf5_data_param { source: '" + source +
                           "' batch_size: " + std::to_string(batch_size) + " " + hdf5_extra + " }");
  }

  // The (file, row) pairs of the batch in the tops, checking every value against them.
  vector<std::pair<int, int>> Rows() const {
    vector<std::pair<int, int>> rows;
    for (int i = 0; i < label_.shape(0); ++i) {
      const int label = static_cast<int>(label_.cpu_data()[i]);
      const int f = label / 1000, r = label % 1000;
      rows.emplace_back(f, r);
      for (int j = 0; j < kRowSize; ++j) {
        EXPECT_EQ(data_.cpu_data()[i * kRowSize + j], Dtype(1000 * f + 10 * r + j))
            << "item " << i << " value " << j;
      }
    }
    return rows;
  }

  std::string dir_;
  Blob<Dtype> data_, label_;
  Blobs<Dtype> bottom_vec_, top_vec_{&data_, &label_};
};
TYPED_TEST_SUITE(HDF5DataLayerTest, TestDtypesAndDevices);

using Rows = vector<std::pair<int, int>>;

// Runs SetUp and `forwards` Forward calls and expects a caffe::Error containing every part.
template <typename Dtype>
void ExpectError(const LayerParameter& param, const Blobs<Dtype>& top, int forwards,
                 const vector<std::string>& parts) {
  HDF5DataLayer<Dtype> layer(param);
  Blobs<Dtype> bottom;
  try {
    layer.SetUp(bottom, top);
    for (int i = 0; i < forwards; ++i) layer.Forward(bottom, top);
    ADD_FAILURE() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("HDF5Data layer '" + param.name() + "': "), std::string::npos)
        << message;
    for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TYPED_TEST(HDF5DataLayerTest, TopsTakeDatasetShapesWithBatchSize) {
  using Dtype = typename TypeParam::Dtype;
  const std::string list = this->WriteList({this->WriteFile("a.h5", 1, 4)});
  auto layer = LayerRegistry<Dtype>::CreateLayer(this->Param(list, 3));
  EXPECT_STREQ(layer->type(), "HDF5Data");
  layer->SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->data_.shape(), (vector<int>{3, 2, 3}));
  EXPECT_EQ(this->label_.shape(), (vector<int>{3, 1}));
}

TYPED_TEST(HDF5DataLayerTest, ReadsRowsInOrderAcrossFilesAndWrapsAround) {
  using Dtype = typename TypeParam::Dtype;
  const std::string list =
      this->WriteList({this->WriteFile("a.h5", 1, 4), this->WriteFile("b.h5", 2, 3)});
  HDF5DataLayer<Dtype> layer(this->Param(list, 3));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const Rows expected[] = {{{1, 0}, {1, 1}, {1, 2}},
                           {{1, 3}, {2, 0}, {2, 1}},
                           {{2, 2}, {1, 0}, {1, 1}},
                           {{1, 2}, {1, 3}, {2, 0}}};
  for (const Rows& batch : expected) {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    EXPECT_EQ(this->Rows(), batch);
  }
}

TYPED_TEST(HDF5DataLayerTest, SingleFileWrapsAround) {
  using Dtype = typename TypeParam::Dtype;
  const std::string list = this->WriteList({this->WriteFile("a.h5", 3, 5)});
  HDF5DataLayer<Dtype> layer(this->Param(list, 2));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const Rows expected[] = {{{3, 0}, {3, 1}}, {{3, 2}, {3, 3}}, {{3, 4}, {3, 0}}, {{3, 1}, {3, 2}}};
  for (const Rows& batch : expected) {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    EXPECT_EQ(this->Rows(), batch);
  }
}

TYPED_TEST(HDF5DataLayerTest, ListedPathsAreRelativeToTheWorkingDirectory) {
  using Dtype = typename TypeParam::Dtype;
  this->WriteFile("rel.h5", 4, 2);
  const std::string list = this->WriteList({"rel.h5"});
  char previous[4096];
  ASSERT_NE(getcwd(previous, sizeof(previous)), nullptr);
  ASSERT_EQ(chdir(this->dir_.c_str()), 0);
  struct Restore {
    const char* dir;
    ~Restore() { EXPECT_EQ(chdir(dir), 0); }
  } restore{previous};
  HDF5DataLayer<Dtype> layer(this->Param(list, 2));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->Rows(), (Rows{{4, 0}, {4, 1}}));
}

TYPED_TEST(HDF5DataLayerTest, ShuffleVisitsEveryRowOncePerPassInFileBlocks) {
  using Dtype = typename TypeParam::Dtype;
  const std::string list =
      this->WriteList({this->WriteFile("a.h5", 1, 4), this->WriteFile("b.h5", 2, 3)});
  HDF5DataLayer<Dtype> layer(this->Param(list, 7, "", "shuffle: true"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const Rows in_order{{1, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 0}, {2, 1}, {2, 2}};
  bool reordered = false;
  Rows first_pass;
  for (int pass = 0; pass < 4; ++pass) {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    const Rows rows = this->Rows();
    if (pass == 0) first_pass = rows;
    using RowSet = std::set<std::pair<int, int>>;
    EXPECT_EQ(RowSet(rows.begin(), rows.end()), RowSet(in_order.begin(), in_order.end()))
        << "pass " << pass;
    // A file's rows come together: the file changes once per pass.
    int changes = 0;
    for (size_t i = 1; i < rows.size(); ++i) changes += rows[i].first != rows[i - 1].first;
    EXPECT_EQ(changes, 1) << "pass " << pass;
    reordered |= rows != in_order;
  }
  EXPECT_TRUE(reordered);
  // The order comes from Caffe's generator: the same seed gives the same batches.
  Caffe::set_random_seed(1701);
  HDF5DataLayer<Dtype> again(this->Param(list, 7, "", "shuffle: true"));
  again.SetUp(this->bottom_vec_, this->top_vec_);
  again.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->Rows(), first_pass);
}

TYPED_TEST(HDF5DataLayerTest, SolversTakeInterleavedRowsInTrainAndAllRowsInTest) {
  using Dtype = typename TypeParam::Dtype;
  const std::string list = this->WriteList({this->WriteFile("a.h5", 1, 5)});
  Caffe::set_solver_count(2);
  for (int rank = 0; rank < 2; ++rank) {
    Caffe::set_solver_rank(rank);
    HDF5DataLayer<Dtype> layer(this->Param(list, 2, "phase: TRAIN"));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    // Stream positions 0..9 are rows 0..4, 0..4; rank r keeps the positions p % 2 == r.
    const vector<Rows> expected =
        rank == 0 ? vector<Rows>{{{1, 0}, {1, 2}}, {{1, 4}, {1, 1}}, {{1, 3}, {1, 0}}}
                  : vector<Rows>{{{1, 1}, {1, 3}}, {{1, 0}, {1, 2}}, {{1, 4}, {1, 1}}};
    for (const Rows& batch : expected) {
      layer.Forward(this->bottom_vec_, this->top_vec_);
      EXPECT_EQ(this->Rows(), batch) << "rank " << rank;
    }
  }
  // Only one solver runs the test net, so it skips nothing.
  HDF5DataLayer<Dtype> test(this->Param(list, 2, "phase: TEST"));
  test.SetUp(this->bottom_vec_, this->top_vec_);
  test.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->Rows(), (Rows{{1, 0}, {1, 1}}));
}

TYPED_TEST(HDF5DataLayerTest, IntegerDatasetsAreConverted) {
  using Dtype = typename TypeParam::Dtype;
  const std::string path = this->dir_ + "/int.h5";
  {
    Hdf5File file(path, H5F_ACC_TRUNC);
    const int values[] = {7, -3, 12};
    const hsize_t dims[] = {3};
    ASSERT_GE(H5LTmake_dataset_int(file.id(), "label", 1, dims, values), 0);
  }
  HDF5DataLayer<Dtype> layer(ParseLayerParam("name: 'h5' top: 'label' hdf5_data_param { source: '" +
                                             this->WriteList({path}) + "' batch_size: 3 }"));
  Blobs<Dtype> top{&this->label_};
  layer.SetUp(this->bottom_vec_, top);
  EXPECT_EQ(this->label_.shape(), vector<int>{3});
  layer.Forward(this->bottom_vec_, top);
  EXPECT_EQ(this->label_.cpu_data()[0], Dtype(7));
  EXPECT_EQ(this->label_.cpu_data()[1], Dtype(-3));
  EXPECT_EQ(this->label_.cpu_data()[2], Dtype(12));
}

TYPED_TEST(HDF5DataLayerTest, RejectsMissingListOrFileNamingThem) {
  using Dtype = typename TypeParam::Dtype;
  const std::string no_list = this->dir_ + "/no_list.txt";
  ExpectError<Dtype>(this->Param(no_list, 2), this->top_vec_, 0,
                     {"cannot open hdf5_data_param.source '" + no_list + "'"});
  const std::string missing = this->dir_ + "/missing.h5";
  const std::string list = this->WriteList({missing}, "missing.txt");
  ExpectError<Dtype>(this->Param(list, 2), this->top_vec_, 0,
                     {"HDF5 file '" + missing + "'", "listed in '" + list + "'", "no such file"});
  ExpectError<Dtype>(this->Param(this->WriteList({}, "empty.txt"), 2), this->top_vec_, 0,
                     {"lists no HDF5 files"});
  // A missing later file is found when the rows reach it.
  const std::string later = this->WriteList({this->WriteFile("a.h5", 1, 2), missing}, "later.txt");
  ExpectError<Dtype>(this->Param(later, 2), this->top_vec_, 2, {"HDF5 file '" + missing + "'"});
}

TYPED_TEST(HDF5DataLayerTest, RejectsMissingDatasetNamingDatasetAndFile) {
  using Dtype = typename TypeParam::Dtype;
  const std::string path = this->WriteFile("a.h5", 1, 3);
  LayerParameter param = this->Param(this->WriteList({path}), 2);
  param.set_top(1, "labels");
  ExpectError<Dtype>(param, this->top_vec_, 0, {"HDF5 file '" + path + "'", "'labels' not found"});
}

TYPED_TEST(HDF5DataLayerTest, RejectsDatasetsOfDifferentLengthsOrRowShapes) {
  using Dtype = typename TypeParam::Dtype;
  const std::string short_labels = this->WriteFile("short.h5", 1, 4, {2, 3}, 3);
  ExpectError<Dtype>(this->Param(this->WriteList({short_labels}, "short.txt"), 2), this->top_vec_,
                     0, {"same number of rows", "'label' 3 1 (3)", "'data' 4 2 3 (24)"});
  const std::string other_shape = this->WriteFile("wide.h5", 2, 3, {3, 2});
  const std::string list =
      this->WriteList({this->WriteFile("a.h5", 1, 2), other_shape}, "shapes.txt");
  ExpectError<Dtype>(
      this->Param(list, 2), this->top_vec_, 2,
      {"HDF5 file '" + other_shape + "'", "'data' has shape 3 3 2 (18)", "rows were 2 3 (6)"});
}

TYPED_TEST(HDF5DataLayerTest, RejectsBadParameters) {
  using Dtype = typename TypeParam::Dtype;
  const std::string list = this->WriteList({this->WriteFile("a.h5", 1, 3)});
  ExpectError<Dtype>(this->Param(list, 2, "transform_param { scale: 2 }"), this->top_vec_, 0,
                     {"does not transform data"});
  ExpectError<Dtype>(this->Param(list, 0), this->top_vec_, 0, {"batch_size must be at least 1"});
  ExpectError<Dtype>(
      ParseLayerParam("name: 'h5' top: 'data' top: 'label' hdf5_data_param { batch_size: 1 }"),
      this->top_vec_, 0, {"source", "not set"});
  ExpectError<Dtype>(
      ParseLayerParam("name: 'h5' hdf5_data_param { source: '" + list + "' batch_size: 1 }"),
      this->top_vec_, 0, {"needs a name"});
}

}  // namespace
}  // namespace caffe
