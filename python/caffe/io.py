"""Getting data in and out of Caffe's formats: images to and from net inputs (Transformer,
load_image, resize_image, oversample) and numpy arrays to and from BlobProto / Datum messages.

Images are numpy arrays H x W x K (K = 3 for RGB, 1 for gray) of float32 values in [0, 1], as
load_image returns them; nets take K x H x W, often in BGR order and scaled to [0, 255] with a
mean subtracted: Transformer converts between the two.
"""
import numpy as np

from . import _caffe
from .proto import caffe_pb2

__all__ = ['Transformer', 'load_image', 'resize_image', 'oversample', 'blobproto_to_array',
           'array_to_blobproto', 'arraylist_to_blobprotovector_str',
           'blobprotovector_str_to_arraylist', 'array_to_datum', 'datum_to_array']


# ---- BlobProto and Datum -------------------------------------------------------------------

def blobproto_to_array(blob, return_diff=False):
    """A BlobProto's data (or diff) as an array of the blob's shape (legacy 4-D shapes too)."""
    values = np.array(blob.diff if return_diff else blob.data, dtype=np.float32)
    if blob.HasField('num') or blob.HasField('channels') or blob.HasField('height') or \
            blob.HasField('width'):
        return values.reshape(blob.num, blob.channels, blob.height, blob.width)
    return values.reshape(tuple(blob.shape.dim))


def array_to_blobproto(arr, diff=None):
    """A BlobProto with the array's shape and values (and `diff`'s as its diff)."""
    arr = np.asarray(arr)
    blob = caffe_pb2.BlobProto()
    blob.shape.dim.extend(arr.shape)
    blob.data.extend(arr.astype(np.float64).flat)
    if diff is not None:
        blob.diff.extend(np.asarray(diff).astype(np.float64).flat)
    return blob


def arraylist_to_blobprotovector_str(arraylist):
    """A serialized BlobProtoVector of the arrays."""
    vector = caffe_pb2.BlobProtoVector()
    vector.blobs.extend(array_to_blobproto(arr) for arr in arraylist)
    return vector.SerializeToString()


def blobprotovector_str_to_arraylist(text):
    """The arrays of a serialized BlobProtoVector."""
    vector = caffe_pb2.BlobProtoVector()
    vector.ParseFromString(text)
    return [blobproto_to_array(blob) for blob in vector.blobs]


def array_to_datum(arr, label=None):
    """A Datum of a C x H x W array: uint8 arrays go to `data` (bytes), others to
    `float_data`."""
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise ValueError('array_to_datum needs a 3-D array (C, H, W), got shape {}'.format(
            arr.shape))
    datum = caffe_pb2.Datum()
    datum.channels, datum.height, datum.width = arr.shape
    if arr.dtype == np.uint8:
        datum.data = arr.tobytes()
    else:
        datum.float_data.extend(arr.astype(np.float64).flat)
    if label is not None:
        datum.label = int(label)
    return datum


def datum_to_array(datum):
    """A Datum's values as a C x H x W array (uint8 for byte data, float for float_data). The
    label is not part of the array: it is datum.label."""
    shape = (datum.channels, datum.height, datum.width)
    if datum.encoded:
        raise ValueError('datum_to_array: the Datum holds an encoded image; decode it first')
    if len(datum.data):
        return np.frombuffer(datum.data, dtype=np.uint8).reshape(shape)
    return np.array(datum.float_data, dtype=np.float64).reshape(shape)


# ---- Images --------------------------------------------------------------------------------

def load_image(filename, color=True):
    """An image file as H x W x 3 (RGB; color=True) or H x W x 1 (gray) float32 in [0, 1].

    Decoded by libcaffe's OpenCV where the build has it, else by PIL.
    """
    if _caffe.image_support():
        pixels = _caffe._read_image(filename, bool(color))
    else:
        try:
            from PIL import Image
        except ImportError:
            raise ImportError('load_image needs image decoding: this Caffe was built without '
                              'OpenCV and PIL (python3-pil) is not installed') from None
        with Image.open(filename) as image:
            pixels = np.asarray(image.convert('RGB' if color else 'L'))
        if pixels.ndim == 2:
            pixels = pixels[:, :, np.newaxis]
    return pixels.astype(np.float32) / np.float32(255)


def _sample_positions(size_in, size_out):
    """For each output pixel, the two input pixels it lies between and its weight on the second
    (pixel centres aligned, edges clamped)."""
    position = (np.arange(size_out) + 0.5) * (size_in / float(size_out)) - 0.5
    position = np.clip(position, 0, size_in - 1)
    low = np.floor(position).astype(int)
    high = np.minimum(low + 1, size_in - 1)
    return low, high, (position - low).astype(np.float32)


def resize_image(im, new_dims, interp_order=1):
    """Resizes an H x W x K image to new_dims (height, width): bilinear (interp_order=1) or
    nearest-neighbour (0) interpolation, any number of channels. Returns float32."""
    im = np.asarray(im, dtype=np.float32)
    squeeze = im.ndim == 2
    if squeeze:
        im = im[:, :, np.newaxis]
    if im.ndim != 3:
        raise ValueError('resize_image takes an H x W x K image, got shape {}'.format(im.shape))
    height, width = int(new_dims[0]), int(new_dims[1])
    if (height, width) == im.shape[:2]:
        resized = im.copy()
    elif interp_order == 0:
        rows = np.minimum(((np.arange(height) + 0.5) * im.shape[0] / height).astype(int),
                          im.shape[0] - 1)
        cols = np.minimum(((np.arange(width) + 0.5) * im.shape[1] / width).astype(int),
                          im.shape[1] - 1)
        resized = im[rows][:, cols]
    elif interp_order == 1:
        top, bottom, row_weight = _sample_positions(im.shape[0], height)
        left, right, col_weight = _sample_positions(im.shape[1], width)
        row_weight = row_weight[:, np.newaxis, np.newaxis]
        rows = im[top] * (1 - row_weight) + im[bottom] * row_weight
        col_weight = col_weight[np.newaxis, :, np.newaxis]
        resized = rows[:, left] * (1 - col_weight) + rows[:, right] * col_weight
    else:
        raise ValueError('interp_order must be 0 (nearest) or 1 (bilinear), got {}'.format(
            interp_order))
    resized = resized.astype(np.float32)
    return resized[:, :, 0] if squeeze else resized


def oversample(images, crop_dims):
    """Ten crops of each H x W x K image: the four corners and the centre, then the same five
    mirrored left-right. Returns an array (10 * N, crop_h, crop_w, K)."""
    images = [np.asarray(image) for image in images]
    crop_h, crop_w = int(crop_dims[0]), int(crop_dims[1])
    crops = []
    for image in images:
        height, width = image.shape[:2]
        if crop_h > height or crop_w > width:
            raise ValueError('crop {}x{} is larger than the image {}x{}'.format(
                crop_h, crop_w, height, width))
        corners = [(0, 0), (0, width - crop_w), (height - crop_h, 0),
                   (height - crop_h, width - crop_w),
                   (int(round((height - crop_h) / 2.0)), int(round((width - crop_w) / 2.0)))]
        views = [image[y:y + crop_h, x:x + crop_w] for y, x in corners]
        crops.extend(views)
        crops.extend(view[:, ::-1] for view in views)
    return np.array(crops, dtype=np.float32)


# ---- Transformer ---------------------------------------------------------------------------

class Transformer(object):
    """Converts images to a net's input format and back, per input blob.

    inputs: dict of input name -> blob shape (N, K, H, W), e.g.
    {'data': net.blobs['data'].data.shape}. preprocess applies, in this order: convert to
    float32; with a transpose set, resize to the input's (H, W) and apply set_transpose's axis
    order (e.g. (2, 0, 1): H x W x K -> K x H x W); set_channel_swap's channel order (e.g.
    (2, 1, 0): RGB -> BGR); set_raw_scale's factor (e.g. 255); subtract set_mean's mean;
    multiply by set_input_scale's factor. deprocess undoes them.
    """

    def __init__(self, inputs):
        self.inputs = {name: tuple(int(d) for d in shape) for name, shape in inputs.items()}
        self.transpose = {}
        self.channel_swap = {}
        self.raw_scale = {}
        self.mean = {}
        self.input_scale = {}

    def _check_input(self, in_):
        if in_ not in self.inputs:
            raise KeyError('{!r} is not one of the inputs of this Transformer: {}'.format(
                in_, ', '.join(self.inputs)))

    def preprocess(self, in_, data):
        """An image (H x W x K) as the net's input `in_` takes it (K x H x W, scaled, mean
        subtracted)."""
        self._check_input(in_)
        caffe_in = np.array(data, dtype=np.float32)
        transpose = self.transpose.get(in_)
        if transpose is not None:
            # An image in its own axis order: resized to the input's size, then transposed.
            image_size = tuple(np.array(self.inputs[in_][1:])[np.argsort(transpose)][:2])
            if caffe_in.shape[:2] != image_size:
                caffe_in = resize_image(caffe_in, image_size)
            caffe_in = caffe_in.transpose(transpose)
        channel_swap = self.channel_swap.get(in_)
        if channel_swap is not None:
            caffe_in = caffe_in[list(channel_swap), :, :]
        raw_scale = self.raw_scale.get(in_)
        if raw_scale is not None:
            caffe_in *= raw_scale
        mean = self.mean.get(in_)
        if mean is not None:
            caffe_in -= mean
        input_scale = self.input_scale.get(in_)
        if input_scale is not None:
            caffe_in *= input_scale
        return caffe_in

    def deprocess(self, in_, data):
        """Undoes preprocess: the net's input format back to an image (H x W x K)."""
        self._check_input(in_)
        image = np.array(data, dtype=np.float32).squeeze()
        input_scale = self.input_scale.get(in_)
        if input_scale is not None:
            image /= input_scale
        mean = self.mean.get(in_)
        if mean is not None:
            image += mean
        raw_scale = self.raw_scale.get(in_)
        if raw_scale is not None:
            image /= raw_scale
        channel_swap = self.channel_swap.get(in_)
        if channel_swap is not None:
            image = image[np.argsort(channel_swap), :, :]
        transpose = self.transpose.get(in_)
        if transpose is not None:
            image = image.transpose(np.argsort(transpose))
        return image

    def set_transpose(self, in_, order):
        """The axis order taking an image to the input, e.g. (2, 0, 1): H x W x K -> K x H x W."""
        self._check_input(in_)
        if len(order) != len(self.inputs[in_]) - 1:
            raise ValueError('transpose order {} must list the {} axes of one input item'.format(
                tuple(order), len(self.inputs[in_]) - 1))
        self.transpose[in_] = tuple(order)

    def set_channel_swap(self, in_, order):
        """The channel order of the input, after transposing, e.g. (2, 1, 0) for RGB -> BGR."""
        self._check_input(in_)
        if len(order) != self.inputs[in_][1]:
            raise ValueError('channel swap {} must list the input\'s {} channels'.format(
                tuple(order), self.inputs[in_][1]))
        self.channel_swap[in_] = tuple(order)

    def set_raw_scale(self, in_, scale):
        """Multiplies the image by `scale` (e.g. 255 for [0, 1] images and nets trained on
        [0, 255]) before the mean is subtracted."""
        self._check_input(in_)
        self.raw_scale[in_] = scale

    def set_mean(self, in_, mean):
        """The mean to subtract: one value per channel (K,), or a whole mean image (K, H, W)."""
        self._check_input(in_)
        mean = np.asarray(mean, dtype=np.float32)
        channels, size = self.inputs[in_][1], self.inputs[in_][1:]
        if mean.ndim == 1:
            if mean.shape[0] != channels:
                raise ValueError('mean has {} values, the input {} channels'.format(
                    mean.shape[0], channels))
            mean = mean[:, np.newaxis, np.newaxis]
        else:
            if mean.ndim == 2:
                mean = mean[np.newaxis]
            if mean.shape != size:
                raise ValueError('mean of shape {} does not fit input items of shape {}'.format(
                    mean.shape, size))
        self.mean[in_] = mean

    def set_input_scale(self, in_, scale):
        """Multiplies the input by `scale` after the mean is subtracted."""
        self._check_input(in_)
        self.input_scale[in_] = scale
