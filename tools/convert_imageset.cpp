// convert_imageset: a folder of images and a list file ("path label" per line, paths relative to
// ROOTFOLDER) -> an LMDB of Datum records keyed "%08d_<path>" by line index, as BVLC writes them.
// Images are stored raw (C x H x W bytes, B, G, R order) or, with --encoded, as JPEG/PNG bytes.
// The database is written into "<DB_NAME>.partial-<pid>" and renamed to DB_NAME only when
// complete, so an interrupted run never leaves a database that looks finished. Images that are
// missing or cannot be decoded are skipped with a warning naming them (BVLC's behaviour, with a
// final count), or stop the conversion with --on_bad_image=stop.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/image_io.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/util/worker_pool.hpp"
#include "data_tool_main.hpp"

DEFINE_bool(gray, false, "When this option is on, treat images as grayscale ones");
DEFINE_bool(shuffle, false, "Randomly shuffle the order of images and their labels");
DEFINE_string(backend, "lmdb", "The backend {lmdb, leveldb} for storing the result");
DEFINE_int32(resize_width, 0, "Width images are resized to");
DEFINE_int32(resize_height, 0, "Height images are resized to");
DEFINE_bool(check_size, false,
            "When this option is on, check that all the datum have the same size");
DEFINE_bool(encoded, false, "When this option is on, the encoded image will be save in datum");
DEFINE_string(encode_type, "",
              "Optional: What type should we encode the image as ('png','jpg',...).");
DEFINE_string(on_bad_image, "skip",
              "What a missing or undecodable image does: 'skip' it with a warning (BVLC's "
              "behaviour; the number skipped is reported at the end) or 'stop' the conversion");
DEFINE_int64(shuffle_seed, -1, "Seed for --shuffle (-1: a random seed)");
DEFINE_int32(threads, 0, "Threads reading and encoding images (0: the machine's cores, up to 8)");
DEFINE_int32(log_every, 1000,
             "Log a progress line (count, percent, images/s) every this many images written "
             "(the web server asks for finer steps on small datasets)");

namespace {

using caffe::string;

constexpr int kCommitEvery = 1000;

string ShapeText(const caffe::Datum& datum) {
  return std::to_string(datum.channels()) + "x" + std::to_string(datum.height()) + "x" +
         std::to_string(datum.width());
}

/// The encoding for one image: --encode_type, or with --encoded alone the file's extension.
string EncodingFor(const string& path) {
  if (!FLAGS_encoded) return "";
  if (!FLAGS_encode_type.empty()) return FLAGS_encode_type;
  const size_t dot = path.rfind('.');
  CAFFE_CHECK(dot != string::npos && dot + 1 < path.size())
      << "--encoded without --encode_type keeps each file's format, but '" << path
      << "' has no extension to tell it; give --encode_type (e.g. png or jpg)";
  string extension = path.substr(dot + 1);
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

void ConvertImageset(const string& root_folder, const string& list_file, const string& db_path) {
  CAFFE_CHECK(FLAGS_on_bad_image == "skip" || FLAGS_on_bad_image == "stop")
      << "--on_bad_image is '" << FLAGS_on_bad_image << "'; use skip or stop";
  CAFFE_CHECK(FLAGS_resize_width >= 0 && FLAGS_resize_height >= 0)
      << "--resize_width and --resize_height must not be negative";
  CAFFE_CHECK((FLAGS_resize_width == 0) == (FLAGS_resize_height == 0))
      << "--resize_width " << FLAGS_resize_width << " and --resize_height " << FLAGS_resize_height
      << ": give both (to resize) or neither";
  CAFFE_CHECK(FLAGS_encode_type.empty() || FLAGS_encoded)
      << "--encode_type '" << FLAGS_encode_type << "' needs --encoded";
  CAFFE_CHECK(FLAGS_log_every >= 1) << "--log_every is " << FLAGS_log_every << "; must be >= 1";
  CAFFE_CHECK(caffe::ImageSupportAvailable())
      << "reading images needs " << caffe::ImageSupportProblem();

  std::vector<caffe::ImageListEntry> lines = caffe::ReadImageList(list_file);
  if (FLAGS_shuffle) {
    LOG(INFO) << "Shuffling data";
    const uint64_t seed = FLAGS_shuffle_seed >= 0 ? static_cast<uint64_t>(FLAGS_shuffle_seed)
                                                  : static_cast<uint64_t>(caffe::cluster_seedgen());
    std::mt19937 generator(static_cast<std::mt19937::result_type>(seed));
    for (size_t i = lines.size(); i > 1; --i) {
      const size_t j = generator() % i;
      std::swap(lines[i - 1], lines[j]);
    }
  }
  LOG(INFO) << "A total of " << lines.size() << " images.";

  caffe::db::AtomicDBWriter writer(FLAGS_backend, db_path);
  const bool is_color = !FLAGS_gray;
  int threads = FLAGS_threads;
  if (threads <= 0) threads = std::min(8, std::max(1, int(std::thread::hardware_concurrency())));
  caffe::WorkerPool workers(threads);
  // Images are read in chunks on the workers and written in list order.
  const int chunk = 64 * threads;
  std::vector<caffe::Datum> datums(chunk);
  std::vector<string> errors(chunk);
  caffe::Datum first_datum;  // for --check_size
  string first_path;
  string value;
  int count = 0;
  int skipped = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t begin = 0; begin < lines.size(); begin += chunk) {
    const int size = static_cast<int>(std::min(lines.size() - begin, size_t(chunk)));
    workers.Run(size, [&](int item) {
      const caffe::ImageListEntry& line = lines[begin + item];
      errors[item].clear();
      try {
        caffe::ReadImageToDatum(root_folder + line.path, line.label, FLAGS_resize_height,
                                FLAGS_resize_width, is_color, EncodingFor(line.path),
                                &datums[item]);
      } catch (const caffe::Error& error) {
        errors[item] = error.what();
      }
    });
    for (int item = 0; item < size; ++item) {
      const size_t line_id = begin + item;
      const caffe::ImageListEntry& line = lines[line_id];
      const string path = root_folder + line.path;
      const caffe::Datum& datum = datums[item];
      if (!errors[item].empty()) {
        CAFFE_CHECK(FLAGS_on_bad_image == "skip")
            << errors[item] << " (line " << line.line << " of '" << list_file
            << "'; --on_bad_image=skip would skip it)";
        LOG(WARNING) << "skipping line " << line.line << " of '" << list_file
                     << "': " << errors[item];
        ++skipped;
        continue;
      }
      if (FLAGS_check_size) {
        if (first_path.empty()) {
          first_datum = datum;
          first_path = path;
        } else {
          CAFFE_CHECK(datum.channels() == first_datum.channels() &&
                      datum.height() == first_datum.height() &&
                      datum.width() == first_datum.width())
              << "--check_size: image '" << path << "' (line " << line.line << ") is "
              << ShapeText(datum) << " (channels x height x width) but the first image '"
              << first_path << "' is " << ShapeText(first_datum)
              << "; resize them (--resize_height/--resize_width) or drop --check_size";
        }
      }
      char key_prefix[16];
      std::snprintf(key_prefix, sizeof(key_prefix), "%08zu_", line_id);
      datum.SerializeToString(&value);
      writer.transaction()->Put(key_prefix + line.path, value);
      if (++count % kCommitEvery == 0) writer.transaction()->Commit();
      if (count % FLAGS_log_every == 0) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        LOG(INFO) << "Processed " << count << " files (" << line_id + 1 << " of " << lines.size()
                  << " lines, " << static_cast<int>(100.0 * (line_id + 1) / lines.size()) << "%, "
                  << static_cast<int>(count / std::max(seconds, 1e-9)) << " images/s).";
      }
    }
  }
  CAFFE_CHECK(count > 0) << "no image of '" << list_file << "' could be read (" << skipped
                         << " skipped); nothing was written";
  writer.Finish();
  if (count % FLAGS_log_every != 0) LOG(INFO) << "Processed " << count << " files.";
  if (skipped > 0) {
    LOG(WARNING) << "Skipped " << skipped << " of " << lines.size()
                 << " images that could not be read (named above).";
  }
  LOG(INFO) << "Wrote " << count << " images to '" << db_path << "'.";
}

}  // namespace

int main(int argc, char** argv) {
  return caffe::RunDataTool(argc, argv,
                            {"tools/convert_imageset",
                             "Convert a set of images to the leveldb/lmdb\n"
                             "format used as input for Caffe.\n"
                             "Usage:\n"
                             "    convert_imageset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME\n"
                             "The ImageNet dataset for the training demo is at\n"
                             "    http://www.image-net.org/download-images\n",
                             4},
                            [](int, char** argv) { ConvertImageset(argv[1], argv[2], argv[3]); });
}
