"""examples/net_surgery, BVLC's "Net Surgery" notebook: filters set by hand through
net.params (views that stay live across forward passes), and CaffeNet cast into the fully
convolutional bvlc_caffenet_full_conv.prototxt by transplanting fc6-fc8 into convolutions,
whose 8 x 8 map of a 451 x 451 image must be the classifier's fully connected layers on each
6 x 6 window of pool5."""
import os

import numpy as np
import pytest

import caffe
from conftest import SOURCE_DIR

SURGERY = os.path.join(SOURCE_DIR, 'examples', 'net_surgery')
DEPLOY = os.path.join(SOURCE_DIR, 'models', 'bvlc_reference_caffenet', 'deploy.prototxt')


def correlate_valid(image, kernel):
    """What a Caffe convolution computes on one channel: cross-correlation, no padding."""
    windows = np.lib.stride_tricks.sliding_window_view(image, kernel.shape)
    return np.einsum('ijkl,kl->ij', windows, kernel)


def test_designer_filters():
    net = caffe.Net(os.path.join(SURGERY, 'conv.prototxt'), caffe.TEST)
    image = np.random.RandomState(3).rand(60, 80).astype(np.float32)
    net.blobs['data'].reshape(1, 1, *image.shape)
    net.blobs['data'].data[...] = image
    net.forward()
    conv0 = net.blobs['conv'].data[0, 0]
    assert conv0.shape == (56, 76)
    before = conv0.mean()
    net.params['conv'][1].data[0] = 1.
    net.forward()
    # conv0 is a view onto the blob: the second pass shows through it, one higher.
    assert conv0.mean() == pytest.approx(before + 1, abs=1e-5)

    ksize = net.params['conv'][0].data.shape[2:]
    y, x = np.mgrid[-ksize[0] // 2 + 1:ksize[0] // 2 + 1, -ksize[1] // 2 + 1:ksize[1] // 2 + 1]
    g = np.exp(-(x ** 2 + y ** 2) / 2.)
    gaussian = (g / g.sum()).astype(np.float32)
    net.params['conv'][0].data[0] = gaussian
    net.params['conv'][0].data[1:] = 0.
    sobel = np.array((-1, -2, -1, 0, 0, 0, 1, 2, 1), dtype=np.float32).reshape((3, 3))
    net.params['conv'][0].data[1, 0, 1:-1, 1:-1] = sobel
    net.params['conv'][0].data[2, 0, 1:-1, 1:-1] = sobel.T
    net.params['conv'][1].data[...] = 0.
    net.forward()
    output = net.blobs['conv'].data[0]
    np.testing.assert_allclose(output[0], correlate_valid(image, gaussian), atol=1e-5)
    np.testing.assert_allclose(output[1], correlate_valid(image, sobel)[1:-1, 1:-1], atol=1e-5)
    np.testing.assert_allclose(output[2], correlate_valid(image, sobel.T)[1:-1, 1:-1], atol=1e-5)


@pytest.fixture
def caffenet_weights(tmp_path):
    """CaffeNet's deploy net with random weights (He-scaled, so that activations keep their size
    through the layers), saved as a .caffemodel: the notebook's bvlc_reference_caffenet one."""
    net = caffe.Net(DEPLOY, caffe.TEST)
    rng = np.random.default_rng(5)
    for weights, biases in net.params.values():
        fan_in = np.prod(weights.data.shape[1:])
        weights.data[...] = rng.standard_normal(weights.data.shape, np.float32) * \
            np.float32(np.sqrt(2. / fan_in))
        biases.data[...] = rng.uniform(-0.1, 0.1, biases.data.shape)
    path = str(tmp_path / 'caffenet.caffemodel')
    net.save(path)
    return path


def test_the_classifier_cast_into_a_fully_convolutional_net(caffenet_weights, tmp_path):
    # The notebook's transplant, as written.
    net = caffe.Net(DEPLOY, caffenet_weights, caffe.TEST)
    params = ['fc6', 'fc7', 'fc8']
    fc_params = {pr: (net.params[pr][0].data, net.params[pr][1].data) for pr in params}
    assert [fc_params[pr][0].shape for pr in params] == [(4096, 9216), (4096, 4096), (1000, 4096)]
    full_conv_proto = os.path.join(SURGERY, 'bvlc_caffenet_full_conv.prototxt')
    net_full_conv = caffe.Net(full_conv_proto, caffenet_weights, caffe.TEST)
    params_full_conv = ['fc6-conv', 'fc7-conv', 'fc8-conv']
    conv_params = {pr: (net_full_conv.params[pr][0].data, net_full_conv.params[pr][1].data)
                   for pr in params_full_conv}
    assert [conv_params[pr][0].shape for pr in params_full_conv] == [
        (4096, 256, 6, 6), (4096, 4096, 1, 1), (1000, 4096, 1, 1)]
    # The convolutions came from the weights file; the new layers are not in it.
    np.testing.assert_array_equal(net_full_conv.params['conv1'][0].data,
                                  net.params['conv1'][0].data)
    assert not conv_params['fc6-conv'][0].any()
    for pr, pr_conv in zip(params, params_full_conv):
        conv_params[pr_conv][0].flat = fc_params[pr][0].flat
        conv_params[pr_conv][1][...] = fc_params[pr][1]
    surgered = str(tmp_path / 'bvlc_caffenet_full_conv.caffemodel')
    net_full_conv.save(surgered)

    net_full_conv = caffe.Net(full_conv_proto, surgered, caffe.TEST)
    image = np.random.default_rng(6).uniform(-100, 100, (1, 3, 451, 451)).astype(np.float32)
    out = net_full_conv.forward(data=image)
    assert out['prob'].shape == (1, 1000, 8, 8)
    scores = net_full_conv.blobs['fc8-conv'].data[0]

    # Each place of the map is the classifier's fc6-fc8 on one 6 x 6 window of pool5 (the
    # convolutional layers' padding makes the pixels of a 227 crop see other borders, so the
    # comparison starts at pool5, which both nets share).
    windows = [(0, 0), (7, 7), (2, 5)]
    pool5 = net_full_conv.blobs['pool5'].data[0]
    assert pool5.shape == (256, 13, 13)
    net.blobs['data'].reshape(len(windows), 3, 227, 227)
    net.reshape()
    net.blobs['pool5'].data[...] = np.stack([pool5[:, i:i + 6, j:j + 6] for i, j in windows])
    net.forward(start='fc6')
    for k, (i, j) in enumerate(windows):
        expected = net.blobs['fc8'].data[k]
        np.testing.assert_allclose(scores[:, i, j], expected,
                                   atol=1e-4 * np.abs(expected).max(), err_msg=str((i, j)))
        np.testing.assert_allclose(out['prob'][0, :, i, j], net.blobs['prob'].data[k],
                                   atol=1e-5)
    # Distinct windows score differently (the map is not one value spread out).
    assert np.abs(scores[:, 0, 0] - scores[:, 7, 7]).max() > 0.1 * np.abs(scores[:, 0, 0]).max()
