"""What the pages and the live updates show of a job: its status and its stages, each with
progress in percent and an estimate of the time left."""
import time

from . import stage_logs
from .jobstore import RUNNING


def stage_rows(job, state):
    rows = []
    counts = job.params.get('counts', {})
    for stage in state.get('stages', []):
        row = {'name': stage['name'], 'status': stage['status'], 'progress': None, 'eta': None,
               'log': stage['log']}
        if stage['status'] == 'done':
            row['progress'] = 1.0
        elif stage['status'] == RUNNING:
            total = counts.get('train') if 'mean' in stage['name'].lower() else None
            fraction = stage_logs.progress(job.path(stage['log']), total)
            row['progress'] = fraction
            elapsed = time.time() - stage.get('started', time.time())
            if fraction and fraction > 0:
                row['eta'] = elapsed * (1 - fraction) / fraction
        rows.append(row)
    return rows


def job_summary(job):
    state = job.state()
    info = job.info
    return {'id': job.id, 'kind': info.get('kind'), 'name': info.get('name'),
            'created': info.get('created'), 'status': job.status(),
            'error': state.get('error'), 'stages': stage_rows(job, state),
            'gpus': state.get('gpus') or [], 'child': state.get('child')}


def format_seconds(seconds):
    if seconds is None:
        return ''
    seconds = int(round(seconds))
    if seconds < 60:
        return '{} s'.format(seconds)
    if seconds < 3600:
        return '{} min {} s'.format(seconds // 60, seconds % 60)
    return '{} h {} min'.format(seconds // 3600, seconds % 3600 // 60)
