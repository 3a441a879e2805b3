"""caffe.set_precision: `caffe -precision` from Python. A bad value is a caffe.Error naming it;
'bf16' makes the nets created afterwards compute their matrix products in bf16 (where the CPU
can), so their outputs differ from fp32's by bf16's rounding and no more; '' restores the
prototxt's own choice."""
import numpy as np
import pytest

import caffe
from conftest import write_file

NET = """
name: 'precision'
layer { name: 'data' type: 'Input' top: 'data' input_param { shape { dim: 64 dim: 32 } } }
layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip'
        inner_product_param { num_output: 16 weight_filler { type: 'gaussian' std: 0.5 } } }
"""


@pytest.fixture(autouse=True)
def reset_precision():
    yield
    caffe.set_precision('')


def _output(path):
    caffe.set_mode_cpu()
    caffe.set_random_seed(1701)
    net = caffe.Net(path, caffe.TEST)
    net.blobs['data'].data[...] = np.random.RandomState(3).randn(64, 32)
    return net.forward()['ip'].copy(), net.params['ip'][0].data.copy(), net.blobs['data'].data


def test_unknown_precision_is_an_error():
    with pytest.raises(caffe.Error, match='-precision is "half"; expected fp32, bf16 or fp16'):
        caffe.set_precision('half')


def test_bf16_rounds_the_products_and_only_that(tmp_path):
    if not caffe.cpu_has_bf16():
        pytest.skip('this CPU has no bf16 arithmetic')
    path = str(write_file(tmp_path / 'net.prototxt', NET))
    fp32, weights, data = _output(path)
    caffe.set_precision('bf16')
    bf16, weights16, _ = _output(path)
    np.testing.assert_array_equal(weights, weights16)  # the fp32 weights themselves
    # Per element within (2u + u^2) sum |x||w| (u = 2^-8) and fp32's own summation error.
    bound = np.abs(data) @ np.abs(weights).T * (2 / 256 + 1 / 65536 + 1 / 8192)
    assert np.all(np.abs(bf16 - fp32) <= bound)
    assert np.max(np.abs(bf16 - fp32) / bound) > 1 / 4096, 'the outputs look like fp32'
    caffe.set_precision('')
    again, _, _ = _output(path)
    np.testing.assert_array_equal(again, fp32)
