"""Model pages: the New model form (and Clone: the form filled from a job), the model page
(live graphs, the process, snapshots, stop / resume), Classify one, Classify many, and the
download of a trained model as one archive."""
import io
import os
import tarfile

import numpy as np
from flask import Blueprint, Response, abort, redirect, render_template, request

from . import datasets, forms, inference, models, networks, processes, views_timeline
from .forms import FormError
from .jobstore import DONE, RUNNING
from .summary import job_summary
from .views_home import config, get_job, store

blueprint = Blueprint('models', __name__)


def _form_page(form, error=None, status=200):
    ready = [job for job in store().all('dataset') if job.status() == DONE]
    return render_template('model_new.html', form=form, error=error, datasets=ready,
                           networks=networks.STANDARD, solver_types=models.SOLVER_TYPES,
                           lr_policies=models.LR_POLICIES, config=config()), status


@blueprint.route('/models/new', methods=['GET', 'POST'])
def new_model():
    if request.method == 'POST':
        try:
            job = models.create(store(), request.form, request.files, config())
        except FormError as error:
            return _form_page(request.form, error, 400)
        return redirect('/models/' + job.id)
    form = dict(request.args.items())
    clone = request.args.get('clone')
    if clone:
        source = get_job(clone, 'model')
        form = {key: value for key, value in source.params.items()
                if isinstance(value, (str, int, float)) and not isinstance(value, bool)}
        form.update(name=source.info['name'] + ' (clone)', lms='on' if source.params.get('lms')
                    else '', step_values=','.join('{:g}'.format(v) for v in
                                                  source.params.get('step_values', [])))
        if os.path.isfile(source.path('custom.prototxt')):
            with open(source.path('custom.prototxt')) as text:
                form['custom_network'] = text.read()
    return _form_page(form)


def model_status(job):
    """The live part of the model page (the graph rows come separately)."""
    summary = job_summary(job)
    per_epoch = float(job.params.get('iters_per_epoch') or 1)
    summary['snapshots'] = [{'iteration': iteration, 'epoch': round(iteration / per_epoch, 2)}
                            for iteration, _ in models.snapshots(job)]
    child = summary.get('child')
    summary['process'] = processes.usage(child) if child and summary['status'] == RUNNING \
        else None
    return summary


@blueprint.route('/models/<job_id>')
def show_model(job_id):
    job = get_job(job_id, 'model')
    dataset = store().get(job.params['dataset'], 'dataset')
    return render_template('model.html', job=job, info=job.info, params=job.params,
                           dataset=dataset, status=model_status(job),
                           timeline=views_timeline.table(job),
                           network_name=networks.STANDARD.get(job.params['network'],
                                                              ('Custom',))[0])


def _weights(job):
    """The caffemodel the form picked (?iteration / form field), else the newest."""
    found = models.snapshots(job)
    if not found:
        raise FormError('Select model', 'this model has no snapshot yet')
    wanted = request.values.get('iteration', type=int)
    for iteration, path in found:
        if iteration == wanted:
            return iteration, path
    if wanted is not None:
        raise FormError('Select model', 'no snapshot at iteration {}'.format(wanted))
    return found[-1]


def _dataset_of(job):
    dataset = store().get(job.params['dataset'], 'dataset')
    if dataset is None:
        abort(404, 'the dataset of model {} is gone'.format(job.id))
    return dataset


def _image_from_request():
    upload = request.files.get('image_file')
    if upload is not None and upload.filename:
        data = upload.read()
        try:
            return inference.open_image(data), upload.filename
        except ValueError as error:
            raise FormError('Image file', "'{}' is {}".format(upload.filename, error)) from None
    path = forms.path_under_root(config().data_root, request.form.get('image_path'),
                                 'Image path', 'file')
    with open(path, 'rb') as source:
        try:
            return inference.open_image(source.read()), request.form.get('image_path')
        except ValueError as error:
            raise FormError('Image path', "'{}' is {}".format(
                request.form.get('image_path'), error)) from None


@blueprint.route('/models/<job_id>/classify_one', methods=['POST'])
def classify_one(job_id):
    job = get_job(job_id, 'model')
    try:
        iteration, weights = _weights(job)
        image, name = _image_from_request()
    except FormError as error:
        return render_template('error.html', title='Classify one', message=str(error)), 400
    dataset = _dataset_of(job)
    labels = datasets.read_labels(job)
    probabilities = inference.classify(job, dataset, weights, [image])[0]
    layers = inference.visualizations(job, weights) if request.form.get('visualize') else []
    return render_template('classify_one.html', job=job, info=job.info, name=name,
                           image=_thumbnail(image), top=inference.top_k(probabilities, labels),
                           layers=layers, iteration=iteration,
                           epoch=round(iteration / float(job.params['iters_per_epoch']), 2))


def _thumbnail(image):
    import base64
    copy = image.convert('RGB')
    if max(copy.size) < 128:
        factor = 128 // max(copy.size)
        copy = copy.resize((copy.width * factor, copy.height * factor))
    output = io.BytesIO()
    copy.save(output, 'PNG')
    return 'data:image/png;base64,' + base64.b64encode(output.getvalue()).decode()


def _read_list(text, list_folder):
    """[(path under the data root, label or None)] from "path [label]" lines."""
    root = config().data_root
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        parts = line.rsplit(' ', 1)
        label = None
        if len(parts) == 2 and parts[1].lstrip('-').isdigit():
            line, label = parts[0], int(parts[1])
        raw = line if os.path.isabs(line) else os.path.join(list_folder, line)
        try:
            path = forms.path_under_root(root, raw, 'Image list', 'file')
        except FormError as error:
            raise FormError('Image list', 'line {}: {}'.format(number, error.message)) from None
        entries.append((path, label))
    if not entries:
        raise FormError('Image list', 'lists no images')
    return entries


@blueprint.route('/models/<job_id>/classify_many', methods=['POST'])
def classify_many(job_id):
    job = get_job(job_id, 'model')
    root = config().data_root
    try:
        iteration, weights = _weights(job)
        upload = request.files.get('list_file')
        if upload is not None and upload.filename:
            entries = _read_list(upload.read().decode('utf-8', 'replace'), root)
        else:
            path = forms.path_under_root(root, request.form.get('list_path'), 'Image list',
                                         'file')
            with open(path, errors='replace') as source:
                entries = _read_list(source.read(), os.path.dirname(path))
        images = []
        for path, _ in entries:
            with open(path, 'rb') as source:
                try:
                    images.append(inference.open_image(source.read()))
                except ValueError as error:
                    raise FormError('Image list', "'{}' is {}".format(
                        os.path.relpath(path, root), error)) from None
    except FormError as error:
        return render_template('error.html', title='Classify many', message=str(error)), 400
    dataset = _dataset_of(job)
    labels = datasets.read_labels(job)
    probabilities = inference.classify(job, dataset, weights, images,
                                       batch_size=job.params.get('batch_size') or 64)
    rows, confusion = [], np.zeros((len(labels), len(labels)), int)
    top1 = top5 = labelled = 0
    for (path, label), probs in zip(entries, probabilities):
        top = inference.top_k(probs, labels)
        rows.append({'path': os.path.relpath(path, root), 'label': label, 'top': top})
        if label is not None and 0 <= label < len(labels):
            labelled += 1
            top1 += top[0][0] == label
            top5 += label in [index for index, _, _ in top]
            confusion[label, top[0][0]] += 1
    return render_template('classify_many.html', job=job, info=job.info, rows=rows,
                           labels=labels, labelled=labelled,
                           accuracy=top1 / float(labelled) if labelled else None,
                           top5=top5 / float(labelled) if labelled else None,
                           confusion=confusion.tolist(), iteration=iteration)


@blueprint.route('/models/<job_id>/download')
def download(job_id):
    """deploy.prototxt, the caffemodel, mean.binaryproto (what the network subtracts: the
    dataset's mean, or zeros) and labels.txt, as one .tar.gz that classification.bin and
    pycaffe take unchanged."""
    job = get_job(job_id, 'model')
    try:
        iteration, weights = _weights(job)
    except FormError as error:
        return render_template('error.html', title='Download', message=str(error)), 400
    dataset = _dataset_of(job)
    output = io.BytesIO()
    with tarfile.open(fileobj=output, mode='w:gz') as archive:
        archive.add(job.path('deploy.prototxt'), 'deploy.prototxt')
        archive.add(weights, 'snapshot_iter_{}.caffemodel'.format(iteration))
        archive.add(job.path('labels.txt'), 'labels.txt')
        mean = _mean_bytes(job, dataset)
        info = tarfile.TarInfo('mean.binaryproto')
        info.size = len(mean)
        archive.addfile(info, io.BytesIO(mean))
    name = '{}_epoch_{:g}.tar.gz'.format(
        ''.join(c if c.isalnum() else '_' for c in job.info['name']),
        round(iteration / float(job.params['iters_per_epoch']), 2))
    return Response(output.getvalue(), mimetype='application/gzip',
                    headers={'Content-Disposition': 'attachment; filename=' + name})


def _mean_bytes(job, dataset):
    if job.params.get('uses_mean'):
        with open(dataset.path('mean.binaryproto'), 'rb') as source:
            return source.read()
    from caffe.proto import caffe_pb2
    channels, height, width = datasets.image_shape(dataset.params)
    blob = caffe_pb2.BlobProto(num=1, channels=channels, height=height, width=width)
    blob.data.extend([0.0] * (channels * height * width))
    return blob.SerializeToString()
