"""`cmake --install` puts a working `caffe` package (with libcaffe and the scripts) under the
prefix: importable from <prefix>/python with nothing of the build tree on the path."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BINARY_DIR

CHECK = """
import os, sys
import numpy as np
import caffe
assert caffe.__file__.startswith(sys.argv[1]), caffe.__file__
path = os.path.join(sys.argv[1], 'net.prototxt')
with open(path, 'w') as f:
    f.write("layer { name: 'x' type: 'Input' top: 'x' input_param { shape { dim: 2 } } } "
            "layer { name: 'r' type: 'ReLU' bottom: 'x' top: 'y' }")
net = caffe.Net(path, caffe.TEST)
print(net.forward(x=np.array([-1.0, 2.0]))['y'].tolist())
"""


def test_cmake_install_gives_an_importable_package(tmp_path):
    cmake = shutil.which('cmake')
    if cmake is None or not os.path.isfile(os.path.join(BINARY_DIR, 'cmake_install.cmake')):
        pytest.skip('needs cmake and a configured build at {} (CAFFE_BINARY_DIR)'.format(
            BINARY_DIR))
    prefix = str(tmp_path / 'prefix')
    result = subprocess.run([cmake, '--install', BINARY_DIR, '--prefix', prefix],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 0, result.stdout.decode('utf-8', 'replace')
    package = os.path.join(prefix, 'python', 'caffe')
    for name in ('__init__.py', 'pycaffe.py', 'io.py', 'net_spec.py', 'draw.py',
                 'proto/caffe_pb2.py'):
        assert os.path.isfile(os.path.join(package, name)), name
    for script in ('classify.py', 'detect.py', 'draw_net.py', 'train.py'):
        assert os.access(os.path.join(prefix, 'python', script), os.X_OK), script
    environment = {key: value for key, value in os.environ.items() if key != 'PYTHONPATH'}
    environment.update(PYTHONPATH=os.path.join(prefix, 'python'), PYTHONDONTWRITEBYTECODE='1')
    result = subprocess.run([sys.executable, '-c', CHECK, os.path.join(prefix, 'python')],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment,
                            cwd=prefix, check=False)
    output = result.stdout.decode('utf-8', 'replace')
    assert result.returncode == 0, output
    assert output.strip().splitlines()[-1] == '[0.0, 2.0]'
    result = subprocess.run([sys.executable, os.path.join(prefix, 'python', 'draw_net.py'),
                             '--help'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=environment, cwd=prefix, check=False)
    assert result.returncode == 0 and b'Graphviz' in result.stdout
