// caffe.image_support and caffe._read_image: image files through libcaffe's OpenCV decoder, for
// caffe.io.load_image.
#include <cstdint>
#include <string>

#include "bindings.hpp"
#include "caffe/io/image_io.hpp"

namespace caffe {
namespace pycaffe {
namespace {

/// _read_image(filename, color): H x W x C uint8, RGB (or gray).
py::array_t<uint8_t> ReadImage(const py::object& file, bool color) {
  const string path = PathArg(file);
  Datum datum;
  {
    py::gil_scoped_release release;
    ReadImageToDatum(path, 0, 0, 0, color, "", &datum);
  }
  const int channels = datum.channels(), height = datum.height(), width = datum.width();
  py::array_t<uint8_t> image({height, width, channels});
  auto pixels = image.mutable_unchecked<3>();
  const auto* bytes = reinterpret_cast<const uint8_t*>(datum.data().data());
  for (int c = 0; c < channels; ++c) {
    // Datum holds OpenCV's B, G, R order; numpy images are R, G, B.
    const int source = channels == 3 ? 2 - c : c;
    for (int h = 0; h < height; ++h) {
      for (int w = 0; w < width; ++w) {
        pixels(h, w, c) = bytes[(static_cast<size_t>(source) * height + h) * width + w];
      }
    }
  }
  return image;
}

}  // namespace

void BindImage(py::module_& m) {
  m.def("image_support", &ImageSupportAvailable);
  m.def("_read_image", &ReadImage, py::arg("filename"), py::arg("color") = true,
        "_read_image(filename, color=True): H x W x C uint8, RGB (or gray), decoded by OpenCV");
}

}  // namespace pycaffe
}  // namespace caffe
