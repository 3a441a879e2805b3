"""caffe.coord_map: the maps of single layers, their composition, crop() on small nets (checked
by building them), its refusals, and FCN-8s written with crop() as fcn.berkeleyvision.org's
net.py writes it, which must give the published deploy.prototxt's offsets (5, 9, 31) and,
where ../shared is present, that file message for message."""
import os

import numpy as np
import pytest
from google.protobuf import text_format

import caffe
from caffe import layers as L, params as P
from caffe.coord_map import (UndefinedMapException, compose, coord_map, coord_map_from_to,
                             crop, inverse)
from caffe.proto import caffe_pb2
from conftest import SHARED_DIR, write_file


def data_top(side=8, channels=1):
    return L.Input(shape=dict(dim=[1, channels, side, side]))


def offsets(crop_top):
    return list(crop_top.fn.params['crop_param']['offset'])


def test_single_layer_maps():
    data = data_top()
    conv = L.Convolution(data, num_output=1, kernel_size=5, stride=2, pad=1)
    # Top x reads bottom rows 2x - 1 ... 2x + 3, centred on 2x + 1.
    axis, a, b = coord_map(conv.fn)
    assert axis == 1 and np.allclose(a, 0.5) and np.allclose(b, -0.5)
    deconv = L.Deconvolution(data, convolution_param=dict(num_output=1, kernel_size=4,
                                                          stride=2, pad=1))
    axis, a, b = coord_map(deconv.fn)
    assert axis == 1 and np.allclose(a, 2) and np.allclose(b, 0.5)
    dilated = L.Convolution(data, num_output=1, kernel_size=3, dilation=2)
    assert np.allclose(coord_map(dilated.fn)[2], -2)
    assert coord_map(L.ReLU(data).fn) == (None, 1, 0)
    axis, a, b = coord_map(L.Crop(data, data, crop_param=dict(axis=2, offset=[3, 4])).fn)
    assert axis == 1 and a == 1 and list(b) == [-3, -4]
    for unmapped in (L.InnerProduct(data, num_output=3),
                     L.Pooling(data, pool=P.Pooling.AVE, global_pooling=True),
                     L.Concat(data, data, axis=2)):
        with pytest.raises(UndefinedMapException):
            coord_map(unmapped.fn)


def test_compose_and_inverse():
    first, second = (1, np.array([0.5]), np.array([-1.0])), (1, np.array([4.0]), np.array([3.0]))
    axis, a, b = compose(first, second)  # x -> 4 (x / 2 - 1) + 3
    assert axis == 1 and np.allclose(a, 2) and np.allclose(b, -1)
    axis, a, b = compose(first, inverse(first))
    assert np.allclose(a, 1) and np.allclose(b, 0)
    with pytest.raises(AssertionError):
        compose(first, (2, 1, 0))


def small_fcn():
    """data 1x1x8x8 -> conv 3x3 pad 1 -> max pool 2/2 -> deconv 4/2 (10x10): the deconv's x is
    the data's x + 1, so its crop to the data is offset 1."""
    n = caffe.NetSpec()
    n.data = data_top()
    n.conv = L.Convolution(n.data, num_output=2, kernel_size=3, pad=1)
    n.relu = L.ReLU(n.conv, in_place=True)
    n.pool = L.Pooling(n.relu, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.up = L.Deconvolution(n.pool, convolution_param=dict(num_output=1, kernel_size=4,
                                                          stride=2))
    return n


def test_crop_of_a_small_fcn_builds_and_matches_the_data(tmp_path):
    n = small_fcn()
    axis, a, b = coord_map_from_to(n.up, n.data)
    assert axis == 1 and np.allclose(a, 1) and np.allclose(b, -1)
    n.score = crop(n.up, n.data)
    assert offsets(n.score) == [1]
    assert n.score.fn.params['crop_param']['axis'] == 2
    net = caffe.Net(write_file(tmp_path / 'fcn.prototxt', str(n.to_proto())), caffe.TEST)
    assert net.blobs['up'].data.shape == (1, 1, 10, 10)
    assert net.blobs['score'].data.shape == (1, 1, 8, 8)
    # The crop keeps the deconvolution's rows and columns 1 ... 8.
    rng = np.random.RandomState(3)
    for blob in [net.blobs['data']] + [param for name in ('conv', 'up')
                                       for param in net.params[name]]:
        blob.data[...] = rng.uniform(-1, 1, blob.data.shape)
    net.forward()
    assert np.abs(net.blobs['up'].data).max() > 0
    assert np.array_equal(net.blobs['score'].data, net.blobs['up'].data[:, :, 1:9, 1:9])


def test_pointwise_and_multi_bottom_layers_keep_the_map():
    n = small_fcn()
    plain = coord_map_from_to(n.up, n.data)
    n.drop = L.Dropout(n.up, dropout_ratio=0.5)
    n.sum = L.Eltwise(n.drop, n.up, operation=P.Eltwise.SUM)
    n.norm = L.BatchNorm(n.sum)
    n.both = L.Concat(n.norm, n.up)
    n.prob = L.Softmax(n.both)
    axis, a, b = coord_map_from_to(n.prob, n.data)
    assert axis == plain[0] and np.allclose(a, plain[1]) and np.allclose(b, plain[2])


def test_rectangular_and_three_d_windows_map_each_axis():
    data = data_top(side=16)
    conv = L.Convolution(data, num_output=1, kernel_h=5, kernel_w=3, stride_h=1, stride_w=2,
                         pad_h=4, pad_w=0)
    up = L.Deconvolution(conv, convolution_param=dict(num_output=1, kernel_h=1, kernel_w=4,
                                                      stride_h=1, stride_w=2))
    axis, a, b = coord_map_from_to(up, data)
    assert np.allclose(a, [1, 1]) and np.allclose(b, [-2, -0.5])
    volume = L.Input(shape=dict(dim=[1, 1, 8, 8, 8]))
    conv3 = L.Convolution(volume, num_output=1, kernel_size=[3, 3, 1], pad=[3, 1, 0])
    axis, a, b = coord_map_from_to(conv3, volume)
    assert np.allclose(a, 1) and list(b) == [-2, 0, 0]
    assert offsets(crop(conv3, volume)) == [2, 0, 0]


def test_crop_of_a_crop_and_crop_between_siblings():
    n = small_fcn()
    n.score = crop(n.up, n.data)
    # The cropped score has the data's coordinates: nothing more to cut.
    assert offsets(crop(n.score, n.data)) == [0]
    # Two branches of the pool: a padded 3x3 convolution is 1 wider on each side.
    n.wide = L.Convolution(n.pool, num_output=1, kernel_size=3, pad=2)
    n.same = L.Convolution(n.pool, num_output=1, kernel_size=3, pad=1)
    assert offsets(crop(n.wide, n.same)) == [1]


def test_crop_refuses_what_is_no_crop():
    n = small_fcn()
    with pytest.raises(AssertionError, match='scale mismatch'):
        crop(n.pool, n.data)  # half the resolution
    with pytest.raises(AssertionError, match='negative offset'):
        crop(n.data, n.up)  # the data is smaller than the deconvolution
    n.shifted = L.Deconvolution(n.pool, convolution_param=dict(num_output=1, kernel_size=3,
                                                               stride=2))
    with pytest.raises(AssertionError, match='fractional'):
        crop(n.shifted, n.data)  # x + 0.5
    n.other = data_top()
    with pytest.raises(RuntimeError, match='not connected'):
        crop(n.up, n.other)
    n.fc = L.InnerProduct(n.data, num_output=4)
    with pytest.raises(RuntimeError, match='not connected'):
        crop(n.fc, n.data)


def fcn8s_deploy():
    """VOC FCN-8s as fcn.berkeleyvision.org's voc-fcn8s/net.py builds it, with an Input layer
    of 1x3x500x500 as in its deploy.prototxt."""
    learned = [dict(lr_mult=1, decay_mult=1), dict(lr_mult=2, decay_mult=0)]

    def conv_relu(bottom, num_output, pad=1):
        conv = L.Convolution(bottom, kernel_size=3, stride=1, num_output=num_output, pad=pad,
                             param=learned)
        return conv, L.ReLU(conv, in_place=True)

    def max_pool(bottom):
        return L.Pooling(bottom, pool=P.Pooling.MAX, kernel_size=2, stride=2)

    def score(bottom):
        return L.Convolution(bottom, num_output=21, kernel_size=1, pad=0, param=learned)

    def upscore(bottom, kernel, stride):
        return L.Deconvolution(bottom, convolution_param=dict(num_output=21, kernel_size=kernel,
                                                              stride=stride, bias_term=False),
                               param=[dict(lr_mult=0)])

    n = caffe.NetSpec()
    n.data = L.Input(input_param=dict(shape=dict(dim=[1, 3, 500, 500])))
    bottom = n.data
    widths = [(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)]
    for block, (num_output, count) in enumerate(widths, 1):
        for index in range(1, count + 1):
            conv, relu = conv_relu(bottom, num_output, pad=100 if bottom is n.data else 1)
            n['conv{}_{}'.format(block, index)] = conv
            n['relu{}_{}'.format(block, index)] = relu
            bottom = relu
        n['pool{}'.format(block)] = max_pool(bottom)
        bottom = n['pool{}'.format(block)]
    n.fc6 = L.Convolution(n.pool5, kernel_size=7, stride=1, num_output=4096, pad=0,
                          param=learned)
    n.relu6 = L.ReLU(n.fc6, in_place=True)
    n.fc7 = L.Convolution(n.relu6, kernel_size=1, stride=1, num_output=4096, pad=0,
                          param=learned)
    n.relu7 = L.ReLU(n.fc7, in_place=True)
    n.score_fr = score(n.relu7)
    n.upscore2 = upscore(n.score_fr, 4, 2)
    n.score_pool4 = score(n.pool4)
    n.score_pool4c = crop(n.score_pool4, n.upscore2)
    n.fuse_pool4 = L.Eltwise(n.upscore2, n.score_pool4c, operation=P.Eltwise.SUM)
    n.upscore_pool4 = upscore(n.fuse_pool4, 4, 2)
    n.score_pool3 = score(n.pool3)
    n.score_pool3c = crop(n.score_pool3, n.upscore_pool4)
    n.fuse_pool3 = L.Eltwise(n.upscore_pool4, n.score_pool3c, operation=P.Eltwise.SUM)
    n.upscore8 = upscore(n.fuse_pool3, 16, 8)
    n.score = crop(n.upscore8, n.data)
    return n


def test_fcn8s_crops_have_the_published_offsets():
    n = fcn8s_deploy()
    assert offsets(n.score_pool4c) == [5]
    assert offsets(n.score_pool3c) == [9]
    assert offsets(n.score) == [31]


def test_fcn8s_is_the_published_deploy_prototxt():
    path = os.path.join(SHARED_DIR, 'reference', 'published', 'fcn8s', 'deploy.prototxt')
    if not os.path.isfile(path):
        pytest.skip('{} not found (set CAFFE_SHARED_DIR)'.format(path))
    published = caffe_pb2.NetParameter()
    with open(path) as source:
        text_format.Merge(source.read(), published)
    generated = fcn8s_deploy().to_proto()
    by_name = {layer.name: layer for layer in published.layer}
    by_name['data'] = by_name.pop('input')  # net_spec names a layer after its top
    assert sorted(layer.name for layer in generated.layer) == sorted(by_name)
    for layer in generated.layer:
        expected = by_name[layer.name]
        if layer.name == 'data':
            expected.name = 'data'
        assert layer == expected, '{}:\n{}\nvs. published:\n{}'.format(layer.name, layer,
                                                                        expected)
