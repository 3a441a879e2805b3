"""tools/extra/plot_caffe_time.py: the per-layer times and averages of `caffe time` output (a
hand-written log in BVLC's format, and a real run of ours), which layers a big net shows, the
PNG for one log and for two side by side, and the error for a file that is no such output."""
import os
import subprocess
import sys

import pytest

from conftest import BINARY_DIR, SOURCE_DIR, write_file
from test_draw import png_size

TOOLS = os.path.join(SOURCE_DIR, 'tools', 'extra')
sys.path.insert(0, TOOLS)
import plot_caffe_time  # noqa: E402

BVLC_TIME_LOG = """\
I0509 10:00:00.000000  1234 caffe.cpp:399] *** Benchmark begins ***
I0509 10:00:01.000000  1234 caffe.cpp:422] Average time per layer:
I0509 10:00:01.000000  1234 caffe.cpp:425]       data	forward: 0.0012 ms.
I0509 10:00:01.000000  1234 caffe.cpp:428]       data	backward: 0.0008 ms.
I0509 10:00:01.000000  1234 caffe.cpp:425] inception_3a/1x1	forward: 2.5 ms.
I0509 10:00:01.000000  1234 caffe.cpp:428] inception_3a/1x1	backward: 4.75 ms.
I0509 10:00:01.000000  1234 caffe.cpp:425]       loss	forward: 0.5 ms.
I0509 10:00:01.000000  1234 caffe.cpp:428]       loss	backward: 1e-3 ms.
I0509 10:00:01.000000  1234 caffe.cpp:433] Average Forward pass: 3.1 ms.
I0509 10:00:01.000000  1234 caffe.cpp:435] Average Backward pass: 4.9 ms.
I0509 10:00:01.000000  1234 caffe.cpp:437] Average Forward-Backward: 8.2 ms.
I0509 10:00:01.000000  1234 caffe.cpp:439] Total Time: 82 ms.
"""

NET = """
name: 'tiny'
layer { name: 'data' type: 'Input' top: 'data' top: 'label'
        input_param { shape { dim: 16 dim: 8 } shape { dim: 16 } } }
layer { name: 'ip1' type: 'InnerProduct' bottom: 'data' top: 'ip1'
        inner_product_param { num_output: 32 weight_filler { type: 'gaussian' std: 0.1 } } }
layer { name: 'relu1' type: 'ReLU' bottom: 'ip1' top: 'ip1' }
layer { name: 'ip2' type: 'InnerProduct' bottom: 'ip1' top: 'ip2'
        inner_product_param { num_output: 4 weight_filler { type: 'gaussian' std: 0.1 } } }
layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip2' bottom: 'label' top: 'loss' }
"""


def test_parse_bvlc_time_output(tmp_path):
    layers, averages = plot_caffe_time.parse_time_log(write_file(tmp_path / 'time.log',
                                                                 BVLC_TIME_LOG))
    assert list(layers) == ['data', 'inception_3a/1x1', 'loss']
    assert layers['inception_3a/1x1'] == {'forward': 2.5, 'backward': 4.75}
    assert layers['loss']['backward'] == 0.001
    assert averages == {'Forward pass': 3.1, 'Backward pass': 4.9, 'Forward-Backward': 8.2}


def test_big_nets_show_their_slowest_layers():
    layers = {'layer{}'.format(i): {'forward': float(i % 7), 'backward': 0.0}
              for i in range(100)}
    runs = [(layers, {})]
    names, total = plot_caffe_time._chosen_layers(runs, None)
    assert total == 100 and len(names) == plot_caffe_time.DEFAULT_TOP
    assert all(layers[name]['forward'] >= 4 for name in names)  # the slowest, in net order
    assert names == sorted(names, key=lambda name: int(name[5:]))
    assert plot_caffe_time._chosen_layers(runs, 0)[0] == list(layers)
    assert len(plot_caffe_time._chosen_layers([(dict(list(layers.items())[:60]), {})],
                                              None)[0]) == 60


def test_plots_a_real_caffe_time_run(tmp_path):
    pytest.importorskip('matplotlib', reason='plotting needs python3-matplotlib')
    caffe_tool = os.path.join(BINARY_DIR, 'bin', 'caffe')
    if not os.path.isfile(caffe_tool):
        pytest.skip('no caffe tool at {} (set CAFFE_BINARY_DIR)'.format(caffe_tool))
    net = write_file(tmp_path / 'net.prototxt', NET)
    logs = []
    for run in ('first', 'second'):
        result = subprocess.run([caffe_tool, 'time', '-model', net, '-iterations', '3'],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        assert result.returncode == 0, result.stdout
        logs.append(write_file(tmp_path / (run + '.log'), result.stdout.decode()))
    layers, averages = plot_caffe_time.parse_time_log(logs[0])
    assert list(layers) == ['data', 'ip1', 'relu1', 'ip2', 'loss']
    assert all(value >= 0 for times in layers.values() for value in times.values())
    assert set(averages) == {'Forward pass', 'Backward pass', 'Forward-Backward'}
    script = os.path.join(TOOLS, 'plot_caffe_time.py')
    for inputs, name in ((logs[:1], 'one.png'), (logs, 'two.png')):
        output = str(tmp_path / name)
        result = subprocess.run([sys.executable, script] + inputs + ['-o', output],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        assert result.returncode == 0, result.stdout
        width, height = png_size(output)
        assert width >= 600 and height >= 250, (width, height)
    not_a_log = write_file(tmp_path / 'train.log', 'I0509 10:00:00.000000 1 x.cpp:1] hello\n')
    result = subprocess.run([sys.executable, script, not_a_log, '-o', str(tmp_path / 'x.png')],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 1
    assert b'not the output of `caffe time`' in result.stdout
