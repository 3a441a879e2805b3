"""caffe.Net: BVLC's golden numbers through pycaffe, blob views, the forward/backward API, saving
and loading, and clear errors for bad input."""
import json
import os

import numpy as np
import pytest

import caffe
from conftest import write_file

# As the C++ golden test: max |ours - BVLC| <= 1e-4 * max |BVLC| for every blob.
GOLDEN_TOLERANCE = 1e-4
GOLDEN_NETS = ['lenet', 'cifar10_quick', 'caffenet_small', 'caffenet_small_msra',
               'googlenet_small', 'layerzoo']

SMALL_NET = """
name: 'small'
force_backward: true
layer { name: 'data' type: 'Input' top: 'data' input_param { shape { dim: 2 dim: 3 } } }
layer { name: 'target' type: 'Input' top: 'target' input_param { shape { dim: 2 dim: 4 } } }
layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip'
        inner_product_param { num_output: 4 weight_filler { type: 'gaussian' std: 0.5 }
                              bias_filler { type: 'constant' value: 0.1 } } }
layer { name: 'relu' type: 'ReLU' bottom: 'ip' top: 'ip' }
layer { name: 'loss' type: 'EuclideanLoss' bottom: 'ip' bottom: 'target' top: 'loss' }
"""


@pytest.fixture
def small_net(tmp_path):
    caffe.set_random_seed(1701)
    return caffe.Net(write_file(tmp_path / 'small.prototxt', SMALL_NET), caffe.TRAIN)


def _encode(name):
    return name.replace('%', '%25').replace('/', '%2F')


def _relative_error(ours, reference):
    reference = np.asarray(reference, dtype=np.float64)
    diff = np.max(np.abs(np.asarray(ours, dtype=np.float64) - reference)) if reference.size else 0
    scale = np.max(np.abs(reference)) if reference.size else 0
    return diff, scale


@pytest.mark.parametrize('name', GOLDEN_NETS)
def test_forward_backward_match_bvlc_golden(golden_dir, name, monkeypatch):
    h5py = pytest.importorskip('h5py', reason='python3-h5py reads the golden blobs.h5')
    # Caffe's own convolution engine, BVLC's arithmetic: on oneDNN's, caffenet_small's pool5 picks
    # other maxima among near-equal values (src/caffe/test/test_golden_nets.cpp runs both engines
    # and says why); this test is about pycaffe giving the C++ results, not about the engine.
    monkeypatch.setenv('CAFFE_CPU_ENGINE', 'caffe')
    folder = os.path.join(golden_dir, name)
    net = caffe.Net(os.path.join(folder, 'net.prototxt'), caffe.TEST,
                    weights=os.path.join(folder, 'weights.caffemodel'))
    with h5py.File(os.path.join(folder, 'blobs.h5'), 'r') as reference:
        assert list(net._blob_names) == json.loads(reference.attrs['blob_names'])
        assert list(net._layer_names) == json.loads(reference.attrs['layer_names'])
        inputs = {blob: reference['input'][_encode(blob)][()] for blob in net.inputs}
        net.forward(**inputs)
        compared = []

        def compare(group, what, ours):
            key = _encode(what)
            if group not in reference or key not in reference[group]:
                return
            expected = reference[group][key][()]
            assert ours.shape == expected.shape, '{}/{}: shape {} vs. BVLC {}'.format(
                group, what, ours.shape, expected.shape)
            diff, scale = _relative_error(ours, expected)
            assert diff <= GOLDEN_TOLERANCE * scale, \
                '{}/{} drifted: max |ours - BVLC| = {:g}, max |BVLC| = {:g}'.format(
                    group, what, diff, scale)
            compared.append(group + '/' + what)

        for blob in net.blobs:
            assert _encode(blob) in reference['forward'], 'forward/{} missing'.format(blob)
            compare('forward', blob, net.blobs[blob].data)
        if 'backward' in reference or 'param_diff' in reference:
            net.backward()
            for blob in net.blobs:
                compare('backward', blob, net.blobs[blob].diff)
            for layer, params in net.params.items():
                for index, param in enumerate(params):
                    if 'param_diff' in reference and _encode(layer) in reference['param_diff']:
                        group = reference['param_diff'][_encode(layer)]
                        if str(index) in group:
                            expected = group[str(index)][()]
                            diff, scale = _relative_error(param.diff, expected)
                            assert diff <= GOLDEN_TOLERANCE * scale, \
                                'param_diff/{}/{} drifted: {:g} vs. {:g}'.format(
                                    layer, index, diff, scale)
                            compared.append('param_diff/{}/{}'.format(layer, index))
        assert len(compared) >= len(net.blobs)


def test_golden_weights_load_as_params(golden_dir):
    h5py = pytest.importorskip('h5py', reason='python3-h5py reads the golden blobs.h5')
    folder = os.path.join(golden_dir, 'lenet')
    net = caffe.Net(os.path.join(folder, 'net.prototxt'),
                    os.path.join(folder, 'weights.caffemodel'), caffe.TEST)  # BVLC's old form
    with h5py.File(os.path.join(folder, 'blobs.h5'), 'r') as reference:
        for layer, params in net.params.items():
            for index, param in enumerate(params):
                np.testing.assert_array_equal(param.data, reference['param'][layer][str(index)][()])


def test_blob_data_and_diff_are_writable_views(small_net):
    data = small_net.blobs['data']
    view = data.data
    view[...] = 7.0
    assert np.all(small_net.blobs['data'].data == 7.0)  # the net's memory changed
    assert view.base is not None and not view.flags['OWNDATA']
    weights = small_net.params['ip'][0].data
    weights[...] = 0
    small_net.params['ip'][1].data[...] = [1, 2, 3, 4]
    out = small_net.forward()
    # With zero weights the layer outputs its bias: the net used the values written above.
    np.testing.assert_allclose(small_net.blobs['ip'].data, [[1, 2, 3, 4], [1, 2, 3, 4]])
    assert 'loss' in out
    small_net.blobs['ip'].diff[...] = 0.5
    assert np.all(small_net.blobs['ip'].diff == 0.5)


def test_blob_attribute_assignment_copies_with_shape_check(small_net):
    small_net.blobs['data'].data = np.arange(6, dtype=np.float64).reshape(2, 3)
    np.testing.assert_array_equal(small_net.blobs['data'].data, [[0, 1, 2], [3, 4, 5]])
    small_net.blobs['data'].diff = 2.5  # a scalar fills
    assert np.all(small_net.blobs['data'].diff == 2.5)


def test_wrong_shaped_array_into_a_blob_is_a_value_error(small_net):
    with pytest.raises(ValueError, match=r'cannot assign an array of shape \(3, 2\) to blob '
                                         r'data of shape \(2, 3\)'):
        small_net.blobs['data'].data = np.zeros((3, 2))
    with pytest.raises(ValueError):  # numpy's own check for slice assignment
        small_net.blobs['data'].data[...] = np.zeros((5,))
    with pytest.raises(ValueError, match="cannot put an array of shape"):
        small_net.forward(data=np.zeros((2, 5)))
    with pytest.raises(ValueError, match="'data' has 4 items but the blob holds a batch of 2"):
        small_net.forward(data=np.zeros((4, 3)))
    with pytest.raises(TypeError, match='expected a numpy array'):
        small_net.blobs['data'].data = 'not numbers'


def test_unknown_input_name_in_forward_is_a_key_error(small_net):
    with pytest.raises(KeyError, match="'dat' is not an input of the net; they are: data, target"):
        small_net.forward(dat=np.zeros((2, 3)))
    with pytest.raises(KeyError, match="no blob named 'nope'"):
        small_net.forward(blobs=['nope'])
    with pytest.raises(KeyError, match="start='nope': the net has no layer of that name"):
        small_net.forward(start='nope')
    with pytest.raises(KeyError, match="'data' is not an output"):
        small_net.backward(data=np.zeros((2, 3)))


def test_library_errors_are_caffe_errors(tmp_path):
    with pytest.raises(caffe.Error, match='missing.prototxt'):
        caffe.Net(str(tmp_path / 'missing.prototxt'), caffe.TEST)
    bad = write_file(tmp_path / 'bad.prototxt',
                     "layer { name: 'x' type: 'Input' top: 'x' input_param { shape { dim: 1 } } }\n"
                     "layer { name: 'r' type: 'Relu' bottom: 'x' top: 'y' }")
    with pytest.raises(caffe.Error, match='unknown layer type "Relu"'):
        caffe.Net(bad, caffe.TEST)
    assert issubclass(caffe.Error, RuntimeError)
    with pytest.raises(TypeError, match='needs a phase'):
        caffe.Net(bad)
    with pytest.raises(ValueError, match='phase must be'):
        caffe.Net(bad, 7)
    with pytest.raises(caffe.Error, match='negative'):
        caffe.Blob(2, -1)


def test_net_attributes_follow_bvlc(small_net):
    net = small_net
    assert net.name == 'small'
    assert net.inputs == ['data', 'target']
    assert net.outputs == ['loss']
    assert list(net.blobs) == ['data', 'target', 'ip', 'loss']
    assert list(net._layer_names) == ['data', 'target', 'ip', 'relu', 'loss']
    assert list(net.layer_dict) == list(net._layer_names)
    assert [layer.type for layer in net.layers] == ['Input', 'Input', 'InnerProduct', 'ReLU',
                                                    'EuclideanLoss']
    assert list(net.params) == ['ip']
    assert [p.data.shape for p in net.params['ip']] == [(4, 3), (4,)]
    assert net.layers[2].blobs[0].data.shape == (4, 3)
    assert net.blob_loss_weights['loss'] == 1 and net.blob_loss_weights['ip'] == 0
    assert net.top_names['relu'] == ['ip'] and net.bottom_names['loss'] == ['ip', 'target']
    assert net.blobs['data'].shape == (2, 3) and net.blobs['data'].count == 6
    assert net.blobs['loss'].data.shape == ()


def test_forward_and_backward_match_numpy(small_net):
    net = small_net
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    t = np.random.RandomState(1).randn(2, 4).astype(np.float32)
    w, b = net.params['ip'][0].data.copy(), net.params['ip'][1].data.copy()
    out = net.forward(data=x, target=t)
    ip = np.maximum(x.dot(w.T) + b, 0)
    expected_loss = np.sum((ip - t) ** 2) / 2 / 2
    np.testing.assert_allclose(out['loss'], expected_loss, rtol=1e-5)
    diffs = net.backward()
    grad_ip = (ip - t) / 2 * (ip > 0)
    np.testing.assert_allclose(diffs['data'], grad_ip.dot(w), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.params['ip'][0].diff, grad_ip.T.dot(x), rtol=1e-5, atol=1e-6)


def test_clear_param_diffs_zeroes_the_gradients(small_net):
    net = small_net
    rng = np.random.RandomState(2)
    net.forward(data=rng.randn(2, 3).astype(np.float32),
                target=rng.randn(2, 4).astype(np.float32))
    net.backward()
    assert np.abs(net.params['ip'][0].diff).max() > 0
    net.clear_param_diffs()
    for blobs in net.params.values():
        for blob in blobs:
            assert not blob.diff.any()


def test_forward_start_end_and_blobs(small_net):
    net = small_net
    net.blobs['data'].data[...] = 1
    out = net.forward(end='ip')
    assert list(out) == ['ip']
    before_relu = out['ip'].copy()
    out = net.forward(start='relu', end='relu', blobs=['data'])
    np.testing.assert_allclose(out['ip'], np.maximum(before_relu, 0))
    assert set(out) == {'ip', 'data'}
    diffs = net.backward(start='loss', end='ip', diffs=['target'])
    assert set(diffs) == {'ip', 'target'}
    with pytest.raises(ValueError, match='comes after'):
        net.forward(start='loss', end='ip')


def test_forward_all_batches_and_unpads(small_net):
    net = small_net
    inputs = np.random.RandomState(2).randn(5, 3).astype(np.float32)
    out = net.forward_all(data=inputs, blobs=['ip'])
    assert out['ip'].shape == (5, 4)
    for i in range(5):
        one = net.forward(data=np.stack([inputs[i], inputs[i]]), blobs=['ip'])['ip'][0]
        np.testing.assert_allclose(out['ip'][i], one, rtol=1e-6)
    assert out['loss'].shape == (3,)  # one loss per batch of 2
    outs, diffs = net.forward_backward_all(data=inputs, target=np.zeros((5, 4)), blobs=['ip'])
    assert outs['ip'].shape == (5, 4) and diffs['data'].shape == (5, 3)


def test_reshape_changes_batch(small_net):
    net = small_net
    net.blobs['data'].reshape(5, 3)
    net.blobs['target'].reshape(5, 4)
    net.reshape()
    assert net.blobs['ip'].data.shape == (5, 4)
    out = net.forward(data=np.ones((5, 3)), target=np.zeros((5, 4)))
    assert out['loss'].shape == ()


def test_save_and_copy_from_roundtrip(small_net, tmp_path):
    net = small_net
    net.params['ip'][0].data[...] = np.arange(12).reshape(4, 3)
    net.save(str(tmp_path / 'w.caffemodel'))
    net.save_hdf5(str(tmp_path / 'w.caffemodel.h5'))
    prototxt = write_file(tmp_path / 'small.prototxt', SMALL_NET)
    for weights in ('w.caffemodel', 'w.caffemodel.h5'):
        other = caffe.Net(prototxt, caffe.TEST, weights=str(tmp_path / weights))
        np.testing.assert_array_equal(other.params['ip'][0].data, np.arange(12).reshape(4, 3))
    other = caffe.Net(network_file=prototxt, phase=caffe.TEST)
    other.load_hdf5(str(tmp_path / 'w.caffemodel.h5'))
    np.testing.assert_array_equal(other.params['ip'][0].data, net.params['ip'][0].data)
    other.params['ip'][0].data[...] = 0
    other.copy_from(str(tmp_path / 'w.caffemodel'))
    np.testing.assert_array_equal(other.params['ip'][0].data, net.params['ip'][0].data)
    third = caffe.Net(prototxt, caffe.TEST)
    third.share_with(net)
    net.params['ip'][1].data[...] = 9
    assert np.all(third.params['ip'][1].data == 9)  # shared, not copied
    wider = caffe.Net(write_file(tmp_path / 'wider.prototxt',
                                 SMALL_NET.replace('dim: 3', 'dim: 5')), caffe.TEST)
    # Nets of different phases are named by them; two of one phase as this one and the other.
    with pytest.raises(caffe.Error, match=r"^the TEST net 'small' cannot share the weights of "
                       r"layer 'ip' with the TRAIN net 'small': learned blob 0 is 4 5 \(20\) in "
                       r"the TEST net and 4 3 \(12\) in the TRAIN net; a layer of the same name"):
        wider.share_with(net)
    with pytest.raises(caffe.Error, match=r"^this net 'small' cannot share the weights of layer "
                       r"'ip' with the other net 'small': learned blob 0 is 4 5 \(20\) in this "
                       r"net and 4 3 \(12\) in the other net"):
        wider.share_with(third)
    with pytest.raises(caffe.Error):
        other.copy_from(str(tmp_path / 'nothing.caffemodel'))


def test_set_input_arrays_feeds_memory_data(tmp_path):
    prototxt = write_file(tmp_path / 'memory.prototxt', """
        layer { name: 'd' type: 'MemoryData' top: 'data' top: 'label'
                memory_data_param { batch_size: 2 channels: 1 height: 2 width: 2 } }
        layer { name: 'flat' type: 'Flatten' bottom: 'data' top: 'flat' }
        layer { name: 'silence' type: 'Silence' bottom: 'label' }""")
    net = caffe.Net(prototxt, caffe.TEST)
    data = np.arange(16, dtype=np.float32).reshape(4, 1, 2, 2)
    net.set_input_arrays(data, np.array([0, 1, 2, 3]))
    np.testing.assert_array_equal(net.forward()['flat'], data[:2].reshape(2, 4))
    np.testing.assert_array_equal(net.forward()['flat'], data[2:].reshape(2, 4))
    with pytest.raises(ValueError, match='multiple of the batch size'):
        net.set_input_arrays(data[:3], np.zeros(3))
    with pytest.raises(ValueError, match='data items are'):
        net.set_input_arrays(np.zeros((2, 3, 2, 2)), np.zeros(2))


def test_context_functions():
    caffe.set_random_seed(5)
    caffe.set_solver_count(1)
    caffe.set_solver_rank(0)
    assert caffe.solver_count() == 1 and caffe.solver_rank() == 0
    assert 'Python' in caffe.layer_type_list() and 'Convolution' in caffe.layer_type_list()
    if not caffe.gpu_available():
        with pytest.raises(caffe.Error, match='no usable GPU'):
            caffe.set_mode_gpu()
        with pytest.raises(caffe.Error, match='GPU'):  # no GPU support, or no such GPU
            caffe.set_device(0)
    options = caffe.parse_ddl_options('-mode r:2x1')
    assert options['mode'] == 'r' and options['dims'] == [2, 1] and options['compress'] == 'none'
    assert caffe.parse_ddl_options('-compress bf16')['compress'] == 'bf16'
    with pytest.raises(caffe.Error):
        caffe.parse_ddl_options('-mode x:4')
    timer = caffe.Timer()
    timer.start()
    timer.stop()
    assert timer.ms >= 0


def test_layer_callbacks_run_around_each_pass_in_order(small_net):
    events = []
    small_net.before_forward(lambda layer: events.append(('before_forward', layer)))
    small_net.after_forward(lambda layer: events.append(('after_forward', layer)))
    small_net.before_backward(lambda layer: events.append(('before_backward', layer)))
    small_net.after_backward(lambda layer: events.append(('after_backward', layer)))
    layers = len(small_net.layers)
    small_net.forward()
    small_net.backward()
    expected = []
    for layer in range(layers):
        expected += [('before_forward', layer), ('after_forward', layer)]
    for layer in reversed(range(layers)):
        expected += [('before_backward', layer), ('after_backward', layer)]
    assert events == expected
    with pytest.raises(TypeError, match='must be callable'):
        small_net.before_forward(3)
