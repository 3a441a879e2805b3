"""Dataset pages: the New dataset form, the job page (stages live, then the images per class
of each split, the mean image, the skipped images), and Explore DB (the records as stored, with
their labels, by class, paged)."""
import base64
import io
import os

import numpy as np
from flask import Blueprint, Response, abort, redirect, render_template, request
from PIL import Image

from . import datasets, stage_logs
from .forms import FormError
from .summary import job_summary
from .views_home import config, get_job, store

blueprint = Blueprint('datasets', __name__)
EXPLORE_PAGE_SIZE = 30


@blueprint.route('/datasets/new', methods=['GET', 'POST'])
def new_dataset():
    if request.method == 'POST':
        try:
            job = datasets.create(store(), request.form, config())
        except FormError as error:
            return render_template('dataset_new.html', form=request.form, error=error,
                                   config=config()), 400
        return redirect('/datasets/' + job.id)
    return render_template('dataset_new.html', form={}, error=None, config=config())


def dataset_status(job):
    """The live part of the dataset page."""
    summary = job_summary(job)
    summary['skipped'] = [{'stage': stage['name'], 'line': line, 'message': message}
                          for stage in summary['stages']
                          for line, message in stage_logs.skipped_images(job.path(stage['log']))]
    summary['class_counts'] = {split: datasets.class_counts(job, split)
                               for split in datasets.SPLITS}
    return summary


@blueprint.route('/datasets/<job_id>')
def show_dataset(job_id):
    job = get_job(job_id, 'dataset')
    return render_template('dataset.html', job=job, info=job.info, params=job.params,
                           status=dataset_status(job))


@blueprint.route('/datasets/<job_id>/mean.png')
def mean_image(job_id):
    job = get_job(job_id, 'dataset')
    if not os.path.isfile(job.path('mean.binaryproto')):
        abort(404, 'dataset {} has no mean image yet'.format(job_id))
    from .inference import load_mean
    mean = load_mean(job.path('mean.binaryproto'))
    return Response(_png(np.clip(np.round(mean), 0, 255).astype(np.uint8)),
                    mimetype='image/png')


def _png(chw):
    """PNG bytes of a (C, H, W) uint8 image in B, G, R order (or gray)."""
    image = Image.fromarray(chw[0]) if chw.shape[0] == 1 else \
        Image.fromarray(chw[::-1].transpose(1, 2, 0))
    output = io.BytesIO()
    image.save(output, 'PNG')
    return output.getvalue()


def _record_image(datum):
    """A data URI of a Datum's image as stored: encoded bytes as they are, raw pixels as PNG."""
    if datum.encoded:
        kind = 'jpeg' if datum.data[:2] == b'\xff\xd8' else 'png'
        return 'data:image/{};base64,{}'.format(kind, base64.b64encode(datum.data).decode())
    pixels = np.frombuffer(datum.data, np.uint8).reshape(datum.channels, datum.height,
                                                         datum.width)
    return 'data:image/png;base64,' + base64.b64encode(_png(pixels)).decode()


def explore_records(job, split, label, page, page_size=EXPLORE_PAGE_SIZE):
    """(records [(key, label, image data URI)], total matching) of a split's LMDB, in key
    order, of one label (None: all), page `page` (1-based)."""
    import lmdb
    from caffe.proto import caffe_pb2
    path = job.path(split + '_db')
    if not os.path.isdir(path):
        return [], 0
    records, matching, skip = [], 0, (page - 1) * page_size
    datum = caffe_pb2.Datum()
    with lmdb.open(path, readonly=True, lock=False) as environment:
        with environment.begin() as transaction:
            for key, value in transaction.cursor():
                datum.ParseFromString(value)
                if label is not None and datum.label != label:
                    continue
                matching += 1
                if skip < matching <= skip + page_size:
                    records.append((key.decode('utf-8', 'replace'), datum.label,
                                    _record_image(datum)))
    return records, matching


@blueprint.route('/datasets/<job_id>/explore')
def explore(job_id):
    job = get_job(job_id, 'dataset')
    split = request.args.get('split', 'train')
    if split not in datasets.SPLITS:
        abort(404, "split '{}': expected train or val".format(split))
    label = request.args.get('label', type=int)
    page = max(1, request.args.get('page', 1, type=int))
    records, total = explore_records(job, split, label, page)
    labels = datasets.read_labels(job)
    pages = max(1, (total + EXPLORE_PAGE_SIZE - 1) // EXPLORE_PAGE_SIZE)
    return render_template('explore.html', job=job, info=job.info, split=split, label=label,
                           labels=labels, records=records, total=total, page=page, pages=pages,
                           counts=dict(datasets.class_counts(job, split)))
