// Images for the data pipeline: reading image files (resized, colour or gray) into Datum records,
// raw or encoded (JPEG/PNG bytes), decoding encoded records, writing a record back out as an image
// file, and parsing the "path label" list files of convert_imageset and the ImageData layer. The
// interface holds no OpenCV types: pixels travel in Datum records as C x H x W uint8 values with
// colour channels in OpenCV's B, G, R order, as BVLC stores them. The OpenCV code lives in a
// module that is loaded on the first image call (io/image_codec.hpp). Without OpenCV (built
// with CAFFE_OPENCV=OFF or without the library), or when that module cannot be loaded, every
// image function throws a caffe::Error that says what is missing; the list parser works either way.
#ifndef CAFFE_IO_IMAGE_IO_HPP_
#define CAFFE_IO_IMAGE_IO_HPP_

#include <string>
#include <utility>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// Whether this build can decode, resize and encode images (it was built with OpenCV and its
/// image module loads). The first call loads the module.
bool ImageSupportAvailable();

/// What reading images needs and this process lacks, for messages ("... needs <this>"); empty
/// when ImageSupportAvailable().
string ImageSupportProblem();

/// The channels a decoded image gets: as stored in the file (gray stays 1 channel, colour 3), or
/// converted to 3 (kColor) or 1 (kGray).
enum class ImageColor { kNative, kColor, kGray };

/// Reads the image file `filename` into `datum` with `label`. Resized to height x width (bilinear)
/// when both are > 0 (both 0: the file's size); 3 channels when `is_color`, else 1. With an empty
/// `encoding` the record holds raw pixels; with an encoding ("jpg", "png", ...) it holds the
/// image encoded that way (encoded: true): the file's own bytes when nothing was changed and the
/// file already is of that type, else re-encoded. Encoded records also carry the decoded shape.
/// Throws caffe::Error naming the file when it cannot be opened or is not a decodable image.
void ReadImageToDatum(const string& filename, int label, int height, int width, bool is_color,
                      const string& encoding, Datum* datum);

/// Decodes the encoded record `encoded` into raw pixels in `decoded` (label copied). Throws
/// caffe::Error when the bytes are not an image OpenCV can decode.
void DecodeDatum(const Datum& encoded, ImageColor color, Datum* decoded);

/// The values the raw (not encoded) record `datum` holds, checked against its shape: throws
/// caffe::Error when a dimension (channels x height x width) is below 1, the shape is over 2^31
/// values, or the record holds another number of bytes (or of float_data values, where it has no
/// bytes).
int CheckRawDatum(const Datum& datum);

/// Writes a record (raw uint8, float values rounded and clamped to 0..255, or encoded) as an image
/// file whose type follows the extension of `filename` (.png, .jpg, .bmp, ...). Records with 1
/// or 3 channels only. Throws caffe::Error naming the file on failure.
void WriteDatumToImage(const Datum& datum, const string& filename);

/// Cuts the region of `width` x `height` pixels at column `x`, row `y` out of the raw record
/// `raw` (1 or 3 channels) and resizes it bilinearly to `out_width` x `out_height` (OpenCV's
/// INTER_LINEAR, as BVLC's WindowData warps its windows) into `resized` (raw, label kept). Throws
/// caffe::Error when the region does not lie inside the image.
void ResizeDatumRegion(const Datum& raw, int x, int y, int width, int height, int out_width,
                       int out_height, Datum* resized);

/// One entry of an image list: the path as written (relative to a root folder) and the label.
struct ImageListEntry {
  string path;
  int label = 0;
  int line = 0;  // 1-based line number in the list file, for messages
};

/// Parses a list file of "path label" lines (the label after the last space, so paths may hold
/// spaces; blank lines are skipped; a trailing '\r' is ignored). Throws caffe::Error naming the
/// file and line for a line without a label or a label that is not an integer, and when the file
/// cannot be read.
vector<ImageListEntry> ReadImageList(const string& filename);

}  // namespace caffe

#endif  // CAFFE_IO_IMAGE_IO_HPP_
