"""caffe.NetSpec with caffe.layers / caffe.params: BVLC's LeNet written in Python is, message for
message, examples/mnist/lenet.prototxt; keyword routing and mistakes."""
import os

import pytest
from google.protobuf import text_format

import caffe
from caffe import layers as L, params as P
from caffe.proto import caffe_pb2
from conftest import SOURCE_DIR, write_file


def lenet_deploy():
    learning = [dict(lr_mult=1), dict(lr_mult=2)]
    fillers = dict(weight_filler=dict(type='xavier'), bias_filler=dict(type='constant'))
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[64, 1, 28, 28]))
    n.conv1 = L.Convolution(n.data, param=learning, num_output=20, kernel_size=5, stride=1,
                            **fillers)
    n.pool1 = L.Pooling(n.conv1, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.conv2 = L.Convolution(n.pool1, param=learning, num_output=50, kernel_size=5, stride=1,
                            **fillers)
    n.pool2 = L.Pooling(n.conv2, pool='MAX', kernel_size=2, stride=2)  # enum by name
    n.ip1 = L.InnerProduct(n.pool2, param=learning, num_output=500, **fillers)
    n.relu1 = L.ReLU(n.ip1, in_place=True)
    n.ip2 = L.InnerProduct(n.relu1, param=learning, num_output=10, **fillers)
    n.prob = L.Softmax(n.ip2)
    net = n.to_proto()
    net.name = 'LeNet'
    return net


def test_netspec_lenet_is_the_example_prototxt():
    expected = caffe_pb2.NetParameter()
    with open(os.path.join(SOURCE_DIR, 'examples', 'mnist', 'lenet.prototxt')) as source:
        text_format.Merge(source.read(), expected)
    generated = lenet_deploy()
    assert [layer.name for layer in generated.layer] == [layer.name for layer in expected.layer]
    for ours, theirs in zip(generated.layer, expected.layer):
        assert ours == theirs, 'layer {}:\n{}\nvs. the example:\n{}'.format(ours.name, ours,
                                                                            theirs)
    assert generated == expected


def test_netspec_prototxt_builds_a_net(tmp_path):
    net = caffe.Net(write_file(tmp_path / 'lenet.prototxt', str(lenet_deploy())), caffe.TEST)
    assert net.blobs['prob'].data.shape == (64, 10)
    assert net.top_names['relu1'] == ['ip1']  # in place


def test_keywords_go_to_the_type_param_or_the_layer():
    n = caffe.NetSpec()
    n.data, n.label = L.DummyData(shape=[dict(dim=[2, 3]), dict(dim=[2])], ntop=2)
    n.loss = L.SoftmaxWithLoss(n.data, n.label, loss_weight=2, axis=1,
                               include=dict(phase=caffe.TRAIN),
                               loss_param=dict(ignore_label=-1))
    n.silence = L.Silence(n.label, ntop=0)
    layer = n.to_proto().layer[1]
    assert layer.loss_weight == [2] and layer.softmax_param.axis == 1
    assert layer.loss_param.ignore_label == -1 and layer.include[0].phase == caffe.TRAIN
    assert list(layer.bottom) == ['data', 'label'] and list(layer.top) == ['loss']
    assert n.to_proto().layer[2].type == 'Silence' and not n.to_proto().layer[2].top
    # Unnamed layers are named after their type.
    text = str(caffe.to_proto(L.ReLU(L.Input(shape=dict(dim=[1])))))
    assert 'name: "Input1"' in text and 'name: "ReLU1"' in text
    assert P.Pooling.AVE == caffe_pb2.PoolingParameter.AVE


def test_mistakes_are_named():
    with pytest.raises(AttributeError, match="'num_outputs' is a field of neither "
                                             "LayerParameter nor ConvolutionParameter"):
        n = caffe.NetSpec()
        n.data = L.Input(shape=dict(dim=[1, 1, 4, 4]))
        n.conv = L.Convolution(n.data, num_outputs=3)
        n.to_proto()
    with pytest.raises(ValueError, match="'MAXIMUM' is not a value of PoolingParameter.pool"):
        caffe.to_proto(L.Pooling(L.Input(shape=dict(dim=[1])), pool='MAXIMUM'))
    with pytest.raises(TypeError, match='not a top of another layer'):
        L.ReLU('data')
    # BVLC's exact words come first: user code matches them.
    with pytest.raises(TypeError) as error:
        L.Silence((L.Input(shape=dict(dim=[1])),))
    assert str(error.value).startswith(
        "Silence input 0 is not a Top (type is <class 'tuple'>)"), str(error.value)
    with pytest.raises(AttributeError, match='has no message FooParameter'):
        P.Foo.BAR
