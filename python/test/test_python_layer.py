"""Layers written in Python (type: "Python"): a Euclidean loss passes a numerical gradient
check and matches the C++ EuclideanLoss; Python exceptions become caffe.Error with the
traceback and the layer's name."""
import gc

import numpy as np
import pytest

import caffe
from conftest import write_file

NET = """
name: 'pyloss'
force_backward: true
layer {{ name: 'x' type: 'Input' top: 'x' input_param {{ shape {{ dim: 3 dim: 4 }} }} }}
layer {{ name: 'y' type: 'Input' top: 'y' input_param {{ shape {{ dim: 3 dim: 4 }} }} }}
layer {{ name: 'loss' type: '{type}' bottom: 'x' bottom: 'y' top: 'loss' {extra} }}
"""
PYTHON_LOSS = ("python_param { module: 'pyloss' layer: 'EuclideanLossLayer' } "
               "loss_weight: 1")


def make_net(tmp_path, loss_type='Python', extra=PYTHON_LOSS, name='net.prototxt'):
    text = NET.format(type=loss_type, extra=extra if loss_type == 'Python' else '')
    return caffe.Net(write_file(tmp_path / name, text), caffe.TRAIN)


def feed(net, seed=3):
    rng = np.random.RandomState(seed)
    net.blobs['x'].data[...] = rng.randn(3, 4)
    net.blobs['y'].data[...] = rng.randn(3, 4)


def test_python_euclidean_loss_passes_gradient_check(tmp_path):
    net = make_net(tmp_path)
    feed(net)
    net.forward()
    net.backward()
    analytic = {name: net.blobs[name].diff.copy() for name in ('x', 'y')}
    assert np.any(analytic['x'] != 0)
    step, threshold = 1e-2, 1e-3
    for name in ('x', 'y'):
        values = net.blobs[name].data
        for index in np.ndindex(values.shape):
            original = values[index]
            values[index] = original + step
            plus = float(net.forward()['loss'])
            values[index] = original - step
            minus = float(net.forward()['loss'])
            values[index] = original
            numeric = (plus - minus) / (2 * step)
            scale = max(abs(numeric), abs(analytic[name][index]), 1.0)
            assert abs(numeric - analytic[name][index]) <= threshold * scale, \
                '{}{}: numeric {} vs. analytic {}'.format(name, index, numeric,
                                                          analytic[name][index])


def test_python_loss_equals_the_cpp_layer(tmp_path):
    python_net = make_net(tmp_path)
    cpp_net = make_net(tmp_path, loss_type='EuclideanLoss', name='cpp.prototxt')
    for net in (python_net, cpp_net):
        feed(net, seed=11)
        net.forward()
        net.backward()
    np.testing.assert_allclose(python_net.blobs['loss'].data.reshape(()),
                               cpp_net.blobs['loss'].data, rtol=1e-6)
    for name in ('x', 'y'):
        np.testing.assert_allclose(python_net.blobs[name].diff, cpp_net.blobs[name].diff,
                                   rtol=1e-5, atol=1e-7)


def test_net_layers_returns_the_python_object(tmp_path):
    net = make_net(tmp_path)
    feed(net)
    net.forward()
    layer = net.layers[2]
    assert isinstance(layer, caffe.Layer) and layer.type == 'Python'
    assert layer.diff.shape == (3, 4)  # its own attributes
    assert layer.phase == caffe.TRAIN and layer.param_str == ''
    assert len(layer.blobs) == 0
    del net
    gc.collect()
    with pytest.raises(caffe.Error, match='not part of a net'):
        layer.blobs


def test_python_exception_is_a_caffe_error_with_traceback(tmp_path):
    text = NET.replace("bottom: 'x' bottom: 'y' top: 'loss'", "bottom: 'x' top: 'out'").format(
        type='Python', extra="python_param { module: 'failing_layer' layer: 'FailingLayer' "
                             "param_str: 'fail' }")
    net = caffe.Net(write_file(tmp_path / 'failing.prototxt', text), caffe.TEST)
    with pytest.raises(caffe.Error) as raised:
        net.forward()
    message = str(raised.value)
    assert message.startswith(
        "Python layer 'loss': failing_layer.FailingLayer.forward() raised")
    assert 'Traceback (most recent call last)' in message
    assert "raise ZeroDivisionError('this layer was told to fail')" in message
    assert 'ZeroDivisionError: this layer was told to fail' in message
    # The process and the net are fine afterwards.
    net.layers[2].param_str = 'pass'
    net.blobs['x'].data[...] = 3
    assert np.all(net.forward()['out'] == 3)


def test_python_setup_errors_name_the_layer(tmp_path):
    one_bottom = NET.replace("bottom: 'x' bottom: 'y'", "bottom: 'x'").format(
        type='Python', extra=PYTHON_LOSS)
    with pytest.raises(caffe.Error, match=r"(?s)Python layer 'loss': pyloss.EuclideanLossLayer."
                                          r"setup\(\) raised.*needs two bottoms"):
        caffe.Net(write_file(tmp_path / 'one.prototxt', one_bottom), caffe.TEST)
    no_module = NET.format(type='Python',
                           extra="python_param { module: 'no_such_module' layer: 'L' }")
    with pytest.raises(caffe.Error) as raised:
        caffe.Net(write_file(tmp_path / 'none.prototxt', no_module), caffe.TEST)
    # No traceback to show: one line.
    assert str(raised.value) == (
        "Python layer 'loss': cannot import python_param.module 'no_such_module' (is its folder "
        "on PYTHONPATH?): ModuleNotFoundError: No module named 'no_such_module'")
