"""A model's timeline (docs/TIMELINE.md), when its form asked for one: the table of
tools/extra/summarize_timeline.py on the model page, the trace for Perfetto or chrome://tracing
(the ranks' files merged into one), and two iterations drawn."""
import glob
import io
import os
import sys

from flask import Blueprint, Response, abort, send_file

from .config import SOURCE_DIR
from .views_home import get_job

sys.path.insert(0, os.path.join(SOURCE_DIR, 'tools', 'extra'))
import summarize_timeline  # noqa: E402

blueprint = Blueprint('timeline', __name__)


def trace_path(job):
    """The name the job's files go by (timeline.json, or its ranks' timeline.rankN.json), or
    None when it has none yet."""
    path = job.path('timeline.json')
    if os.path.isfile(path) or glob.glob(job.path('timeline.rank*.json')):
        return path
    return None


def table(job):
    """The summary's text, an error line when the files are not a timeline, or None."""
    path = trace_path(job)
    if path is None:
        return None
    out = io.StringIO()
    try:
        summarize_timeline.summarize(path, out)
    except summarize_timeline.TimelineError as error:
        return 'Timeline: {}'.format(error)
    return out.getvalue()


def _fresh(derived, path):
    """Whether `derived` was made after every file of the timeline at `path`."""
    if not os.path.isfile(derived):
        return False
    made = os.path.getmtime(derived)
    return all(os.path.getmtime(file) <= made for file in summarize_timeline.trace_files(path))


def _job_and_trace(job_id):
    """The model and the name of its timeline; 404 when it has none."""
    job = get_job(job_id, 'model')
    path = trace_path(job)
    if path is None:
        abort(404, 'model {} has no timeline'.format(job_id))
    return job, path


@blueprint.route('/models/<job_id>/timeline.json')
def trace(job_id):
    job, path = _job_and_trace(job_id)
    if not os.path.isfile(path):  # DDL: the ranks' files, merged once
        merged = job.path('timeline_merged.json')
        if not _fresh(merged, path):
            summarize_timeline.merge(path, merged + '.tmp')
            os.replace(merged + '.tmp', merged)
        path = merged
    return send_file(path, mimetype='application/json', as_attachment=True,
                     download_name='{}_timeline.json'.format(job_id))


@blueprint.route('/models/<job_id>/timeline.png')
def drawing(job_id):
    job, path = _job_and_trace(job_id)
    png = job.path('timeline.png')
    if not _fresh(png, path):
        try:
            summarize_timeline.draw(path, png + '.tmp.png')
        except summarize_timeline.TimelineError as error:
            return Response(str(error), status=422, mimetype='text/plain')
        os.replace(png + '.tmp.png', png)
    return send_file(png, mimetype='image/png', max_age=0)
