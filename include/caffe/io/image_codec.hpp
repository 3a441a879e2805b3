// The table of image functions that Caffe's OpenCV module (libcaffe_image_opencv.so, built from
// io/image_codec_opencv.cpp) exports. libcaffe loads that module with dlopen the first time an
// image is read, decoded or written, so that processes which never touch an image (training from
// raw LMDB records, `caffe time`, the Python API on arrays) do not map OpenCV and the libraries
// Debian's imgcodecs pulls in (GDAL, GDCM, Poppler, ...: about 50 MB of resident pages).
// Only io/image_io.cpp and the module include this header.
#ifndef CAFFE_IO_IMAGE_CODEC_HPP_
#define CAFFE_IO_IMAGE_CODEC_HPP_

#include "caffe/io/image_io.hpp"

namespace caffe {

/// Entry points with the contracts of the image_io.hpp functions of the same names.
struct ImageCodec {
  void (*read_image_to_datum)(const string& filename, int label, int height, int width,
                              bool is_color, const string& encoding, Datum* datum);
  void (*decode_datum)(const Datum& encoded, ImageColor color, Datum* decoded);
  void (*write_datum_to_image)(const Datum& datum, const string& filename);
  void (*resize_datum_region)(const Datum& raw, int x, int y, int width, int height, int out_width,
                              int out_height, Datum* resized);
};

}  // namespace caffe

/// The module's one exported symbol; the version in its name changes with ImageCodec's layout.
#define CAFFE_IMAGE_CODEC_SYMBOL "caffe_image_codec_v2"
extern "C" const caffe::ImageCodec* caffe_image_codec_v2();

#endif  // CAFFE_IO_IMAGE_CODEC_HPP_
