"""Jobs on disk: one folder per job under the jobs folder, so that the server keeps no state of
its own and a restart (even after kill -9) finds every job as it was.

    <jobs>/<id>/job.json     what the job is: kind (dataset | model), name, created, params;
                             written once when the job is made (and on resume, its count)
    <jobs>/<id>/state.json   where it is: status, stages, the child process; written by the
                             job's runner (runner.py), and by the server only while no runner
                             holds the job (queued, stop of a dead job)
    <jobs>/<id>/runner.lock  flock'ed by the live runner: the one test of "still running" that
                             survives pid reuse and the server's death
    <jobs>/<id>/stop         the user asked to stop it

Every JSON file is written to a temporary file and renamed, so a reader never sees half of one.
"""
import fcntl
import json
import os
import re
import tempfile
import time

LAUNCH_GRACE_SECONDS = 30
JOB_ID = re.compile(r'^[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$')

# What the home page and the job pages show.
QUEUED, RUNNING, DONE, STOPPED, ERROR, INTERRUPTED = (
    'queued', 'running', 'done', 'stopped', 'error', 'interrupted')


def write_json(path, value, compact=False):
    """Writes `value` as JSON to a temporary file beside `path`, then renames it over `path`
    (compact: without the indentation that makes job.json and state.json readable)."""
    folder = os.path.dirname(path)
    handle, temporary = tempfile.mkstemp(prefix='.' + os.path.basename(path) + '.', dir=folder)
    try:
        with os.fdopen(handle, 'w') as output:
            if compact:
                json.dump(value, output, separators=(',', ':'))
            else:
                json.dump(value, output, indent=1, sort_keys=True)
            output.flush()
            os.fsync(output.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def read_json(path, default=None):
    try:
        with open(path) as source:
            return json.load(source)
    except FileNotFoundError:
        return default


def new_job_id():
    """Sortable by creation time (newest first is a reverse sort), unique within the second."""
    return time.strftime('%Y%m%d-%H%M%S') + '-' + os.urandom(2).hex()


class Job(object):
    """One job folder."""

    def __init__(self, folder):
        self.folder = folder
        self.id = os.path.basename(folder)

    def path(self, *names):
        return os.path.join(self.folder, *names)

    @property
    def info(self):
        return read_json(self.path('job.json'), {})

    @property
    def kind(self):
        return self.info.get('kind')

    @property
    def params(self):
        return self.info.get('params', {})

    def state(self):
        return read_json(self.path('state.json'), {'status': QUEUED, 'stages': []})

    def write_state(self, state):
        write_json(self.path('state.json'), state)

    def runner_alive(self):
        """Whether a runner holds this job's lock (it is the runner's whole life)."""
        try:
            handle = os.open(self.path('runner.lock'), os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(handle)  # also releases a lock taken here
        return False

    def status(self):
        """queued, running, done, stopped, error, or interrupted (its runner died: the server
        or the machine went down under it)."""
        state = self.state()
        status = state.get('status', QUEUED)
        if status == RUNNING and not self.runner_alive():
            from .processes import process_alive  # here, to keep this module free of psutil
            # The scheduler marks a job running as it starts the runner, which takes the lock
            # a moment later.
            starting = state.get('runner') is None and \
                time.time() - state.get('launched', 0) < LAUNCH_GRACE_SECONDS
            if not starting and not process_alive(state.get('child')):
                return INTERRUPTED
        return status

    def stop_requested(self):
        return os.path.exists(self.path('stop'))


class JobStore(object):
    """The jobs folder."""

    def __init__(self, folder):
        self.folder = os.path.abspath(folder)
        os.makedirs(self.folder, exist_ok=True)

    def create(self, kind, name, params, staging=None):
        """A new job folder with its job.json and a queued state: `staging` (a folder in the
        jobs folder, already holding the job's files) renamed, or a new one."""
        while True:
            job_id = new_job_id()
            folder = os.path.join(self.folder, job_id)
            if staging is None:
                try:
                    os.mkdir(folder)
                    break
                except FileExistsError:
                    continue
            elif not os.path.exists(folder):
                os.rename(staging, folder)
                break
        job = Job(folder)
        write_json(job.path('job.json'), {'kind': kind, 'name': name, 'params': params,
                                          'created': time.time(), 'id': job_id})
        job.write_state({'status': QUEUED, 'stages': [], 'queued_at': time.time()})
        return job

    def get(self, job_id, kind=None):
        """The job, or None for an id that is not a job (of that kind)."""
        if not JOB_ID.match(job_id or ''):
            return None
        folder = os.path.join(self.folder, job_id)
        if not os.path.isfile(os.path.join(folder, 'job.json')):
            return None
        job = Job(folder)
        if kind is not None and job.kind != kind:
            return None
        return job

    def all(self, kind=None):
        """Every job (of that kind), newest first."""
        jobs = []
        for name in sorted(os.listdir(self.folder), reverse=True):
            job = self.get(name, kind)
            if job is not None:
                jobs.append(job)
        return jobs
