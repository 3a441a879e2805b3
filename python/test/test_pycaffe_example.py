"""examples/pycaffe: linreg.prototxt, whose loss is BVLC's Euclidean loss written in Python
(examples/pycaffe/layers/pyloss.py), computes the loss and gradients numpy computes, learns in a
solver, and runs in the caffe tool with the layers' folder on PYTHONPATH; without it the tool
stops with one line."""
import os
import subprocess

import numpy as np
import pytest

import caffe
from conftest import BINARY_DIR, SOURCE_DIR, write_file

EXAMPLE = os.path.join(SOURCE_DIR, 'examples', 'pycaffe')
LINREG = os.path.join(EXAMPLE, 'linreg.prototxt')


def test_linreg_computes_the_euclidean_loss_and_its_gradients():
    net = caffe.Net(LINREG, caffe.TRAIN)
    assert type(net.layers[list(net._layer_names).index('loss')]).__name__ == 'EuclideanLossLayer'
    loss = float(net.forward()['loss'])
    ipx, ipy = net.blobs['ipx'].data.copy(), net.blobs['ipy'].data.copy()
    assert ipx.shape == (10, 10)
    assert loss == pytest.approx(np.sum((ipx - ipy) ** 2) / 10 / 2, rel=1e-5)
    net.backward()
    np.testing.assert_allclose(net.blobs['ipx'].diff, (ipx - ipy) / 10, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(net.blobs['ipy'].diff, (ipy - ipx) / 10, rtol=1e-5, atol=1e-7)
    x = net.blobs['x'].data.reshape(10, 6)
    np.testing.assert_allclose(net.params['ipx'][0].diff, ((ipx - ipy) / 10).T @ x,
                               rtol=1e-4, atol=1e-6)


def test_linreg_learns_in_a_solver(tmp_path):
    solver_file = write_file(tmp_path / 'solver.prototxt', (
        'net: "{}"\nbase_lr: 0.05\nlr_policy: "fixed"\nmomentum: 0.9\nmax_iter: 200\n'
        'display: 0\nsnapshot_after_train: false\nrandom_seed: 1\n').format(LINREG))
    solver = caffe.get_solver(solver_file)
    losses = []
    for _ in range(200):
        solver.step(1)
        losses.append(float(solver.net.blobs['loss'].data))
    # DummyData draws new inputs every pass: the distance shrinks as both layers learn to agree.
    assert np.mean(losses[-20:]) < 0.2 * np.mean(losses[:20]), (losses[:5], losses[-5:])


def test_the_caffe_tool_runs_it_with_the_layers_on_pythonpath():
    tool = os.path.join(BINARY_DIR, 'bin', 'caffe')
    if not os.path.exists(tool):
        pytest.skip('caffe not built at {} (CAFFE_BINARY_DIR)'.format(tool))
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(caffe.__file__)))
    args = [tool, 'time', '-model', LINREG, '-iterations', '2']
    for path, ok in ((os.path.join(EXAMPLE, 'layers') + os.pathsep + package_dir, True),
                     (package_dir, False)):
        run = subprocess.run(args, capture_output=True, text=True,
                             env=dict(os.environ, PYTHONPATH=path))
        if ok:
            assert run.returncode == 0, run.stderr[-2000:]
            assert 'Average Forward-Backward' in run.stderr + run.stdout
        else:
            assert run.returncode != 0
            assert run.stderr.strip().splitlines()[-1] == (
                "caffe time: error: Python layer 'loss': cannot import python_param.module "
                "'pyloss' (is its folder on PYTHONPATH?): ModuleNotFoundError: No module named "
                "'pyloss'")
