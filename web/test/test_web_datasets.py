"""Datasets made the other ways the form offers (list files for both splits; DIGITS's fill
resize, color, JPEG-encoded records), and a model trained with DDL's learners under mpirun:
over HTTP, with the records and the logs checked."""
import os
import re
import shutil
import urllib.parse
import urllib.request

import numpy as np
import pytest

from conftest import Server, wait_for, write_class_folders


def post(server, path, fields):
    request = urllib.request.Request(server.url + path, urllib.parse.urlencode(fields).encode())
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.geturl().rstrip('/').split('/')[-1]


def status(server, job_id):
    found = re.search(r'data-id="{}" data-status="(\w+)"'.format(job_id), server.get('/'))
    return found.group(1) if found else None


@pytest.fixture(scope='module')
def server(tools_built, digits, workspace):
    data, jobs = workspace
    (images, labels), _ = digits
    written = write_class_folders(os.path.join(data, 'images'), images[:240], labels[:240] % 3,
                                  names=['a', 'b', 'c'])
    # Lists in a folder of their own, with paths relative to it (as DIGITS's list files).
    os.makedirs(os.path.join(data, 'lists'))
    for name, part in (('train.txt', written[:200]), ('val.txt', written[200:])):
        with open(os.path.join(data, 'lists', name), 'w') as listing:
            listing.write(''.join('../images/{} {}\n'.format(
                os.path.relpath(path, os.path.join(data, 'images')), label)
                for path, label in part))
    server = Server(jobs, data).start()
    yield server
    server.kill()


def test_list_files_fill_resize_color_jpeg(server, workspace):
    data, jobs = workspace
    job_id = post(server, '/datasets/new', {
        'train_list': 'lists/train.txt', 'val_list': 'lists/val.txt', 'image_type': 'color',
        'width': 24, 'height': 20, 'resize_mode': 'fill', 'encoding': 'jpg', 'name': 'lists'})
    wait_for(lambda: status(server, job_id) == 'done', 120, 'the dataset')
    page = server.get('/datasets/' + job_id)
    assert '3 classes' in page and '200 training, 40 validation images listed' in page
    explore = server.get('/datasets/{}/explore?split=val&label=1'.format(job_id))
    expected = sum(1 for line in open(os.path.join(data, 'lists', 'val.txt'))
                   if line.split()[1] == '1')
    assert 'data-total="{}"'.format(expected) in explore
    assert explore.count('src="data:image/jpeg;base64,') == expected  # stored as JPEG
    import lmdb
    from caffe.proto import caffe_pb2
    datum = caffe_pb2.Datum()
    with lmdb.open(os.path.join(jobs, job_id, 'train_db'), readonly=True, lock=False) as env:
        with env.begin() as transaction:
            datum.ParseFromString(next(iter(transaction.cursor()))[1])
    assert datum.encoded and (datum.channels, datum.height, datum.width) == (3, 20, 24)
    # Fill: the 28x28 digit scaled to 20x20 in the middle, noise at the sides.
    from PIL import Image
    import io
    pixels = np.asarray(Image.open(io.BytesIO(datum.data)))
    assert pixels.shape == (20, 24, 3) and pixels[:, :2].std() > 30
    shutil.rmtree(os.path.join(jobs, job_id, 'resized'), ignore_errors=True)


def test_model_with_ddl_learners(server, workspace):
    if not shutil.which('mpirun'):
        pytest.skip('DDL needs mpirun (openmpi-bin)')
    data, jobs = workspace
    dataset = post(server, '/datasets/new', {
        'train_folder': 'images', 'val_percent': '10', 'image_type': 'gray', 'width': 28,
        'height': 28, 'name': 'folders'})
    wait_for(lambda: status(server, dataset) == 'done', 120, 'the dataset')
    model = post(server, '/models/new', {
        'dataset': dataset, 'network': 'lenet', 'epochs': 2, 'batch_size': 20,
        'ddl_processes': 2, 'ddl_options': '-mode r:2', 'name': 'ddl'})
    wait_for(lambda: status(server, model) in ('done', 'error'), 240, 'the DDL model')
    log = open(os.path.join(jobs, model, 'train.log')).read()
    assert status(server, model) == 'done', log[-2000:]
    assert log.startswith('# mpirun -n 2 ') and ' -ddl -mode r:2' in log.splitlines()[0]
    assert re.search(r'Optimization Done', log)


def test_list_file_lines_outside_the_data_root_are_refused(server, workspace):
    import urllib.error
    data, _ = workspace
    with open(os.path.join(data, 'lists', 'escape.txt'), 'w') as listing:
        listing.write('../images/a/00000.png 0\n../../outside.png 1\n')
    with pytest.raises(urllib.error.HTTPError) as error:
        post(server, '/datasets/new', {'train_list': 'lists/escape.txt', 'name': 'escape'})
    page = error.value.read().decode()
    assert error.value.code == 400 and "Training list: line 2 of" in page and \
        "&#39;../../outside.png&#39; is outside the data root" in page, page[-800:]


def test_model_on_a_dataset_without_validation(server, workspace):
    data, jobs = workspace
    dataset = post(server, '/datasets/new', {
        'train_folder': 'images', 'val_percent': '0', 'image_type': 'gray', 'width': 28,
        'height': 28, 'name': 'no val'})
    wait_for(lambda: status(server, dataset) == 'done', 120, 'the dataset')
    model = post(server, '/models/new', {'dataset': dataset, 'network': 'lenet', 'epochs': 1,
                                         'batch_size': 40, 'name': 'no val'})
    wait_for(lambda: status(server, model) in ('done', 'error'), 120, 'the model')
    assert status(server, model) == 'done'
    train_val = open(os.path.join(jobs, model, 'train_val.prototxt')).read()
    # LeNet's two data layers share the name 'mnist': the TEST one went, the TRAIN one stayed.
    assert train_val.count('type: "Data"') == 1 and 'Accuracy' not in train_val
    assert 'test_iter' not in open(os.path.join(jobs, model, 'solver.prototxt')).read()
