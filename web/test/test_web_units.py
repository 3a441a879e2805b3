"""The web server's parts on their own: the GPU queue's choices, paths kept under the data root,
the log parser fed as a log grows (the same rows as tools/extra/parse_log.py's whole-file parse),
the resize modes, and what the stage logs say."""
import os
import sys

import numpy as np
import pytest

from conftest import BINARY_DIR, SOURCE_DIR

from caffe_web import forms, gpu_queue, resize, stage_logs
from caffe_web.forms import FormError
from caffe_web.gpu_queue import GpuRequest

sys.path.insert(0, os.path.join(SOURCE_DIR, 'tools', 'extra'))
import parse_log  # noqa: E402


def test_gpu_jobs_wait_for_their_gpus_and_never_pile_onto_gpu_0():
    gpus = [0, 1]
    queued = [('a', GpuRequest(count=1)), ('b', GpuRequest(count=1)),
              ('c', GpuRequest(count=1)), ('cpu', GpuRequest())]
    # Two free GPUs, three one-GPU jobs: a on 0, b on 1, c waits; CPU jobs start at once.
    assert gpu_queue.assign(queued, busy=[], gpus=gpus) == [('a', [0]), ('b', [1]),
                                                            ('cpu', [])]
    # GPU 0 busy: the next job gets GPU 1, not 0.
    assert gpu_queue.assign([('d', GpuRequest(count=1))], busy=[0], gpus=gpus) == [('d', [1])]
    # A job that named GPU 0 waits while 0 is busy; one that fits behind it starts.
    assert gpu_queue.assign([('e', GpuRequest(ids=[0])), ('f', GpuRequest(ids=[1]))],
                            busy=[0], gpus=gpus) == [('f', [1])]
    # Two GPUs at once (-gpu 0,1) only when both are free.
    assert gpu_queue.assign([('g', GpuRequest(ids=[0, 1]))], busy=[1], gpus=gpus) == []
    assert gpu_queue.assign([('g', GpuRequest(count=2))], busy=[], gpus=gpus) == [('g', [0, 1])]
    # A queue on one GPU: one job at a time, in order.
    two = [('first', GpuRequest(ids=[0])), ('second', GpuRequest(ids=[0]))]
    assert gpu_queue.assign(two, busy=[], gpus=[0]) == [('first', [0])]
    assert gpu_queue.assign(two[1:], busy=[0], gpus=[0]) == []
    assert gpu_queue.assign(two[1:], busy=[], gpus=[0]) == [('second', [0])]


def test_gpu_requests_a_machine_cannot_meet_are_refused():
    assert 'this machine has no GPU' in gpu_queue.check_request(GpuRequest(ids=[0]), [])
    assert gpu_queue.check_request(GpuRequest(ids=[2]), [0, 1]) == \
        'GPU 2 is not on this machine; it has GPU 0, GPU 1'
    assert gpu_queue.check_request(GpuRequest(count=3), [0, 1]) == \
        'asked for 3 GPUs; this machine has 2'
    assert gpu_queue.check_request(GpuRequest(), []) is None


def test_paths_stay_under_the_data_root(tmp_path):
    root = tmp_path / 'root'
    (root / 'images').mkdir(parents=True)
    (tmp_path / 'outside').mkdir()
    os.symlink(str(tmp_path / 'outside'), str(root / 'escape'))
    real_root = os.path.realpath(str(root))
    assert forms.path_under_root(real_root, 'images', 'F') == os.path.join(real_root, 'images')
    assert forms.path_under_root(real_root, os.path.join(real_root, 'images'), 'F') == \
        os.path.join(real_root, 'images')
    for raw, message in (('../outside', "contains '..'"), ('images/../..', "contains '..'"),
                         ('escape', 'outside the data root'), (str(tmp_path), 'outside'),
                         ('', 'is empty'), ('nothing', 'is not a folder')):
        with pytest.raises(FormError) as error:
            forms.path_under_root(real_root, raw, 'Field')
        assert error.value.field == 'Field' and message in error.value.message, error.value


def test_numbers_name_the_field():
    assert forms.number({'x': '0.5'}, 'x', 'Rate') == 0.5
    for raw, message in (('abc', "'abc' is not a number"), ('nan', 'not a finite number'),
                         ('-1', 'below the least allowed')):
        with pytest.raises(FormError) as error:
            forms.number({'x': raw}, 'x', 'Rate', minimum=0)
        assert str(error.value).startswith('Rate: ') and message in str(error.value)


def test_log_parser_fed_as_the_log_grows_reads_what_the_whole_file_parse_reads(tmp_path):
    lines = ['I1201 10:00:00.000000  1 solver.cpp:44] Initializing solver\n',
             'I1201 10:00:01.000000  1 solver.cpp:237] Solving LeNet\n']
    for iteration in range(0, 300, 10):
        stamp = 'I1201 10:{:02d}:{:02d}.500000  1 '.format(iteration // 60, iteration % 60)
        lines.append(stamp + 'solver.cpp:194] Iteration {} (5 iter/s, 2s/10 iters), '
                     'loss = {}\n'.format(iteration, 1.0 / (iteration + 1)))
        lines.append(stamp + 'solver.cpp:212]     Train net output #0: loss = {} (* 1 = {} '
                     'loss)\n'.format(1.0 / (iteration + 1), 1.0 / (iteration + 1)))
        lines.append(stamp + 'sgd_solver.cpp:86] Iteration {}, lr = {}\n'.format(
            iteration, 0.01 * 0.5 ** (iteration // 100)))
        if iteration % 50 == 0:
            lines.append(stamp + 'solver.cpp:326]     Test net output #0: accuracy = 0.5\n')
    text = ''.join(lines)
    log = tmp_path / 'train.log'
    log.write_text(text)
    whole = parse_log.parse_log(str(log))
    parser = parse_log.LogParser(2026)
    taken = {'Train': [], 'Test': []}
    for begin in range(0, len(lines), 7):  # seven lines at a time, rows taken as they come
        for line in lines[begin:begin + 7]:
            parser.feed(line)
        for phase in taken:
            taken[phase].extend(dict(row) for row in parser.rows(phase, len(taken[phase])))
    assert taken['Train'] == [dict(row) for row in whole[0]]
    assert [row['NumIters'] for row in taken['Test']] == list(range(0, 300, 50))
    assert taken['Train'][-1]['LearningRate'] == 0.01 * 0.25
    assert taken['Train'][1]['Seconds'] == 9.5  # since "Solving" at 10:00:01


@pytest.mark.parametrize('mode, kept', [('squash', None), ('crop', 'middle'),
                                        ('fill', 'all'), ('half_crop', None)])
def test_resize_modes_give_the_size_asked(mode, kept):
    from PIL import Image
    pixels = np.zeros((20, 40, 3), np.uint8)
    pixels[:, 10:30] = 255  # a white middle on a wide image
    image = Image.fromarray(pixels)
    result = np.asarray(resize.resize_image(image, 16, 16, mode, color=True))
    assert result.shape == (16, 16, 3)
    if kept == 'middle':  # cropped to the white middle
        assert result.min() > 200  # (bilinear blends the edges a little)
    if kept == 'all':  # scaled to 16 x 8, noise above and below
        assert result[4:12, 5:11].min() > 200 and result[4:12, 0].max() < 30
    gray = resize.resize_image(image, 8, 12, mode, color=False)
    assert gray.mode == 'L' and gray.size == (8, 12)


def test_stage_logs_give_progress_skips_counts_and_the_error(tmp_path):
    log = tmp_path / 'create_db_train.log'
    log.write_text(
        "# convert_imageset ...\n"
        "W1201 10:00:00.1  5 convert_imageset.cpp:135] skipping line 4 of '/j/train.txt': "
        "cannot decode '/d/a/b.png'\n"
        "I1201 10:00:00.2  5 convert_imageset.cpp:160] Processed 20 files (21 of 50 lines, "
        "42%, 100 images/s).\n")
    assert stage_logs.progress(str(log)) == 21 / 50.0
    assert stage_logs.skipped_images(str(log)) == [(4, "cannot decode '/d/a/b.png'")]
    assert stage_logs.progress(str(tmp_path / 'missing.log')) is None
    mean = tmp_path / 'mean.log'
    mean.write_text('I1201 10:00:00.2  5 compute_image_mean.cpp:76] Processed 30 files.\n')
    assert stage_logs.progress(str(mean), total=40) == 0.75
    assert stage_logs.label_counts(['database: x', 'labels (2 distinct):', '  0: 12',
                                    '  1: 30']) == {0: 12, 1: 30}
    log.write_text(log.read_text() + 'convert_imageset: no image of \'x\' could be read\n')
    assert stage_logs.error_line(str(log)) == "convert_imageset: no image of 'x' could be read"


def test_graph_cache_lets_a_new_server_go_on_where_the_last_one_stopped(tmp_path, monkeypatch):
    from caffe_web import training_graph
    monkeypatch.setattr(training_graph, 'CACHE_AFTER_BYTES', 1)
    lines = ['I1201 10:00:00.000000  1 solver.cpp:237] Solving LeNet\n']
    for iteration in range(0, 2000, 10):
        stamp = 'I1201 10:{:02d}:{:02d}.250000  1 '.format(iteration // 600, iteration // 10 % 60)
        lines.append(stamp + 'solver.cpp:194] Iteration {} (9 iter/s), loss = 1\n'.format(
            iteration))
        lines.append(stamp + 'solver.cpp:212]     Train net output #0: loss = {}\n'.format(
            iteration % 7))
        lines.append(stamp + 'sgd_solver.cpp:86] Iteration {}, lr = {}\n'.format(
            iteration, 0.1 if iteration < 1000 else 0.01))
        if iteration % 500 == 0:
            lines.append(stamp + 'solver.cpp:326]     Test net output #0: accuracy = 0.5\n')
    log = tmp_path / 'train.log'
    log.write_text(''.join(lines[:300]) + lines[300][:20])  # ends mid-line, as a live log may
    first = training_graph.LogFollower(str(log), 100)
    first.update()
    first.save_if_due()
    assert (tmp_path / training_graph.CACHE_NAME).is_file()
    log.write_text(''.join(lines))  # the log grows while no server looks
    resumed = training_graph.LogFollower(str(log), 100)
    resumed.update(finished=True)
    assert resumed.resumed_from == first.offset > 0  # from the cache, not from byte 0
    fresh_log = tmp_path / 'fresh' / 'train.log'
    fresh_log.parent.mkdir()
    fresh_log.write_text(''.join(lines))
    monkeypatch.setattr(training_graph, 'CACHE_AFTER_BYTES', 1 << 40)
    fresh = training_graph.LogFollower(str(fresh_log), 100)
    fresh.update(finished=True)
    assert resumed.points() == fresh.points()
    assert resumed.points(150, 2) == fresh.points(150, 2)
    points = fresh.points()
    assert len(points['train']['loss']) == 200 and points['lr'][-1] == [19.9, 0.01]
    assert [p[0] for p in points['val']['accuracy']] == [0.0, 5.0, 10.0, 15.0]


def test_long_series_are_thinned_keeping_their_extremes():
    from caffe_web import training_graph
    values = [1.0] * 10000
    values[4321] = 50.0   # a spike
    values[777] = -3.0    # a dip
    pairs = training_graph._pairs(list(range(10000)), values, thin=True)
    assert len(pairs) <= training_graph.MAX_POINTS + 10
    assert [4321, 50.0] in pairs and [777, -3.0] in pairs and pairs[-1] == [9999, 1.0]
    assert len(training_graph._pairs(list(range(50)), [float('nan')] * 10 + [1.0] * 40,
                                     thin=True)) == 40


def test_training_command_line_carries_gpus_lms_ddl_and_the_newest_solverstate(tmp_path):
    from caffe_web import models
    from caffe_web.config import Config
    from caffe_web.jobstore import JobStore
    store = JobStore(str(tmp_path / 'jobs'))
    job = store.create('model', 'm', {'lms': True, 'lms_kb': 1024, 'lms_frac': 0.5,
                                      'ddl_processes': 0})
    config = Config(str(tmp_path / 'jobs'), str(tmp_path), str(tmp_path / 'build'), gpus=[0, 1])
    argv = models.plan(job, config, {'gpus': [1]})[0].argv
    assert argv == [config.tool('caffe'), 'train', '-solver', job.path('solver.prototxt'),
                    '-gpu', '1', '-lms', '1024', '-lms_frac', '0.5']
    for iteration in (50, 200, 100):
        open(job.path('snapshot_iter_{}.solverstate'.format(iteration)), 'w').close()
    argv = models.plan(job, config, {'gpus': []})[0].argv
    assert argv[4:6] == ['-snapshot', job.path('snapshot_iter_200.solverstate')]
    ddl = store.create('model', 'd', {'ddl_processes': 3, 'ddl_options': '-mode r:3'})
    argv = models.plan(ddl, config, {})[0].argv
    assert argv[:4] == ['mpirun', '-n', '3', '--oversubscribe'] and \
        argv[-2:] == ['-ddl', '-mode r:3']


def _rank_trace(path, rank, step_ms):
    """A timeline file as `caffe train -timeline` writes it for learner `rank`: two steps of
    `step_ms`, each a forward slice and an allreduce on the communication thread."""
    import json
    events = [{'ph': 'M', 'name': 'thread_name', 'pid': rank, 'tid': 0,
               'args': {'name': 'solver'}}]
    for i in range(2):
        start = i * step_ms * 1000.0
        events += [{'ph': 'X', 'cat': 'step', 'name': 'iteration {}'.format(i), 'pid': rank,
                    'tid': 0, 'ts': start, 'dur': step_ms * 1000.0, 'args': {'iteration': i}},
                   {'ph': 'X', 'cat': 'forward', 'name': 'conv1', 'pid': rank, 'tid': 0,
                    'ts': start, 'dur': step_ms * 500.0, 'args': {}},
                   {'ph': 'X', 'cat': 'communication', 'name': 'allreduce', 'pid': rank,
                    'tid': 1, 'ts': start + step_ms * 500.0, 'dur': 100.0,
                    'args': {'bytes': 4096}}]
    with open(path, 'w') as out:
        json.dump({'otherData': {'rank': rank, 'epoch_unix_us': 1000 * rank},
                   'traceEvents': events}, out)


def test_a_models_timeline_is_asked_summarized_merged_and_drawn(tmp_path):
    import json
    from caffe_web import models, views_timeline
    from caffe_web.app import create_app
    from caffe_web.config import Config
    from caffe_web.jobstore import JobStore
    for bad in ('5-9', '9:5', 'x'):
        with pytest.raises(FormError) as error:
            models.iteration_window(bad)
        assert str(error.value).startswith("Timeline: '{}': expected FIRST:END".format(bad))
    assert models.iteration_window(' 2:6 ') == '2:6' and models.iteration_window('') == ''
    config = Config(str(tmp_path / 'jobs'), str(tmp_path), str(tmp_path / 'build'), gpus=[])
    store = JobStore(config.jobs_dir)
    job = store.create('model', 'm', {'timeline_iters': '2:6', 'ddl_processes': 2,
                                      'ddl_options': '-mode r:2'})
    argv = models.plan(job, config, {})[0].argv
    assert argv[-6:-2] == ['-timeline', job.path('timeline.json'), '-timeline_iters', '2:6']
    assert views_timeline.table(job) is None
    _rank_trace(job.path('timeline.rank0.json'), 0, 10.0)
    _rank_trace(job.path('timeline.rank1.json'), 1, 12.0)
    assert 'slowest rank: 1 (12.00 ms per step' in views_timeline.table(job)
    client = create_app(config, start_scheduler=False).test_client()
    trace = client.get('/models/{}/timeline.json'.format(job.id))
    assert trace.status_code == 200
    assert {e['pid'] for e in json.loads(trace.data)['traceEvents']} == {0, 1}
    drawing = client.get('/models/{}/timeline.png'.format(job.id))
    assert drawing.status_code == 200 and drawing.data[:8] == b'\x89PNG\r\n\x1a\n'
    other = store.create('model', 'n', {})
    assert client.get('/models/{}/timeline.png'.format(other.id)).status_code == 404


@pytest.mark.parametrize('args, message', [
    (['--data', '/nonexistent'], '--data /nonexistent: no such folder'),
    (['--gpus', 'x'], "--gpus 'x': expected GPU ids such as 0,1, or none"),
    (['--build', '/'], '--build /: no bin/caffe in it; build Caffe first'),
])
def test_web_sh_flags_name_what_is_wrong(tmp_path, capsys, args, message):
    from caffe_web.__main__ import main
    with pytest.raises(SystemExit) as exit_code:
        main(['--jobs', str(tmp_path / 'jobs'), '--data', str(tmp_path), '--build', BINARY_DIR]
             + args)
    assert exit_code.value.code == 2
    assert message in capsys.readouterr().err
