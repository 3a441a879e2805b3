// caffe_db: looks inside a database of Datum records (what DIGITS offered as "Explore DB").
//   caffe_db count DB          the number of records
//   caffe_db stats DB          records, how they are stored (raw bytes, floats, JPEG/PNG), the
//                              shapes (channels x height x width) and the label histogram
//   caffe_db dump DB N FILE    record N (0-based, in key order) written as an image file whose
//                              type follows FILE's extension (.png, .jpg), with its key and label
//   caffe_db convert DB OUT    every record, under its key, into a new database OUT of backend
//                              --to (default lmdb): a LevelDB becomes an LMDB (which several
//                              processes can read, as DDL's learners do), or the other way
//   caffe_db verify DB         reads every record as the data layers do and checks it: names the
//                              first damaged or invalid record (its number and key) and exits 1,
//                              else prints the records and bytes read (a dataset copied to a node)
// Encoded records are decoded for their shape when they do not carry it (needs OpenCV).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "caffe/common.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/db_lmdb.hpp"
#include "caffe/io/db_read_guard.hpp"
#include "caffe/io/image_io.hpp"
#include "caffe/proto/caffe.pb.h"

DEFINE_string(backend, "lmdb", "The database backend {lmdb, leveldb}");
DEFINE_string(to, "lmdb", "convert: the backend {lmdb, leveldb} of the database written");

namespace {

using caffe::string;

const char kUsage[] =
    "Inspects a database of Datum records.\n"
    "Usage:\n"
    "    caffe_db [FLAGS] count DB_NAME\n"
    "    caffe_db [FLAGS] stats DB_NAME\n"
    "    caffe_db [FLAGS] dump DB_NAME N OUTPUT_IMAGE\n"
    "    caffe_db [FLAGS] convert DB_NAME OUTPUT_DB_NAME   (--backend to read, --to to write)\n"
    "    caffe_db [FLAGS] verify DB_NAME\n";

string ShapeText(int channels, int height, int width) {
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

/// The image format of encoded bytes, from their signature.
string EncodedFormat(const string& bytes) {
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8 && static_cast<unsigned char>(bytes[2]) == 0xFF)
    return "jpg";
  if (bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0) return "png";
  if (bytes.compare(0, 2, "BM") == 0) return "bmp";
  return "unknown format";
}

struct OpenDB {
  std::unique_ptr<caffe::db::DB> db;
  std::unique_ptr<caffe::db::Cursor> cursor;
};

OpenDB Open(const string& path) {
  OpenDB open;
  open.db = caffe::db::GetDB(FLAGS_backend);
  open.db->Open(path, caffe::db::READ);
  open.cursor = open.db->NewCursor();
  return open;
}

void ParseRecord(const caffe::db::Cursor& cursor, const string& path, caffe::Datum* datum) {
  CAFFE_CHECK(datum->ParseFromString(cursor.value()))
      << "record '" << cursor.key() << "' of '" << path << "' is not a valid Datum";
}

void Count(const string& path) {
  OpenDB open = Open(path);
  uint64_t count = 0;
  for (; open.cursor->valid(); open.cursor->Next()) ++count;
  std::cout << count << std::endl;
}

void Stats(const string& path) {
  OpenDB open = Open(path);
  std::map<string, uint64_t> storage, shapes;
  std::map<int, uint64_t> labels;
  uint64_t count = 0;
  caffe::Datum datum, decoded;
  for (; open.cursor->valid(); open.cursor->Next()) {
    ParseRecord(*open.cursor, path, &datum);
    ++count;
    ++labels[datum.label()];
    int channels = datum.channels(), height = datum.height(), width = datum.width();
    if (datum.encoded()) {
      ++storage["encoded " + EncodedFormat(datum.data())];
      if (channels <= 0 || height <= 0 || width <= 0) {
        // BVLC's convert_imageset stores no shape with encoded images: decode to find it.
        caffe::DecodeDatum(datum, caffe::ImageColor::kNative, &decoded);
        channels = decoded.channels();
        height = decoded.height();
        width = decoded.width();
      }
    } else {
      ++storage[datum.data().empty() ? "raw float" : "raw uint8"];
    }
    ++shapes[ShapeText(channels, height, width)];
  }
  std::cout << "database: " << path << "\n";
  std::cout << "records: " << count << "\n";
  std::cout << "storage:\n";
  for (const auto& entry : storage)
    std::cout << "  " << entry.first << ": " << entry.second << "\n";
  std::cout << "shapes (channels x height x width):\n";
  for (const auto& entry : shapes) std::cout << "  " << entry.first << ": " << entry.second << "\n";
  std::cout << "labels (" << labels.size() << " distinct):\n";
  for (const auto& entry : labels) std::cout << "  " << entry.first << ": " << entry.second << "\n";
  std::cout.flush();
}

void Dump(const string& path, const string& index_text, const string& output) {
  char* end = nullptr;
  errno = 0;
  const long long index = std::strtoll(index_text.c_str(), &end, 10);
  CAFFE_CHECK(!index_text.empty() && *end == '\0' && errno == 0 && index >= 0)
      << "record number '" << index_text << "' is not a non-negative integer";
  OpenDB open = Open(path);
  long long position = 0;
  for (; open.cursor->valid() && position < index; open.cursor->Next()) ++position;
  CAFFE_CHECK(open.cursor->valid()) << "'" << path << "' holds only " << position
                                    << " records; record " << index << " does not exist";
  caffe::Datum datum;
  ParseRecord(*open.cursor, path, &datum);
  caffe::WriteDatumToImage(datum, output);
  caffe::Datum shape_source = datum;
  if (datum.encoded() && datum.channels() <= 0) {
    caffe::DecodeDatum(datum, caffe::ImageColor::kNative, &shape_source);
  }
  std::cout << "record " << index << ": key '" << open.cursor->key() << "', label " << datum.label()
            << ", "
            << ShapeText(shape_source.channels(), shape_source.height(), shape_source.width())
            << (datum.encoded() ? " (encoded " + EncodedFormat(datum.data()) + ")" : "")
            << ", written to " << output << std::endl;
}

void Convert(const string& path, const string& output) {
  OpenDB open = Open(path);
  caffe::db::AtomicDBWriter writer(FLAGS_to, output);
  constexpr uint64_t kCommitEvery = 1000;
  uint64_t count = 0;
  for (; open.cursor->valid(); open.cursor->Next()) {
    writer.transaction()->Put(open.cursor->key(), open.cursor->value());
    if (++count % kCommitEvery == 0) writer.transaction()->Commit();
  }
  writer.Finish();
  std::cout << "converted " << count << " records of " << FLAGS_backend << " '" << path << "' to "
            << FLAGS_to << " '" << output << "'" << std::endl;
}

/// Reads every record of `path` in key order as a data layer does and checks it: readable (a
/// damaged page is a db::DamagedDatabase), keys increasing, a Datum whose raw data fits its shape
/// (encoded images are not decoded), and as many records as LMDB counts.
void Verify(const string& path) {
  uint64_t records = 0, bytes = 0;
  string previous_key, key;  // key: the record being read, once its key is known
  auto record = [&]() {
    const string number = "record " + std::to_string(records);
    if (!key.empty()) return number + ", key '" + caffe::db::PrintableKey(key) + "',";
    if (records == 0) return number + " (the first)";
    return number + " (the one after key '" + caffe::db::PrintableKey(previous_key) + "')";
  };
  try {
    OpenDB open = Open(path);
    caffe::Datum datum;
    for (; open.cursor->valid(); open.cursor->Next()) {
      key = open.cursor->key();
      CAFFE_CHECK(records == 0 || previous_key < key)
          << "'" << path << "' is damaged: " << record() << " comes after key '"
          << caffe::db::PrintableKey(previous_key) << "' (keys must increase)";
      const string value = open.cursor->value();
      CAFFE_CHECK(datum.ParseFromString(value))
          << "'" << path << "' is damaged: " << record() << " is not a valid Datum ("
          << value.size() << " bytes)";
      if (!datum.encoded()) {
        try {
          caffe::CheckRawDatum(datum);
        } catch (const caffe::Error& error) {
          CAFFE_THROW() << "'" << path << "': " << record()
                        << " is not a valid record: " << error.what();
        }
      }
      ++records;
      bytes += key.size() + value.size();
      previous_key.swap(key);
      key.clear();
    }
    if (const auto* lmdb = dynamic_cast<const caffe::db::LMDBCursor*>(open.cursor.get())) {
      const uint64_t counted = lmdb->RecordsInSnapshot();
      CAFFE_CHECK(records == counted)
          << "'" << path << "' is damaged: reading it in key order found " << records
          << " records but LMDB counts " << counted << " (damaged pages hide the rest)";
    }
  } catch (const caffe::db::DamagedDatabase& damage) {
    CAFFE_THROW() << "'" << path << "' is damaged: " << record()
                  << " cannot be read: " << damage.reason();
  }
  std::cout << "'" << path << "': " << records << " records, " << bytes
            << " bytes of keys and values; every record reads and is a valid Datum" << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(kUsage);
  try {
    caffe::GlobalInit(&argc, &argv);
    const string command = argc > 1 ? argv[1] : "";
    if (command == "count" && argc == 3) {
      Count(argv[2]);
    } else if (command == "stats" && argc == 3) {
      Stats(argv[2]);
    } else if (command == "dump" && argc == 5) {
      Dump(argv[2], argv[3], argv[4]);
    } else if (command == "convert" && argc == 4) {
      Convert(argv[2], argv[3]);
    } else if (command == "verify" && argc == 3) {
      Verify(argv[2]);
    } else {
      std::cerr << kUsage;
      if (!command.empty() && command != "count" && command != "stats" && command != "dump" &&
          command != "convert" && command != "verify") {
        std::cerr << "caffe_db: unknown command '" << command
                  << "'; known: count, stats, dump, convert, verify" << std::endl;
      }
      return 1;
    }
  } catch (const caffe::Error& error) {
    std::cerr << "caffe_db: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
