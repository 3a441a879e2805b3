"""Image classification datasets: the form (a folder of class subfolders or a list file, a
validation folder / list / percentage, image type, size, resize mode, encoding) turned into a
job whose stages are our tools: convert_imageset per split, compute_image_mean, and caffe_db
stats for the images per class. The job folder holds labels.txt, train.txt and val.txt (paths
relative to the data root), train_db/, val_db/, mean.binaryproto and the stage logs."""
import os
import shutil
import tempfile

from . import forms, resize
from .forms import FormError

SPLITS = ('train', 'val')


def scan_class_folders(root, folder, label):
    """{class name: [image paths relative to root]} for the subfolders of `folder` that hold
    images (sorted: the labels are the classes' places in this order)."""
    classes = {}
    for name in sorted(os.listdir(folder)):
        subfolder = os.path.join(folder, name)
        if name.startswith('.') or not os.path.isdir(subfolder):
            continue
        images = []
        for file_name in sorted(os.listdir(subfolder)):
            if not file_name.lower().endswith(resize.IMAGE_EXTENSIONS):
                continue
            path = os.path.join(subfolder, file_name)
            real = os.path.realpath(path)
            if not forms.is_under(root, real):
                raise FormError(label, "'{}/{}' is a link to {}, outside the data root {}".format(
                    name, file_name, real, root))
            images.append(os.path.relpath(real, root))
        if images:
            classes[name] = images
    return classes


def read_list_file(root, path, label):
    """[(path relative to root, label)] from a "path label" list (paths absolute, or relative
    to the list's folder), each under the data root."""
    entries = []
    with open(path, errors='replace') as source:
        for number, line in enumerate(source, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.rsplit(' ', 1)
            if len(parts) != 2 or not parts[1].lstrip('-').isdigit():
                raise FormError(label, "line {} of '{}' is '{}'; expected 'path label' with a "
                                "whole-number label".format(number, path, line))
            image = os.path.join(os.path.dirname(path), parts[0])
            real = os.path.realpath(image)
            if not forms.is_under(root, real):  # (a '..' that stays inside is fine here)
                raise FormError(label, "line {} of '{}': '{}' is outside the data root {}".format(
                    number, path, parts[0], root))
            entries.append((os.path.relpath(real, root), int(parts[1])))
    return entries


def _entries_from_folder(root, form, field, label, labels=None):
    folder = forms.path_under_root(root, form.get(field), label)
    classes = scan_class_folders(root, folder, label)
    raw = form.get(field).strip()
    if not classes:
        raise FormError(label, "'{}' has no class subfolders holding images (expected one "
                        "subfolder per class, e.g. {}/cat/1.png)".format(raw, raw))
    if labels is None:
        if len(classes) < 2:
            raise FormError(label, "'{}' has 1 class ({}); a classifier needs at least 2 "
                            "(one subfolder per class)".format(raw, ', '.join(classes)))
        labels = list(classes)
    unknown = [name for name in classes if name not in labels]
    if unknown:
        raise FormError(label, "'{}' has classes the training images lack: {}".format(
            raw, ', '.join(unknown)))
    entries = [(path, labels.index(name)) for name, paths in classes.items() for path in paths]
    return entries, labels


def dataset_params(form, config):
    """The dataset job's parameters from the form (FormError on a bad value), the lists it
    needs included."""
    root = config.data_root
    params = {
        'name': forms.text(form, 'name', 'Dataset name'),
        'image_type': forms.choice(form, 'image_type', 'Image type', ('color', 'gray'), 'color'),
        'width': forms.number(form, 'width', 'Image width', 256, 1, 4096, integer=True),
        'height': forms.number(form, 'height', 'Image height', 256, 1, 4096, integer=True),
        'resize_mode': forms.choice(form, 'resize_mode', 'Resize mode', resize.MODES, 'squash'),
        'encoding': forms.choice(form, 'encoding', 'Image encoding', ('none', 'png', 'jpg'),
                                 'none'),
        'backend': forms.choice(form, 'backend', 'DB backend', ('lmdb',), 'lmdb'),
    }
    if (form.get('train_list') or '').strip():
        path = forms.path_under_root(root, form.get('train_list'), 'Training list', 'file')
        train = read_list_file(root, path, 'Training list')
        if not train:
            raise FormError('Training list', "'{}' lists no images".format(form['train_list']))
        count = max(label for _, label in train) + 1
        labels = [str(i) for i in range(count)]
        params['source'] = form['train_list'].strip()
    else:
        train, labels = _entries_from_folder(root, form, 'train_folder', 'Training images')
        params['source'] = form['train_folder'].strip()
    val = []
    if (form.get('val_folder') or '').strip():
        val, _ = _entries_from_folder(root, form, 'val_folder', 'Validation images', labels)
    elif (form.get('val_list') or '').strip():
        path = forms.path_under_root(root, form.get('val_list'), 'Validation list', 'file')
        val = read_list_file(root, path, 'Validation list')
    else:
        percent = forms.number(form, 'val_percent', 'Validation %', 25, 0, 90)
        if percent > 0:
            train, val = split_by_class(train, percent)
    params.update(labels=labels, train=train, val=val)
    return params


def split_by_class(entries, percent):
    """(train, val): `percent` of each class's images (rounded, at least one where the class has
    two or more) to val, picked by a fixed shuffle."""
    by_label = {}
    for entry in entries:
        by_label.setdefault(entry[1], []).append(entry)
    train, val = [], []
    for label in sorted(by_label):
        items = resize.shuffled(by_label[label], seed=label)
        count = int(round(len(items) * percent / 100.0))
        if count == 0 and len(items) > 1:
            count = 1
        val.extend(items[:count])
        train.extend(items[count:])
    return train, val


def write_lists(folder, params):
    """labels.txt, train.txt and val.txt in the job's folder."""
    with open(os.path.join(folder, 'labels.txt'), 'w') as output:
        output.write(''.join(label + '\n' for label in params['labels']))
    for split in SPLITS:
        with open(os.path.join(folder, split + '.txt'), 'w') as output:
            output.write(''.join('{} {}\n'.format(path, label) for path, label in params[split]))


def create(store, form, config):
    params = dataset_params(form, config)
    lists = {split: params.pop(split) for split in SPLITS}
    params['counts'] = {split: len(lists[split]) for split in SPLITS}
    staging = tempfile.mkdtemp(prefix='.new-', dir=store.folder)
    try:
        write_lists(staging, dict(params, **lists))
        return store.create('dataset', params['name'], params, staging=staging)
    finally:
        if os.path.isdir(staging):
            shutil.rmtree(staging)


def plan(job, config, state):
    """The stages: [Resize images], Create DB for each split, Compute mean, Count labels."""
    from .plans import Stage
    params = job.params
    # A dataset run again starts over: what an earlier try left would stop convert_imageset.
    for name in ('train_db', 'val_db', 'resized'):
        shutil.rmtree(job.path(name), ignore_errors=True)
    stages = []
    counts = params['counts']
    color = params['image_type'] == 'color'
    for split in SPLITS:
        if counts[split] == 0:
            continue
        title = '({})'.format(split)
        list_path, root = job.path(split + '.txt'), config.data_root + '/'
        if params['resize_mode'] != 'squash':
            resized = job.path('resized', split)
            stages.append(Stage('Resize images ' + title, 'resize_{}.log'.format(split),
                                run=resize.resize_list_stage(
                                    config.data_root, list_path, resized,
                                    job.path('resized_{}.txt'.format(split)), params['width'],
                                    params['height'], params['resize_mode'], color)))
            list_path, root = job.path('resized_{}.txt'.format(split)), resized + '/'
        argv = [config.tool('convert_imageset'), '--shuffle', '--shuffle_seed=1701',
                '--backend=' + params['backend'],
                '--log_every={}'.format(max(1, counts[split] // 50))]
        if not color:
            argv.append('--gray')
        if params['resize_mode'] == 'squash':
            argv += ['--resize_height={}'.format(params['height']),
                     '--resize_width={}'.format(params['width'])]
        if params['encoding'] != 'none':
            argv += ['--encoded', '--encode_type=' + params['encoding']]
        stages.append(Stage('Create DB ' + title, 'create_db_{}.log'.format(split),
                            argv=argv + [root, list_path, job.path(split + '_db')]))
    stages.append(Stage('Compute mean', 'compute_mean.log', argv=[
        config.tool('compute_image_mean'), '--backend=' + params['backend'],
        '--log_every={}'.format(max(1, counts['train'] // 50)), job.path('train_db'),
        job.path('mean.binaryproto')]))
    for split in SPLITS:
        if counts[split]:
            stages.append(Stage('Count labels ({})'.format(split), 'labels_{}.log'.format(split),
                                argv=[config.tool('caffe_db'), 'stats', job.path(split + '_db')]))
    return stages


def class_counts(job, split):
    """[(class name, images)] of a split's database, from caffe_db stats (its log)."""
    from .stage_logs import label_counts, read_lines
    counts = label_counts(read_lines(job.path('labels_{}.log'.format(split))))
    names = read_labels(job)
    return [(names[label] if 0 <= label < len(names) else str(label), counts.get(label, 0))
            for label in range(max(len(names), max(counts, default=-1) + 1))] if counts else []


def read_labels(job):
    try:
        with open(job.path('labels.txt')) as source:
            return [line.rstrip('\n') for line in source if line.strip()]
    except FileNotFoundError:
        return []


def image_shape(params):
    """(channels, height, width) of the dataset's records."""
    return (3 if params['image_type'] == 'color' else 1, params['height'], params['width'])
