"""Child processes: started as argument lists (never through a shell), in a session of their own
so that they outlive the server, and recognised later by pid and start time (a pid alone may have
been reused by then)."""
import os
import signal
import subprocess
import sys

import psutil


def describe(pid):
    """{'pid', 'start'}: enough to know the process again."""
    return {'pid': pid, 'start': psutil.Process(pid).create_time()}


def process_alive(identity):
    """Whether the process `identity` (from describe) still runs (and is not a zombie)."""
    if not identity:
        return False
    try:
        process = psutil.Process(identity['pid'])
        return abs(process.create_time() - identity['start']) < 0.01 and \
            process.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def signal_process(identity, number=signal.SIGINT):
    """Sends `number` to the process if it is still the one `identity` names; True if sent."""
    if not process_alive(identity):
        return False
    os.kill(identity['pid'], number)
    return True


def usage(identity):
    """CPU percent (since the last call for this pid), resident memory in bytes, and the
    process's threads, or None when it is gone."""
    try:
        process = _processes.get(identity['pid'])
        if process is None or abs(process.create_time() - identity['start']) >= 0.01:
            process = _processes[identity['pid']] = psutil.Process(identity['pid'])
        with process.oneshot():
            return {'pid': identity['pid'], 'cpu_percent': process.cpu_percent(),
                    'rss': process.memory_info().rss, 'threads': process.num_threads()}
    except (psutil.NoSuchProcess, psutil.AccessDenied, TypeError, KeyError):
        return None


_processes = {}  # pid -> psutil.Process, whose cpu_percent measures from the previous call


def start_runner(job_folder, config_args):
    """Starts `python3 -m caffe_web.runner JOB_FOLDER ...` detached from the server: its own
    session (a kill of the server's process group, or the server's death, leaves it running),
    no pipes to the server (whose death would break them), output to the job's runner.log."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environment = dict(os.environ)
    environment['PYTHONPATH'] = os.pathsep.join(
        [package_parent] + [p for p in environment.get('PYTHONPATH', '').split(os.pathsep) if p])
    with open(os.path.join(job_folder, 'runner.log'), 'ab') as log:
        process = subprocess.Popen(
            [sys.executable, '-m', 'caffe_web.runner', job_folder] + config_args,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True, env=environment)
    return process
