"""Must-show 2, the restart drill: kill -9 the server while a model trains; a new server lists
the job as running (its runner and `caffe train` live on in their own session) and its graph
goes on; with the training process killed too, the job is interrupted and resumes from its last
snapshot to the end; the finished job before it is never lost."""
import json
import os
import re
import signal
import time
import urllib.parse
import urllib.request

import pytest

from conftest import Server, wait_for, write_class_folders


def post(server, path, fields):
    request = urllib.request.Request(server.url + path,
                                     urllib.parse.urlencode(fields).encode())
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.geturl()


def status_on_home_page(server, job_id):
    found = re.search(r'data-id="{}" data-status="(\w+)"'.format(job_id), server.get('/'))
    return found.group(1) if found else None


def graph_rows(server, job_id):
    """The train rows the live updates report (the first event of the stream)."""
    with urllib.request.urlopen(server.url + '/jobs/{}/events'.format(job_id),
                                timeout=60) as stream:
        for line in stream:
            if line.startswith(b'data: '):
                return json.loads(line[6:])['graph']['counts']['train']


def state(jobs, job_id):
    with open(os.path.join(jobs, job_id, 'state.json')) as source:
        return json.load(source)


@pytest.fixture(scope='module')
def dataset(tools_built, digits, workspace):
    data, jobs = workspace
    (images, labels), _ = digits
    write_class_folders(os.path.join(data, 'digits'), images[:600], labels[:600])
    server = Server(jobs, data).start()
    url = post(server, '/datasets/new', {'train_folder': 'digits', 'val_percent': '10',
                                         'image_type': 'gray', 'width': 28, 'height': 28,
                                         'name': 'digits'})
    job_id = url.rstrip('/').split('/')[-1]
    wait_for(lambda: status_on_home_page(server, job_id) == 'done', 120, 'the dataset')
    return server, job_id


def test_server_killed_while_training(dataset, workspace):
    server, dataset_id = dataset
    data, jobs = workspace
    model = {'dataset': dataset_id, 'network': 'lenet', 'batch_size': 30, 'random_seed': 7,
             'snapshot_epochs': 1, 'val_epochs': 5}
    finished = post(server, '/models/new', dict(model, epochs=1, name='finished'))
    finished_id = finished.rstrip('/').split('/')[-1]
    wait_for(lambda: status_on_home_page(server, finished_id) == 'done', 120, 'a finished job')
    running = post(server, '/models/new', dict(model, epochs=60, name='running'))
    running_id = running.rstrip('/').split('/')[-1]
    wait_for(lambda: (graph_rows(server, running_id) or 0) >= 3, 120, 'training to log rows')

    server.kill(signal.SIGKILL)
    second = third = Server(jobs, data).start()
    try:
        assert status_on_home_page(second, finished_id) == 'done'
        assert status_on_home_page(second, running_id) == 'running'
        rows = graph_rows(second, running_id)
        wait_for(lambda: graph_rows(second, running_id) > rows, 60, 'the graph to go on')

        # Now the training process dies too (as with the machine): interrupted, resumable.
        wait_for(lambda: any(name.endswith('.solverstate')
                             for name in os.listdir(os.path.join(jobs, running_id))),
                 60, 'a snapshot')
        second.kill(signal.SIGKILL)
        running_state = state(jobs, running_id)
        for key in ('runner', 'child'):
            os.kill(running_state[key]['pid'], signal.SIGKILL)
        time.sleep(0.5)
        third = Server(jobs, data).start()
        assert status_on_home_page(third, running_id) == 'interrupted'
        assert status_on_home_page(third, finished_id) == 'done'
        post(third, '/jobs/{}/resume'.format(running_id), {})
        wait_for(lambda: status_on_home_page(third, running_id) == 'done', 300,
                 'the resumed job to finish')
        log = open(os.path.join(jobs, running_id, 'train.log')).read()
        assert len(re.findall(r'Resuming from ', log)) == 1, 'one resume'
        per_epoch = json.load(open(os.path.join(jobs, running_id, 'job.json')))[
            'params']['iters_per_epoch']
        assert os.path.isfile(os.path.join(jobs, running_id, 'snapshot_iter_{}.caffemodel'
                                           .format(60 * per_epoch)))
    finally:
        second.kill()
        third.kill()
