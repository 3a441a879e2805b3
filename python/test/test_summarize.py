"""tools/extra/summarize.py: one line per layer of a net definition (BVLC's CaffeNet, with and
without --phase), and one-line errors for a missing or malformed file."""
import os
import subprocess
import sys

from conftest import SOURCE_DIR, write_file

SCRIPT = os.path.join(SOURCE_DIR, 'tools', 'extra', 'summarize.py')
CAFFENET = os.path.join(SOURCE_DIR, 'models', 'bvlc_reference_caffenet', 'train_val.prototxt')


def run(*args):
    result = subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, check=False,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    return result.returncode, result.stdout.decode(), result.stderr.decode()


def row(output, name):
    rows = [line.split() for line in output.splitlines()[2:]]
    return next(' '.join(cells) for cells in rows if cells[1] == name)


def test_caffenet_summary():
    code, out, err = run(CAFFENET)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == 'CaffeNet: 26 layers'
    assert lines[1].split() == ['#', 'name', 'type', 'definition', 'bottoms', '->', 'tops']
    assert len(lines) == 2 + 26
    assert row(out, 'conv2') == ('6 conv2 Convolution 256 5/1 pad 2 group 2; lr 1 2 decay 1 0 '
                                 'norm1 -> conv2')
    assert row(out, 'pool1') == '4 pool1 Pooling MAX 3/2 pad 0 conv1 -> pool1'
    assert row(out, 'relu1') == '3 relu1 ReLU conv1 (in place)'
    assert row(out, 'drop6') == '19 drop6 Dropout ratio 0.5 fc6 (in place)'
    assert row(out, 'accuracy').endswith('only TEST fc8, label -> accuracy')
    code, out, err = run(CAFFENET, '--phase', 'TRAIN')
    assert code == 0, err
    names = [line.split()[1] for line in out.splitlines()[2:]]
    assert 'accuracy' not in names and names.count('data') == 1 and len(names) == 24


def test_mistakes_are_one_line_errors(tmp_path):
    code, _, err = run(str(tmp_path / 'missing.prototxt'))
    assert code == 2 and 'no such file' in err
    bad = write_file(tmp_path / 'bad.prototxt', 'layer { name: "x" tpye: "ReLU" }\n')
    code, _, err = run(bad)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert 'bad.prototxt:1:19: ' in err and 'tpye' in err, err
    empty = write_file(tmp_path / 'empty.prototxt', 'name: "nothing"\n')
    code, _, err = run(empty)
    assert code == 1 and 'has no layers' in err
