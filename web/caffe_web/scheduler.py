"""Starts queued jobs: a thread of the server that, once a second, gives each queued job its
GPUs (gpu_queue.assign) and starts its runner. GPUs held by running jobs are read from their
state.json, so a restarted server knows them. Every few seconds it also reads what running
models' logs gained (training_graph.keep_parse)."""
import threading
import time

from . import processes
from .gpu_queue import GpuRequest, assign
from .jobstore import QUEUED, RUNNING


FOLLOW_EVERY = 5  # ticks between reads of running models' logs (with no page open)


class Scheduler(object):
    def __init__(self, store, config, interval=1.0):
        self.store, self.config, self.interval = store, config, interval
        self.children = []  # runners this server started: polled so that none stays a zombie
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._loop, name='scheduler', daemon=True)

    def start(self):
        self.thread.start()

    def _loop(self):
        ticks = 0
        while True:
            ticks += 1
            try:
                self.tick()
                if ticks % FOLLOW_EVERY == 0:
                    self.follow_running_models()
            except Exception:  # a broken job folder must not stop the queue
                import traceback
                traceback.print_exc()
            time.sleep(self.interval)

    def tick(self):
        with self.lock:
            self.children = [child for child in self.children if child.poll() is None]
            queued, busy = [], []
            for job in reversed(self.store.all()):  # oldest first
                state = job.state()
                if state.get('status') == QUEUED:
                    queued.append((job, GpuRequest.from_params(job.params)))
                elif job.status() == RUNNING:
                    busy.extend(state.get('gpus') or [])
            by_id = {job.id: job for job, _ in queued}
            for job_id, gpus in assign([(job.id, request) for job, request in queued], busy,
                                       self.config.gpus):
                job = by_id[job_id]
                state = job.state()
                state.update(status=RUNNING, gpus=gpus, launched=time.time(), runner=None)
                job.write_state(state)
                self.children.append(processes.start_runner(job.folder, self.config.as_args()))

    def follow_running_models(self):
        """Reads what running models' logs gained, keeping the parse beside each long log, so
        that a model's page opens without reading its whole log."""
        from .training_graph import keep_parse
        for job in self.store.all('model'):
            if job.status() == RUNNING:
                keep_parse(job, finished=False)
