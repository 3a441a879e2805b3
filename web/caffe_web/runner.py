"""A job's runner: `python3 -m caffe_web.runner JOB_FOLDER --jobs ... --build ...`, started by
the server in a session of its own. It holds the job's runner.lock for its whole life (how the
server tells a live job from an interrupted one), runs the job's stages one after the other, each
an argument list (a tool of the build: convert_imageset, compute_image_mean, caffe train) with
its output appended to the stage's log in the job folder, and records each stage's start, end
and exit status in state.json. The server reads those files; nothing flows through pipes, so
the server may die and come back while a job runs."""
import argparse
import fcntl
import os
import subprocess
import sys
import time

from .config import Config, parse_gpu_list
from .jobstore import DONE, ERROR, RUNNING, STOPPED, Job
from .processes import describe
from .stage_logs import error_line
from . import plans


def run_job(job, config):
    state = job.state()
    state.update(status=RUNNING, runner=describe(os.getpid()), started=time.time(),
                 error=None, ended=None, child=None)
    stages = plans.plan(job, config, state)
    state['stages'] = [{'name': stage.name, 'log': stage.log, 'status': 'waiting'}
                       for stage in stages]
    job.write_state(state)
    status = DONE
    for index, stage in enumerate(stages):
        record = state['stages'][index]
        record.update(status=RUNNING, started=time.time())
        job.write_state(state)
        log_path = job.path(stage.log)
        if stage.argv is not None:
            with open(log_path, 'ab') as log:
                log.write(('# ' + ' '.join(stage.argv) + '\n').encode())
                log.flush()
                child = subprocess.Popen(stage.argv, cwd=job.folder, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, close_fds=True)
            state['child'] = describe(child.pid)
            job.write_state(state)
            # wait4 for the tool's CPU time too (benchmarks/web_graph.py compares it).
            _, wait_status, usage = os.wait4(child.pid, 0)
            child.returncode = code = os.waitstatus_to_exitcode(wait_status)
            record['cpu_seconds'] = round(usage.ru_utime + usage.ru_stime, 3)
            state['child'] = None
        else:
            code = stage.run(log_path, job.stop_requested)
        record.update(ended=time.time(), exit_code=code)
        if job.stop_requested():
            record['status'] = STOPPED
            status = STOPPED
            break
        if code != 0:
            record['status'] = ERROR
            state['error'] = '{}: {}'.format(stage.name, error_line(log_path))
            status = ERROR
            break
        record['status'] = DONE
        if stage.after is not None:
            stage.after(state)
        job.write_state(state)
    try:
        plans.finish(job)
    except (OSError, ValueError) as error:  # a cache of the graph is a convenience
        print('runner: the graph\'s parse was not kept: {}'.format(error), flush=True)
    state.update(status=status, ended=time.time())
    job.write_state(state)


def main(argv=None):
    parser = argparse.ArgumentParser(description='Runs one job of the Caffe web server.')
    parser.add_argument('job_folder')
    parser.add_argument('--jobs', required=True)
    parser.add_argument('--data', required=True)
    parser.add_argument('--build', required=True)
    parser.add_argument('--gpus', default='none')
    args = parser.parse_args(argv)
    config = Config(args.jobs, args.data, args.build, parse_gpu_list(args.gpus))
    job = Job(os.path.abspath(args.job_folder))
    with open(job.path('runner.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # waits out a server that is checking it
        try:
            run_job(job, config)
        except Exception as error:  # recorded for the page, then re-raised for runner.log
            state = job.state()
            state.update(status=ERROR, error='runner: {}: {}'.format(type(error).__name__, error),
                         ended=time.time())
            job.write_state(state)
            raise
    return 0


if __name__ == '__main__':
    sys.exit(main())
