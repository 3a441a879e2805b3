"""tools/extra/parse_log.py and plot_training_log.py: CSV tables from caffe training logs (a
hand-written one in BVLC's and our glog formats, and a real log of `caffe train`), the plot as
a PNG, and BVLC's shell-side tools: parse_log.sh's aligned tables and extract_seconds.py."""
import csv
import os
import re
import subprocess
import sys

import pytest

from conftest import BINARY_DIR, SOURCE_DIR, write_file
from test_draw import png_size

TOOLS = os.path.join(SOURCE_DIR, 'tools', 'extra')
sys.path.insert(0, TOOLS)
import parse_log  # noqa: E402

# BVLC's glog prefix has no year (I0509); glog >= 0.6, as ours links, prints it (I20240509).
HAND_LOG = """\
I0509 10:00:00.000000  1234 solver.cpp:44] Initializing solver from parameters:
I0509 10:00:01.000000  1234 solver.cpp:237] Solving LeNet
I0509 10:00:01.500000  1234 solver.cpp:276] Iteration 0, Testing net (#0)
I0509 10:00:02.000000  1234 solver.cpp:326]     Test net output #0: accuracy = 0.1
I0509 10:00:02.000000  1234 solver.cpp:326]     Test net output #1: loss = 2.3 (* 1 = 2.3 loss)
I0509 10:00:02.250000  1234 solver.cpp:194] Iteration 0 (0 iter/s, 0.2s/100 iters), loss = 2.4
I0509 10:00:02.250000  1234 solver.cpp:212]     Train net output #0: loss = 2.4 (* 1 = 2.4 loss)
I0509 10:00:02.250000  1234 sgd_solver.cpp:86] Iteration 0, lr = 0.01
I0509 10:00:12.250000  1234 solver.cpp:194] Iteration 100 (10 iter/s, 10s/100 iters), loss = 0.5
I0509 10:00:12.250000  1234 solver.cpp:212]     Train net output #0: loss = 0.5 (* 1 = 0.5 loss)
I0509 10:00:12.250000  1234 sgd_solver.cpp:86] Iteration 100, lr = 0.00992565
I0509 10:00:20.000000  1234 solver.cpp:276] Iteration 200, Testing net (#0)
I0509 10:00:21.000000  1234 solver.cpp:326]     Test net output #0: accuracy = 0.9
I0509 10:00:21.000000  1234 solver.cpp:326]     Test net output #1: loss = 0.25 (* 1 = 0.25 loss)
"""


def test_parse_log_tables_by_hand(tmp_path):
    for name, text in (('bvlc.log', HAND_LOG),
                       ('ours.log', re.sub(r'^I0509', 'I20240509', HAND_LOG, flags=re.M))):
        log = write_file(tmp_path / name, text)
        train, test = parse_log.parse_log(log)
        assert train == [
            {'NumIters': 0, 'Seconds': 1.25, 'LearningRate': 0.01, 'loss': 2.4},
            {'NumIters': 100, 'Seconds': 11.25, 'LearningRate': 0.00992565, 'loss': 0.5}]
        assert test == [
            {'NumIters': 0, 'Seconds': 1.0, 'LearningRate': 0.01, 'accuracy': 0.1, 'loss': 2.3},
            {'NumIters': 200, 'Seconds': 20.0, 'LearningRate': 0.00992565, 'accuracy': 0.9,
             'loss': 0.25}]
        result = subprocess.run([sys.executable, os.path.join(TOOLS, 'parse_log.py'), log,
                                 str(tmp_path)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, check=False)
        assert result.returncode == 0, result.stdout
        with open(log + '.train') as table:
            assert table.read() == ('NumIters,Seconds,LearningRate,loss\n'
                                    '0,1.25,0.01,2.4\n100,11.25,0.00992565,0.5\n')
        with open(log + '.test') as table:
            assert table.read() == ('NumIters,Seconds,LearningRate,accuracy,loss\n'
                                    '0,1.0,0.01,0.1,2.3\n200,20.0,0.00992565,0.9,0.25\n')


NET = """
name: 'tiny'
layer { name: 'data' type: 'DummyData' top: 'data' top: 'label'
        dummy_data_param { shape { dim: 8 dim: 4 } shape { dim: 8 }
                           data_filler { type: 'gaussian' } data_filler { type: 'constant' } } }
layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip'
        inner_product_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.5 } } }
layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' top: 'loss' }
layer { name: 'accuracy' type: 'Accuracy' bottom: 'ip' bottom: 'label' top: 'accuracy'
        include { phase: TEST } }
"""
SOLVER = """
net: '{net}'
test_iter: 2  test_interval: 10  display: 5  max_iter: 20
base_lr: 0.5  lr_policy: 'step'  stepsize: 10  gamma: 0.5
snapshot_prefix: '{prefix}'  snapshot_after_train: false  random_seed: 3  solver_mode: CPU
"""


@pytest.fixture(scope='module')
def real_log(tmp_path_factory):
    """The log of a real (tiny) `caffe train`: 20 iterations, display 5, test every 10."""
    caffe_tool = os.path.join(BINARY_DIR, 'bin', 'caffe')
    if not os.path.isfile(caffe_tool):
        pytest.skip('no caffe tool at {} (set CAFFE_BINARY_DIR)'.format(caffe_tool))
    folder = tmp_path_factory.mktemp('train')
    net = write_file(folder / 'net.prototxt', NET)
    solver = write_file(folder / 'solver.prototxt',
                        SOLVER.format(net=net, prefix=folder / 'snap'))
    result = subprocess.run([caffe_tool, 'train', '-solver', solver], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, check=False)
    text = result.stdout.decode('utf-8', 'replace')
    assert result.returncode == 0, text
    return write_file(folder / 'train.log', text)


def test_parse_log_reads_a_real_training_log(real_log, tmp_path):
    train, test = parse_log.parse_log(real_log)
    with open(real_log) as log:
        text = log.read()
    assert [row['NumIters'] for row in train] == [0, 5, 10, 15]
    assert [row['LearningRate'] for row in train] == [0.5, 0.5, 0.25, 0.25]
    logged_losses = [float(v) for v in re.findall(r'Train net output #0: loss = (\S+)', text)]
    assert [row['loss'] for row in train] == logged_losses
    assert [row['NumIters'] for row in test] == [0, 10, 20]
    assert all(list(row) == ['NumIters', 'Seconds', 'LearningRate', 'accuracy', 'loss']
               for row in test)
    assert test[-1]['loss'] < test[0]['loss'] and test[-1]['accuracy'] == 1.0
    seconds = [row['Seconds'] for row in train]
    assert seconds == sorted(seconds) and seconds[0] >= 0
    parse_log.save_csv_files(real_log, str(tmp_path), train, test)
    with open(str(tmp_path / 'train.log.test')) as table:
        rows = list(csv.DictReader(table))
    assert [int(row['NumIters']) for row in rows] == [0, 10, 20]
    assert [float(row['accuracy']) for row in rows] == [row['accuracy'] for row in test]


def test_plot_training_log_writes_png(real_log, tmp_path):
    pytest.importorskip('matplotlib', reason='plotting needs python3-matplotlib')
    script = os.path.join(TOOLS, 'plot_training_log.py')
    output = str(tmp_path / 'training.png')
    result = subprocess.run([sys.executable, script, real_log, '-o', output],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 0, result.stdout.decode('utf-8', 'replace')
    width, height = png_size(output)
    assert width >= 600 and height >= 600, (width, height)
    bvlc_form = str(tmp_path / 'test_accuracy.png')  # chart 0: test accuracy vs. iterations
    result = subprocess.run([sys.executable, script, '0', bvlc_form, real_log],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 0, result.stdout.decode('utf-8', 'replace')
    png_size(bvlc_form)
    not_a_log = write_file(tmp_path / 'empty.log', 'nothing here\n')
    result = subprocess.run([sys.executable, script, not_a_log, '-o', str(tmp_path / 'x.png')],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 1 and b'not a caffe training log' in result.stdout
    assert b'Traceback' not in result.stdout, result.stdout
    # BVLC's numbered form: a log without the chart's data, and a missing log, are one line each.
    for args, message in (([not_a_log], b'no test accuracy in the log'),
                          ([str(tmp_path / 'missing.log')], b'no such log file')):
        result = subprocess.run([sys.executable, script, '0', bvlc_form] + args,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        assert result.returncode == 1 and result.stdout.startswith(
            b'plot_training_log.py: error: ') and message in result.stdout, result.stdout
        assert len(result.stdout.splitlines()) == 1, result.stdout


def test_bvlc_shell_tools_write_their_tables(tmp_path):
    log = write_file(tmp_path / 'caffe.log', HAND_LOG)
    work = tmp_path / 'work'
    work.mkdir()
    result = subprocess.run(['sh', os.path.join(TOOLS, 'parse_log.sh'), log], cwd=str(work),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 0, result.stdout
    # In the current folder, as BVLC's parse_log.sh writes them.
    with open(str(work / 'caffe.log.train')) as table:
        assert table.read().splitlines() == [
            '# Iters Seconds TrainingLoss LearningRate',
            '0    1.25   2.4  0.01',
            '100  11.25  0.5  0.00992565']
    with open(str(work / 'caffe.log.test')) as table:
        assert table.read().splitlines() == [
            '# Iters Seconds TestAccuracy TestLoss',
            '0    1.0   0.1  2.3',
            '200  20.0  0.9  0.25']
    result = subprocess.run(['sh', os.path.join(TOOLS, 'parse_log.sh')], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, check=False)
    assert result.returncode == 1 and b'Usage parse_log.sh' in result.stdout
    # extract_seconds.py: the seconds since "Solving" of every timed line.
    seconds = str(tmp_path / 'seconds.txt')
    result = subprocess.run([sys.executable, os.path.join(TOOLS, 'extract_seconds.py'), log,
                             seconds], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            check=False)
    assert result.returncode == 0, result.stdout
    with open(seconds) as values:
        numbers = [float(value) for value in values.read().split()]
    assert len(numbers) == len(HAND_LOG.splitlines())
    assert numbers[:3] == [-1.0, 0.0, 0.5] and numbers[-1] == 20.0
    # BVLC's name of the plotting script.
    assert os.path.realpath(os.path.join(TOOLS, 'plot_training_log.py.example')) == \
        os.path.realpath(os.path.join(TOOLS, 'plot_training_log.py'))


def bvlc_seconds(path_to_log):
    """What BVLC's extract_seconds.py does with a log (the old form: the first word's columns 1-2
    the month, 3-4 the day; the year from the file), written anew here: on glog 0.6's year
    prefix (I20261201) datetime() raises "month must be in 1..12"."""
    import datetime
    year = datetime.datetime.fromtimestamp(os.path.getmtime(path_to_log)).year
    start, seconds = None, []
    with open(path_to_log) as log:
        for line in log:
            if not re.match(r'^[IWEF]\d', line):
                continue
            stamp, clock = line.split()[:2]  # the old form: month in columns 1-2, day in 3-4
            hour, minute, second = clock.split('.')[0].split(':')
            time = datetime.datetime(year, int(stamp[1:3]), int(stamp[3:5]), int(hour),
                                     int(minute), int(second), int(clock.split('.')[1]))
            if start is None and 'Solving' in line:
                start = time
            if start is not None:
                seconds.append((time - start).total_seconds())
    return seconds


def test_caffe_train_logs_bvlc_prefix_that_bvlc_parsers_read(real_log, tmp_path):
    with open(real_log) as log:
        glog_lines = [line for line in log if re.match(r'^[IWEF]\d', line)]
    assert glog_lines
    for line in glog_lines:  # I1201 21:19:00.953812 (no year), as BVLC-era glog printed
        assert re.match(r'^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} ', line), line
    seconds = bvlc_seconds(real_log)
    assert seconds and seconds[0] == 0.0 and seconds == sorted(seconds)
    # A user can still turn the year on; BVLC's parser then fails, ours reads both forms.
    caffe_tool = os.path.join(BINARY_DIR, 'bin', 'caffe')
    solver = real_log.replace('train.log', 'solver.prototxt')
    for environment, args in (({'GLOG_log_year_in_prefix': '1'}, []),
                              ({}, ['--log_year_in_prefix=true'])):
        result = subprocess.run([caffe_tool, 'train', '-solver', solver] + args,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                                env=dict(os.environ, **environment))
        text = result.stdout.decode('utf-8', 'replace')
        assert result.returncode == 0 and re.search(r'^I20\d{6} ', text, re.M), text[:300]
        with_year = write_file(tmp_path / 'year.log', text)
        with pytest.raises(ValueError, match='month must be in 1..12'):
            bvlc_seconds(with_year)
        assert [row['NumIters'] for row in parse_log.parse_log(with_year)[0]] == [0, 5, 10, 15]


def test_pycaffe_logs_bvlc_prefix():
    result = subprocess.run([sys.executable, '-c', 'import caffe; caffe.log("hello")'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    text = result.stdout.decode('utf-8', 'replace')
    assert result.returncode == 0 and re.search(r'^I\d{4} \d\d:\d\d:\d\d\.\d{6} .*hello', text,
                                                re.M), text
