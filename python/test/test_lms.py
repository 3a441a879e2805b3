"""caffe.set_lms: Large Model Support's flags (`caffe train -lms ...`) from Python."""
import numpy as np
import pytest

import caffe
from conftest import write_file

NET = """
name: "lms_py"
layer { name: "data" type: "Input" top: "data"
        input_param { shape { dim: 4 dim: 3 dim: 16 dim: 16 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 8 kernel_size: 3 pad: 1
                            weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
        convolution_param { num_output: 8 kernel_size: 3 pad: 1
                            weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "pool" type: "Pooling" bottom: "conv2" top: "pool"
        pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip" type: "InnerProduct" bottom: "pool" top: "ip"
        inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.1 } } }
"""


@pytest.fixture
def lms_off():
    yield
    caffe.set_mode_cpu()
    caffe.set_lms()  # back to no LMS for the tests that follow


def forward_backward(path, weights):
    net = caffe.Net(path, caffe.TEST, weights=weights)
    net.blobs['data'].data[...] = np.linspace(-1, 1, net.blobs['data'].count).reshape(
        net.blobs['data'].data.shape)
    out = net.forward()['ip'].copy()
    net.blobs['ip'].diff[...] = 1
    net.backward()
    grads = {name: [blob.diff.copy() for blob in blobs] for name, blobs in net.params.items()}
    return out, net.blobs['data'].diff.copy(), grads


def test_bad_values_name_the_flag(lms_off):
    with pytest.raises(caffe.Error, match=r'-lms -2: expected -1 \(off\), 0'):
        caffe.set_lms(-2)
    with pytest.raises(caffe.Error, match=r'-lms_frac 1.5: expected a fraction'):
        caffe.set_lms(8192, lms_frac=1.5)
    with pytest.raises(caffe.Error, match=r'-lms_prefetch -1: expected'):
        caffe.set_lms(8192, lms_prefetch=-1)
    with pytest.raises(caffe.Error, match=r"-gpu_mem_limit 'lots': expected a size"):
        caffe.set_lms(8192, gpu_mem_limit='lots')
    with pytest.raises(TypeError):
        caffe.set_lms('many')


def test_cpu_mode_runs_as_without_lms(tmp_path, lms_off):
    path = write_file(tmp_path / 'net.prototxt', NET)
    caffe.set_random_seed(3)
    reference = caffe.Net(path, caffe.TEST)
    weights = str(tmp_path / 'w.caffemodel')
    reference.save(weights)
    expected = forward_backward(path, weights)
    assert caffe.set_lms() is False  # nothing asked for
    assert caffe.set_lms(8192, lms_frac=0.9, gpu_mem_limit='16G') is False  # CPU mode
    assert caffe.lms_stats() is None
    got = forward_backward(path, weights)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


@pytest.mark.skipif(not caffe.gpu_available(), reason='no GPU available on this machine')
def test_gpu_lms_under_a_small_budget_equals_the_plain_run(tmp_path, lms_off):
    path = write_file(tmp_path / 'net.prototxt', NET)
    caffe.set_random_seed(3)
    weights = str(tmp_path / 'w.caffemodel')
    caffe.Net(path, caffe.TEST).save(weights)
    caffe.set_mode_gpu()
    caffe.set_device(0)
    plain = forward_backward(path, weights)
    # Every buffer managed, swapped out after its last use in each pass.
    assert caffe.set_lms(0, gpu_mem_limit='64M') is True
    managed = forward_backward(path, weights)
    stats = caffe.lms_stats()
    assert stats.startswith('[LMS] swapped in'), stats
    np.testing.assert_allclose(managed[0], plain[0], rtol=0, atol=0)
    np.testing.assert_allclose(managed[1], plain[1], rtol=0, atol=0)
    for name in plain[2]:
        for got, expected in zip(managed[2][name], plain[2][name]):
            np.testing.assert_array_equal(got, expected)
