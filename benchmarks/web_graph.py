#!/usr/bin/env python3
"""The web server's model page with a long training log, and what its live updates cost the
training process (docs/PERFORMANCE.md, "Web server").

    /usr/bin/python3 benchmarks/web_graph.py [--build build] [--iterations 100000] [--repeats 5]

1. Page load: a real `caffe train` of a tiny net (DummyData, one InnerProduct) logs every one of
   --iterations iterations (display: 1: three lines each); a model job holds that log. Headless
   chromium opens the model page --repeats times; each time counts from the navigation's start to
   the graph drawn with every row (the page's first live update applied): after a server start
   (the job's graph_cache.json, which its runner keeps when training ends), again (the
   server's parser as it stands), and for a log no server read before (it parses all of it).
   The home page's load time is the browser's own share.
2. Training cost: LeNet on 1,000 of the bundled digits (batch 50, 300 iterations), alternately
   as a job of the server with its page open in chromium following it live (the server reads
   the log once a second) and by hand with nobody reading its log: the CPU seconds of the
   caffe train process (wait4's rusage; steady on a machine others load, where wall time is
   not), its iterations per second (from its own log), and the server's CPU seconds.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SOURCE_DIR, 'web'))
sys.path.insert(0, os.path.join(SOURCE_DIR, 'tools', 'extra'))
from caffe_web.jobstore import JobStore, DONE  # noqa: E402
from caffe_web.local_server import LocalServer, headless_chromium  # noqa: E402
import parse_log  # noqa: E402

TINY_NET = """name: "tiny"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 4 dim: 8 } shape { dim: 4 }
    data_filler { type: "gaussian" } data_filler { type: "constant" } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
"""


def page_load(build, iterations, repeats, work):
    jobs, data = os.path.join(work, 'jobs'), os.path.join(work, 'data')
    os.makedirs(data)
    store = JobStore(jobs)
    per_epoch = 1000
    job = store.create('model', 'long log', {
        'name': 'long log', 'dataset': 'none', 'network': 'custom', 'solver_type': 'SGD',
        'epochs': iterations // per_epoch, 'iters_per_epoch': per_epoch, 'base_lr': 0.01,
        'lr_policy': 'step', 'gpus': [], 'gpu_count': 0})
    with open(job.path('net.prototxt'), 'w') as net:
        net.write(TINY_NET)
    with open(job.path('solver.prototxt'), 'w') as solver:
        solver.write('net: "{}"\nbase_lr: 0.01\nlr_policy: "step"\nstepsize: {}\ngamma: 0.5\n'
                     'display: 1\nmax_iter: {}\nsnapshot_after_train: false\n'
                     'solver_mode: CPU\n'.format(job.path('net.prototxt'), iterations // 4,
                                                 iterations))
    started = time.time()
    with open(job.path('train.log'), 'wb') as log:
        subprocess.run([os.path.join(build, 'bin', 'caffe'), 'train', '-solver',
                        job.path('solver.prototxt')], stdout=log, stderr=subprocess.STDOUT,
                       check=True)
    log_size = os.path.getsize(job.path('train.log'))
    print('log: {} iterations logged, {:.1f} MB, written in {:.1f} s'.format(
        iterations, log_size / 1e6, time.time() - started))
    job.write_state({'status': DONE, 'stages': [{'name': 'Train', 'log': 'train.log',
                                                  'status': DONE}]})
    started = time.time()
    rows = len(parse_log.parse_log(job.path('train.log'))[0])
    print('parse_log.parse_log of the whole log: {} rows in {:.3f} s'.format(
        rows, time.time() - started))
    from caffe_web.training_graph import CACHE_NAME, keep_parse
    started = time.time()
    keep_parse(job)  # as the job's runner does when training ends
    print('graph_cache.json kept in {:.2f} s ({:.1f} MB)'.format(
        time.time() - started, os.path.getsize(job.path(CACHE_NAME)) / 1e6))
    driver, profile = headless_chromium()
    try:
        # A model the server ran, after a server start (from graph_cache.json), then again
        # (the server's parser as it stands); and a log no server ever read (copied in by
        # hand: the server parses all of it).
        restarted, points = load_times(build, jobs, data, driver, job.id, repeats)
        os.unlink(job.path(CACHE_NAME))
        never, _ = load_times(build, jobs, data, driver, job.id, 1)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    later = sorted(restarted[1:]) or restarted
    print('model page, navigation to graph drawn ({} points): after a server start {:.3f} s; '
          'then {} s (median {:.3f}); a log never read before {:.3f} s'.format(
              points, restarted[0], ' '.join('{:.3f}'.format(t) for t in restarted[1:]),
              later[len(later) // 2], never[0]))


def home_page_seconds(server, driver):
    """Navigation to the load event of the home page: what the browser itself takes here."""
    driver.get(server.url + '/')
    return driver.execute_script(
        'const t = performance.getEntriesByType("navigation")[0]; return t.loadEventEnd;') / 1000.0


def load_times(build, jobs, data, driver, job_id, repeats):
    """Seconds from navigation to the graph drawn, for `repeats` loads on a new server."""
    server = LocalServer(jobs, data, build).start()
    times = []
    try:
        home = sorted(home_page_seconds(server, driver) for _ in range(3))[1]
        print('home page (no graph), navigation to load: {:.3f} s'.format(home))
        for _ in range(repeats):
            driver.get(server.url + '/models/' + job_id)
            deadline = time.time() + 120
            while time.time() < deadline and not driver.execute_script(
                    'return window.caffeWeb && window.caffeWeb.firstGraphAt;'):
                time.sleep(0.01)
            times.append(driver.execute_script('return window.caffeWeb.firstGraphAt;') / 1000.0)
            points = int(driver.execute_script('return document.body.dataset.graphPoints;'))
            driver.get('about:blank')
            time.sleep(1.5)  # the page's stream ends; the server keeps the parse (once)
    finally:
        server.kill()
    return times, points


def iterations_per_second(log_path):
    train, _ = parse_log.parse_log(log_path)
    first, last = train[1], train[-1]  # from the second display: the first holds the set-up
    return (last['NumIters'] - first['NumIters']) / (last['Seconds'] - first['Seconds'])


def cpu_seconds(process):
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


def post(url, fields):
    request = urllib.request.Request(url, urllib.parse.urlencode(fields).encode())
    with urllib.request.urlopen(request, timeout=300) as response:
        return response.geturl().rstrip('/').split('/')[-1]


def training_cost(build, repeats, work):
    sys.path.insert(0, os.path.join(SOURCE_DIR, 'web', 'test'))
    from conftest import read_idx, write_class_folders
    jobs, data = os.path.join(work, 'jobs2'), os.path.join(work, 'data2')
    os.makedirs(data)
    images, labels = read_idx('train')
    write_class_folders(os.path.join(data, 'digits'), images[:1000], labels[:1000])
    server = LocalServer(jobs, data, build).start()
    store = JobStore(jobs)
    dataset = post(server.url + '/datasets/new', {
        'train_folder': 'digits', 'val_percent': '0', 'image_type': 'gray', 'width': 28,
        'height': 28, 'name': 'digits'})
    while store.get(dataset).status() != DONE:
        time.sleep(0.5)
    model_form = {'dataset': dataset, 'network': 'lenet', 'batch_size': 50, 'epochs': 15,
                  'random_seed': 1, 'snapshot_epochs': 15, 'name': 'watched'}
    import psutil
    server_process = psutil.Process(server.process.pid)
    driver, profile = headless_chromium()
    runs = {'alone': [], 'watched': []}
    server_cpu = []
    try:
        for _ in range(repeats):
            # Watched: a job of the server, its page open in chromium, following it live.
            job = store.get(post(server.url + '/models/new', model_form))
            before = cpu_seconds(server_process)
            driver.get(server.url + '/models/' + job.id)
            while job.status() != DONE:
                time.sleep(0.5)
            server_cpu.append(cpu_seconds(server_process) - before)
            stage = job.state()['stages'][0]
            runs['watched'].append((stage['cpu_seconds'],
                                    iterations_per_second(job.path('train.log'))))
            driver.get('about:blank')
            # Alone: the same solver and net (their paths are relative to the job folder) in a
            # folder of their own, run by hand; nobody reads its log.
            alone_folder = os.path.join(work, 'alone')
            shutil.rmtree(alone_folder, ignore_errors=True)
            os.makedirs(alone_folder)
            for name in ('solver.prototxt', 'train_val.prototxt'):
                shutil.copy(job.path(name), alone_folder)
            log = os.path.join(alone_folder, 'alone.log')
            with open(log, 'wb') as output:
                child = subprocess.Popen([os.path.join(build, 'bin', 'caffe'), 'train',
                                          '-solver', 'solver.prototxt'], stdout=output,
                                         stderr=subprocess.STDOUT, cwd=alone_folder)
                _, _, usage = os.wait4(child.pid, 0)
            runs['alone'].append((usage.ru_utime + usage.ru_stime, iterations_per_second(log)))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        server.kill()
    for name, values in runs.items():
        print('LeNet, 300 iterations, {:8}: CPU seconds of caffe train {}; iterations/s {}'
              .format(name, ' '.join('{:.2f}'.format(cpu) for cpu, _ in values),
                      ' '.join('{:.1f}'.format(pace) for _, pace in values)))
    print('the server (page following the job live, its scheduler) meanwhile: {} CPU seconds'
          .format(' '.join('{:.2f}'.format(cpu) for cpu in server_cpu)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--build', default=os.path.join(SOURCE_DIR, 'build'))
    parser.add_argument('--iterations', type=int, default=100000)
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--skip-training', action='store_true')
    parser.add_argument('--skip-page', action='store_true')
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix='caffe-web-bench-')
    try:
        if not args.skip_page:
            page_load(os.path.abspath(args.build), args.iterations, args.repeats, work)
        if not args.skip_training:
            training_cost(os.path.abspath(args.build), 3, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
