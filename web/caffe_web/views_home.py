"""The home page (datasets and models, newest first, with status), the job controls (stop,
resume), a stage's log, and the live updates of any job page (Server-Sent Events)."""
import json
import os
import signal
import time

from flask import Blueprint, Response, abort, current_app, redirect, render_template, request

from . import processes, training_graph
from .jobstore import DONE, ERROR, INTERRUPTED, QUEUED, STOPPED
from .summary import format_seconds, job_summary

blueprint = Blueprint('home', __name__)
EVENT_INTERVAL = 1.0  # seconds between looks at a job's files for the live updates
FINAL = (DONE, ERROR, STOPPED, INTERRUPTED)


def store():
    return current_app.extensions['caffe_store']


def config():
    return current_app.config['CAFFE_WEB']


def get_job(job_id, kind=None):
    job = store().get(job_id, kind)
    if job is None:
        abort(404, "no {} '{}' in {}".format(kind or 'job', job_id, store().folder))
    return job


@blueprint.app_template_filter('duration')
def duration_filter(seconds):
    return format_seconds(seconds)


@blueprint.app_template_filter('when')
def when_filter(stamp):
    return time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(stamp)) if stamp else ''


@blueprint.route('/')
def home():
    jobs = [job_summary(job) for job in store().all()]
    return render_template('home.html', datasets=[j for j in jobs if j['kind'] == 'dataset'],
                           models=[j for j in jobs if j['kind'] == 'model'], config=config())


@blueprint.route('/jobs/<job_id>/stop', methods=['POST'])
def stop(job_id):
    """As Ctrl-C: SIGINT to the job's tool (caffe train snapshots, then exits)."""
    job = get_job(job_id)
    with open(job.path('stop'), 'w') as flag:
        flag.write(str(time.time()))
    state = job.state()
    status = job.status()
    if status == QUEUED or (status == INTERRUPTED and not processes.process_alive(
            state.get('child'))):
        state.update(status=STOPPED)
        job.write_state(state)
    else:
        processes.signal_process(state.get('child'), signal.SIGINT)
    return redirect(request.referrer or '/')


@blueprint.route('/jobs/<job_id>/resume', methods=['POST'])
def resume(job_id):
    """Queues a stopped, interrupted or failed job again; a model resumes from its newest
    .solverstate."""
    job = get_job(job_id)
    if job.status() not in (STOPPED, INTERRUPTED, ERROR):
        abort(409, 'job {} is {}; only a stopped, interrupted or failed job resumes'.format(
            job_id, job.status()))
    if os.path.exists(job.path('stop')):
        os.unlink(job.path('stop'))
    state = job.state()
    state.update(status=QUEUED, queued_at=time.time(), error=None, child=None,
                 resumes=state.get('resumes', 0) + 1)
    job.write_state(state)
    return redirect(request.referrer or '/')


@blueprint.route('/jobs/<job_id>/log/<name>')
def log(job_id, name):
    job = get_job(job_id)
    allowed = {stage['log'] for stage in job.state().get('stages', [])} | {'runner.log'}
    if name not in allowed:
        abort(404, "job {} has no log '{}'".format(job_id, name))
    try:
        with open(job.path(name), 'rb') as source:
            text = source.read()
    except FileNotFoundError:
        text = b''
    return Response(text, mimetype='text/plain')


def _model_update(job, since):
    from .views_models import model_status
    update = model_status(job)
    update['graph'] = training_graph.series(job, since['train'], since['test'],
                                            finished=update['status'] in FINAL)
    since.update(update['graph']['counts'])
    return update


@blueprint.route('/jobs/<job_id>/events')
def events(job_id):
    """Server-Sent Events: a 'state' event at once and whenever the job's files change (the
    log grew, the state changed), at most once per EVENT_INTERVAL. For models each event carries
    the graph rows after those the page has (?train=N&test=M)."""
    job = get_job(job_id)
    since = {'train': request.args.get('train', 0, type=int),
             'test': request.args.get('test', 0, type=int)}

    def stream():
        last_signature = None
        quiet = 0
        while True:
            signature = _signature(job)
            if signature != last_signature:
                last_signature = signature
                if job.kind == 'model':
                    update = _model_update(job, since)
                else:
                    from .views_datasets import dataset_status
                    update = dataset_status(job)
                yield 'event: state\ndata: {}\n\n'.format(json.dumps(update))
                if job.kind == 'model':
                    training_graph.follower(job).save_if_due(update['status'] in FINAL)
                if update['status'] in FINAL:
                    quiet += 1
            elif quiet:
                return  # the job is over and its last state was sent
            else:
                yield ': keep-alive\n\n'
            time.sleep(EVENT_INTERVAL)

    return Response(stream(), mimetype='text/event-stream',
                    headers={'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no'})


def _signature(job):
    """Changes when anything the pages show of the job changes."""
    marks = []
    for name in os.listdir(job.folder):
        if name.endswith('.log') or name == 'state.json' or name.startswith('snapshot_iter_'):
            try:
                stat = os.stat(job.path(name))
                marks.append((name, stat.st_size, stat.st_mtime_ns))
            except FileNotFoundError:
                pass
    return (tuple(sorted(marks)), job.status())
