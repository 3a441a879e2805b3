"""caffe.io: the Transformer against a hand computation, resizing and cropping on values worked
out by hand, image loading, and the BlobProto / Datum conversions."""
import numpy as np
import pytest

import caffe
from caffe.proto import caffe_pb2


def write_ppm(path, pixels):
    """An H x W x 3 uint8 image as a binary PPM (P6): readable by OpenCV and PIL alike."""
    pixels = np.asarray(pixels, dtype=np.uint8)
    with open(str(path), 'wb') as output:
        output.write('P6\n{} {}\n255\n'.format(pixels.shape[1], pixels.shape[0]).encode())
        output.write(pixels.tobytes())
    return str(path)


def test_transformer_preprocess_matches_a_hand_computation():
    # An RGB image of 2 x 3 pixels, values in [0, 1].
    image = np.array([[[0.0, 0.1, 0.2], [0.3, 0.4, 0.5], [0.6, 0.7, 0.8]],
                      [[0.9, 1.0, 0.5], [0.25, 0.75, 0.125], [1.0, 0.0, 0.5]]], np.float32)
    transformer = caffe.io.Transformer({'data': (1, 3, 2, 3)})
    transformer.set_transpose('data', (2, 0, 1))      # H x W x K -> K x H x W
    transformer.set_channel_swap('data', (2, 1, 0))   # RGB -> BGR
    transformer.set_raw_scale('data', 255)
    transformer.set_mean('data', np.array([10.0, 20.0, 30.0]))  # per BGR channel
    transformer.set_input_scale('data', 0.5)
    out = transformer.preprocess('data', image)
    assert out.shape == (3, 2, 3) and out.dtype == np.float32
    # Worked by hand: out[c, h, w] = (255 * image[h, w, 2 - c] - mean[c]) * 0.5.
    assert out[0, 0, 0] == pytest.approx((255 * 0.2 - 10) * 0.5)   # B of pixel (0, 0): 20.5
    assert out[1, 1, 2] == pytest.approx((255 * 0.0 - 20) * 0.5)   # G of pixel (1, 2): -10
    assert out[2, 1, 0] == pytest.approx((255 * 0.9 - 30) * 0.5)   # R of pixel (1, 0): 99.75
    expected = np.empty((3, 2, 3))
    mean = [10.0, 20.0, 30.0]
    for c in range(3):
        for h in range(2):
            for w in range(3):
                expected[c, h, w] = (255 * float(image[h, w, 2 - c]) - mean[c]) * 0.5
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-4)
    # deprocess undoes every step.
    np.testing.assert_allclose(transformer.deprocess('data', out), image, atol=1e-6)


def test_transformer_mean_image_and_resize():
    transformer = caffe.io.Transformer({'data': (1, 1, 4, 4)})
    transformer.set_transpose('data', (2, 0, 1))
    mean_image = np.arange(16, dtype=np.float32).reshape(1, 4, 4)
    transformer.set_mean('data', mean_image)
    # A 2 x 2 gray image is resized (bilinear, centres aligned) to the input's 4 x 4 first.
    image = np.array([[[0.0], [4.0]], [[8.0], [12.0]]], np.float32)
    out = transformer.preprocess('data', image)
    # Along each axis, 2 -> 4 samples the source at 0, 0.25, 0.75, 1 (clamped at the edges).
    along = np.array([0.0, 0.25, 0.75, 1.0])
    resized = 8.0 * along[:, np.newaxis] + 4.0 * along[np.newaxis, :]
    np.testing.assert_allclose(out[0], resized - mean_image[0], atol=1e-5)


def test_transformer_rejects_bad_settings():
    transformer = caffe.io.Transformer({'data': (1, 3, 4, 4)})
    with pytest.raises(KeyError, match="'label' is not one of the inputs"):
        transformer.set_raw_scale('label', 255)
    with pytest.raises(ValueError, match='mean has 2 values, the input 3 channels'):
        transformer.set_mean('data', [1, 2])
    with pytest.raises(ValueError, match='does not fit input items of shape'):
        transformer.set_mean('data', np.zeros((3, 5, 5)))
    with pytest.raises(ValueError, match='channel swap'):
        transformer.set_channel_swap('data', (1, 0))
    with pytest.raises(ValueError, match='transpose order'):
        transformer.set_transpose('data', (1, 0))


def test_resize_image_by_hand():
    image = np.array([[0.0, 1.0], [2.0, 3.0]], np.float32)[:, :, np.newaxis]
    nearest = caffe.io.resize_image(image, (4, 4), interp_order=0)
    np.testing.assert_array_equal(nearest[:, :, 0], [[0, 0, 1, 1], [0, 0, 1, 1],
                                                     [2, 2, 3, 3], [2, 2, 3, 3]])
    bilinear = caffe.io.resize_image(image, (4, 2))
    np.testing.assert_allclose(bilinear[:, :, 0], [[0, 1], [0.5, 1.5], [1.5, 2.5], [2, 3]])
    three_channels = np.random.RandomState(0).rand(5, 7, 3)
    assert caffe.io.resize_image(three_channels, (3, 2)).shape == (3, 2, 3)
    with pytest.raises(ValueError, match='interp_order'):
        caffe.io.resize_image(image, (4, 4), interp_order=3)


def test_oversample_takes_corners_centre_and_mirrors():
    image = np.arange(5 * 6, dtype=np.float32).reshape(5, 6, 1)
    crops = caffe.io.oversample([image], (3, 4))
    assert crops.shape == (10, 3, 4, 1)
    np.testing.assert_array_equal(crops[0], image[0:3, 0:4])  # top left
    np.testing.assert_array_equal(crops[1], image[0:3, 2:6])  # top right
    np.testing.assert_array_equal(crops[2], image[2:5, 0:4])  # bottom left
    np.testing.assert_array_equal(crops[3], image[2:5, 2:6])  # bottom right
    np.testing.assert_array_equal(crops[4], image[1:4, 1:5])  # centre
    for index in range(5):
        np.testing.assert_array_equal(crops[5 + index], crops[index][:, ::-1])
    with pytest.raises(ValueError, match='larger than the image'):
        caffe.io.oversample([image], (6, 6))


def test_load_image_rgb_and_gray(tmp_path):
    pixels = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255]],
                       [[51, 51, 51], [102, 102, 102], [0, 0, 0]]], np.uint8)
    path = write_ppm(tmp_path / 'image.ppm', pixels)
    rgb = caffe.io.load_image(path)
    assert rgb.shape == (2, 3, 3) and rgb.dtype == np.float32
    np.testing.assert_allclose(rgb, pixels / 255.0, atol=1e-7)
    gray = caffe.io.load_image(path, color=False)
    assert gray.shape == (2, 3, 1)
    np.testing.assert_allclose(gray[1, :, 0], [0.2, 0.4, 0.0], atol=1e-6)  # gray stays gray


def test_blobproto_round_trips():
    array = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7
    blob = caffe.io.array_to_blobproto(array, diff=-array)
    assert list(blob.shape.dim) == [2, 3, 4]
    np.testing.assert_allclose(caffe.io.blobproto_to_array(blob), array, rtol=1e-6)
    np.testing.assert_allclose(caffe.io.blobproto_to_array(blob, return_diff=True), -array,
                               rtol=1e-6)
    legacy = caffe_pb2.BlobProto(num=1, channels=2, height=1, width=3, data=range(6))
    assert caffe.io.blobproto_to_array(legacy).shape == (1, 2, 1, 3)
    text = caffe.io.arraylist_to_blobprotovector_str([array, np.ones(3)])
    back = caffe.io.blobprotovector_str_to_arraylist(text)
    assert [a.shape for a in back] == [(2, 3, 4), (3,)]


def test_datum_round_trips():
    pixels = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    datum = caffe.io.array_to_datum(pixels, label=7)
    assert (datum.channels, datum.height, datum.width, datum.label) == (2, 3, 4, 7)
    assert datum.data == pixels.tobytes() and len(datum.float_data) == 0
    back = caffe.io.datum_to_array(datum)
    assert back.dtype == np.uint8
    np.testing.assert_array_equal(back, pixels)
    floats = pixels.astype(np.float32) / 3
    np.testing.assert_allclose(caffe.io.datum_to_array(caffe.io.array_to_datum(floats)), floats,
                               rtol=1e-6)
    parsed = caffe_pb2.Datum.FromString(datum.SerializeToString())  # what an LMDB would hold
    np.testing.assert_array_equal(caffe.io.datum_to_array(parsed), pixels)
    with pytest.raises(ValueError, match='3-D array'):
        caffe.io.array_to_datum(np.zeros((2, 2)))
    with pytest.raises(ValueError, match='encoded'):
        caffe.io.datum_to_array(caffe_pb2.Datum(encoded=True, data=b'\x89PNG'))
