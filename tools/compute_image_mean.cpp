// compute_image_mean: the mean image of an LMDB of Datum records, written as a .binaryproto
// (BlobProto 1 x C x H x W, the legacy 4-D fields, as BVLC writes it) and logged per channel.
// Sums are kept in double, so large datasets do not lose precision to float accumulation. Encoded
// records (JPEG/PNG) are decoded as stored (needs OpenCV).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/image_io.hpp"
#include "caffe/io/io.hpp"
#include "caffe/proto/caffe.pb.h"
#include "data_tool_main.hpp"

DEFINE_string(backend, "lmdb", "The backend {lmdb, leveldb} containing the images");
DEFINE_int32(log_every, 10000, "Log a progress line every this many images");

namespace {

using caffe::string;

void ComputeMean(const string& db_path, const string& output_file, const string& backend) {
  CAFFE_CHECK(FLAGS_log_every >= 1) << "--log_every is " << FLAGS_log_every << "; must be >= 1";
  std::unique_ptr<caffe::db::DB> db = caffe::db::GetDB(backend);
  db->Open(db_path, caffe::db::READ);
  std::unique_ptr<caffe::db::Cursor> cursor = db->NewCursor();
  CAFFE_CHECK(cursor->valid()) << "LMDB '" << db_path << "' holds no records";

  caffe::Datum datum, decoded;
  int channels = 0, height = 0, width = 0;
  std::vector<double> sum;
  uint64_t count = 0;
  LOG(INFO) << "Starting iteration";
  for (; cursor->valid(); cursor->Next()) {
    const string key = cursor->key();
    CAFFE_CHECK(datum.ParseFromString(cursor->value()))
        << "record '" << key << "' of '" << db_path << "' is not a valid Datum";
    if (datum.encoded()) {
      // As BVLC: the image as stored (gray or colour).
      try {
        caffe::DecodeDatum(datum, caffe::ImageColor::kNative, &decoded);
      } catch (const caffe::Error& error) {
        CAFFE_THROW() << "record '" << key << "' of '" << db_path << "': " << error.what();
      }
      datum.Swap(&decoded);
    }
    if (count == 0) {
      channels = datum.channels();
      height = datum.height();
      width = datum.width();
      CAFFE_CHECK(channels > 0 && height > 0 && width > 0)
          << "record '" << key << "' of '" << db_path << "' has shape " << channels << "x" << height
          << "x" << width << " (channels x height x width); each must be at least 1";
      sum.assign(static_cast<size_t>(channels) * height * width, 0.0);
    }
    CAFFE_CHECK(datum.channels() == channels && datum.height() == height && datum.width() == width)
        << "record '" << key << "' of '" << db_path << "' is " << datum.channels() << "x"
        << datum.height() << "x" << datum.width() << " but the first record is " << channels << "x"
        << height << "x" << width << "; a mean needs images of one size";
    const string& data = datum.data();
    const size_t size = data.empty() ? static_cast<size_t>(datum.float_data_size()) : data.size();
    CAFFE_CHECK(size == sum.size()) << "record '" << key << "' of '" << db_path << "' holds "
                                    << size << " values but its shape needs " << sum.size();
    if (!data.empty()) {
      const unsigned char* bytes = reinterpret_cast<const unsigned char*>(data.data());
      for (size_t i = 0; i < size; ++i) sum[i] += bytes[i];
    } else {
      for (size_t i = 0; i < size; ++i) sum[i] += datum.float_data(static_cast<int>(i));
    }
    ++count;
    if (count % FLAGS_log_every == 0) LOG(INFO) << "Processed " << count << " files.";
  }
  if (count % FLAGS_log_every != 0) LOG(INFO) << "Processed " << count << " files.";

  caffe::BlobProto mean_blob;
  mean_blob.set_num(1);
  mean_blob.set_channels(channels);
  mean_blob.set_height(height);
  mean_blob.set_width(width);
  for (double value : sum) mean_blob.add_data(static_cast<float>(value / count));
  if (!output_file.empty()) {
    LOG(INFO) << "Write to " << output_file;
    caffe::WriteProtoToBinaryFile(mean_blob, output_file);
  }
  const int dim = height * width;
  LOG(INFO) << "Number of channels: " << channels;
  for (int c = 0; c < channels; ++c) {
    double channel_sum = 0;
    for (int i = 0; i < dim; ++i) channel_sum += sum[static_cast<size_t>(c) * dim + i];
    LOG(INFO) << "mean_value channel [" << c << "]: " << channel_sum / count / dim;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return caffe::RunDataTool(
      argc, argv,
      {"tools/compute_image_mean",
       "Compute the mean_image of a set of images given by an lmdb\n"
       "Usage:\n"
       "    compute_image_mean [FLAGS] INPUT_DB [OUTPUT_FILE]\n",
       2, 3},
      [](int argc, char** argv) { ComputeMean(argv[1], argc == 3 ? argv[2] : "", FLAGS_backend); });
}
