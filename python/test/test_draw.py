"""caffe.draw and python/draw_net.py: BVLC's LeNet as a Graphviz graph and a PNG."""
import os
import shutil
import struct
import subprocess
import sys

import pytest
from google.protobuf import text_format

import caffe
import caffe.draw
from caffe.proto import caffe_pb2
from conftest import SOURCE_DIR

LENET = os.path.join(SOURCE_DIR, 'examples', 'mnist', 'lenet_train_test.prototxt')


def lenet_train_test():
    net = caffe_pb2.NetParameter()
    with open(LENET) as source:
        text_format.Merge(source.read(), net)
    return net


def png_size(path):
    """(width, height) from a PNG's IHDR chunk; fails for anything that is not a PNG."""
    with open(path, 'rb') as image:
        header = image.read(24)
    assert header[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG: ' + path
    assert header[12:16] == b'IHDR'
    return struct.unpack('>II', header[16:24])


def test_dot_source_has_every_layer_blob_and_edge():
    source = caffe.draw.get_dot_source(lenet_train_test(), rankdir='TB')
    assert source.startswith('digraph "LeNet" {') and 'rankdir=TB' in source
    for layer in ('conv1', 'pool1', 'conv2', 'pool2', 'ip1', 'relu1', 'ip2', 'accuracy',
                  'loss'):
        assert '"layer:' in source and ':{}"'.format(layer) in source, layer
    # data, label, conv1, pool1, conv2, pool2, ip1, ip2, accuracy, loss
    assert source.count("shape=octagon") == 10
    assert '"blob:conv1" -> "layer:3:pool1"' in source
    assert '"layer:2:conv1" -> "blob:conv1" [label="20"]' in source
    assert 'kernel 5, stride 1, pad 0\\n20 outputs' in source
    assert '(MAX Pooling)\\nkernel 2, stride 2, pad 0' in source
    # In-place ReLU: from its blob and back to it.
    assert '"blob:ip1" -> "layer:7:relu1"' in source and '"layer:7:relu1" -> "blob:ip1"' in source


def test_phase_selects_layers():
    train = caffe.draw.get_dot_source(lenet_train_test(), phase=caffe.TRAIN)
    test = caffe.draw.get_dot_source(lenet_train_test(), phase=caffe.TEST)
    assert ':accuracy"' not in train and ':accuracy"' in test
    assert 'mnist_train_lmdb' in train and 'mnist_test_lmdb' not in train
    assert 'mnist_test_lmdb' in test and 'mnist_train_lmdb' not in test


@pytest.mark.skipif(shutil.which('dot') is None, reason="Graphviz's dot is not installed "
                                                        "(graphviz)")
def test_draw_net_script_renders_lenet_png(tmp_path):
    output = str(tmp_path / 'lenet.png')
    result = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, 'python', 'draw_net.py'),
                             LENET, output, '--rankdir', 'TB'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 0, result.stdout.decode('utf-8', 'replace')
    width, height = png_size(output)
    # Top to bottom: taller than wide, and large enough to read (about 12 layers, 8 blobs).
    assert height > width and height > 800 and width > 300, (width, height)
    svg = caffe.draw.draw_net(lenet_train_test(), 'LR', 'svg').decode('utf-8')
    assert '<svg' in svg and 'conv1' in svg
    with pytest.raises(RuntimeError, match='dot -Tnosuchformat failed'):
        caffe.draw.draw_net(lenet_train_test(), 'LR', 'nosuchformat')


def test_draw_net_script_mistakes_are_error_lines(tmp_path):
    """A missing or malformed prototxt is an argparse error naming it, not a traceback."""
    malformed = tmp_path / 'bad.prototxt'
    malformed.write_text('layer { name: "a" type: }\n')
    for path, message in ((str(tmp_path / 'missing.prototxt'), 'cannot read'),
                          (str(malformed), 'is not a valid net prototxt')):
        result = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, 'python', 'draw_net.py'),
                                 path, str(tmp_path / 'out.png')],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        output = result.stdout.decode('utf-8', 'replace')
        assert result.returncode == 2, output
        assert 'draw_net.py: error: ' in output and path in output and message in output, output
        assert 'Traceback' not in output, output
