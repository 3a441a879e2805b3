"""tools/extra/compare_caffemodels.py: the largest relative difference and where it is, the
tolerance's exit code, and files that cannot be compared named in one line."""
import os
import sys

from caffe.proto import caffe_pb2
from conftest import SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, 'tools', 'extra'))
import compare_caffemodels  # noqa: E402


def write_model(path, blobs):
    """A caffemodel of layers {name: [blob values, ...]}."""
    net = caffe_pb2.NetParameter()
    for name, values in blobs.items():
        layer = net.layer.add()
        layer.name = name
        for data in values:
            blob = layer.blobs.add()
            blob.shape.dim.append(len(data))
            blob.data.extend(data)
    path.write_bytes(net.SerializeToString())
    return str(path)


def test_the_largest_relative_difference_and_where(tmp_path, capsys):
    reference = write_model(tmp_path / 'b.caffemodel',
                            {'conv': [[2.0, -4.0], [1.0]], 'ip': [[10.0, 0.0, 5.0]]})
    other = write_model(tmp_path / 'a.caffemodel',
                        {'conv': [[2.0, -3.0], [1.0]], 'ip': [[10.0, 0.5, 5.0]]})
    assert compare_caffemodels.main([other, reference]) == 0
    # conv blob 0: 1 / 4 = 0.25, ip blob 0: 0.5 / 10 = 0.05
    assert capsys.readouterr().out == 'largest relative difference: 2.500e-01 (layer conv, blob 0)\n'
    assert compare_caffemodels.main([other, reference, '--tolerance', '0.3']) == 0
    assert compare_caffemodels.main([other, reference, '--tolerance', '0.2']) == 1
    assert 'above the tolerance 0.2' in capsys.readouterr().err
    assert compare_caffemodels.main([reference, reference, '--tolerance', '0']) == 0


def test_files_that_cannot_be_compared_are_one_line(tmp_path, capsys):
    reference = write_model(tmp_path / 'b.caffemodel', {'conv': [[1.0, 2.0]]})
    longer = write_model(tmp_path / 'a.caffemodel', {'conv': [[1.0, 2.0, 3.0]]})
    assert compare_caffemodels.main([longer, reference]) == 2
    assert 'different layers or blob sizes' in capsys.readouterr().err
    text = tmp_path / 'solver.prototxt'
    text.write_text('base_lr: 0.01\n')
    assert compare_caffemodels.main([str(text), reference]) == 2
    err = capsys.readouterr().err
    assert err.startswith('compare_caffemodels.py: error: ') and 'not a caffemodel' in err
    assert err.count('\n') == 1
