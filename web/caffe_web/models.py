"""Image classification models: the form (a dataset, a standard or custom network, the solver,
epochs, batch size, learning rate and its policy, snapshot and validation intervals in epochs,
GPUs, LMS and DDL) turned into a job folder holding train_val.prototxt, deploy.prototxt and
solver.prototxt, whose one stage is `caffe train` (resumed from the newest .solverstate when
there is one)."""
import glob
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import datasets, forms, networks
from .forms import FormError
from .gpu_queue import GpuRequest, check_request
from .jobstore import DONE

SOLVER_TYPES = ('SGD', 'Nesterov', 'AdaGrad', 'RMSProp', 'AdaDelta', 'Adam')
LR_POLICIES = ('fixed', 'step', 'multistep', 'exp', 'inv', 'poly', 'sigmoid')
_SNAPSHOT = re.compile(r'snapshot_iter_(\d+)\.(caffemodel|solverstate)$')


def model_params(form, config, store):
    """The model job's parameters from the form; FormError names the field of a bad value."""
    dataset = store.get(form.get('dataset') or '', 'dataset')
    if dataset is None:
        raise FormError('Dataset', "'{}' is not a dataset; pick one from the list".format(
            form.get('dataset') or ''))
    if dataset.status() != DONE:
        raise FormError('Dataset', "'{}' is {}; its databases must be done first".format(
            dataset.info['name'], dataset.status()))
    network = forms.choice(form, 'network', 'Network', tuple(networks.STANDARD) + ('custom',),
                           'lenet')
    params = {
        'name': forms.text(form, 'name', 'Model name'),
        'dataset': dataset.id,
        'network': network,
        'solver_type': forms.choice(form, 'solver_type', 'Solver type', SOLVER_TYPES, 'SGD'),
        'epochs': forms.number(form, 'epochs', 'Training epochs', 30, 1, 100000, integer=True),
        'batch_size': forms.number(form, 'batch_size', 'Batch size', None, 1, 100000,
                                   integer=True, required=False),
        'base_lr': forms.number(form, 'base_lr', 'Base learning rate', 0.01, 0, 100),
        'lr_policy': forms.choice(form, 'lr_policy', 'Learning rate policy', LR_POLICIES, 'step'),
        'gamma': forms.number(form, 'gamma', 'Gamma', 0.1, 0, 100),
        'power': forms.number(form, 'power', 'Power', 0.75, 0, 100),
        'step_percent': forms.number(form, 'step_percent', 'Step size (% of training)', 33,
                                     0.01, 100),
        'step_values': _percent_list(form.get('step_values') or '50,75'),
        'snapshot_epochs': forms.number(form, 'snapshot_epochs', 'Snapshot interval (epochs)',
                                        1, 0.01, 100000),
        'val_epochs': forms.number(form, 'val_epochs', 'Validation interval (epochs)', 1, 0.01,
                                   100000),
        'random_seed': forms.number(form, 'random_seed', 'Random seed', None, 0, 2 ** 31 - 1,
                                    integer=True, required=False),
        'lms': bool(form.get('lms')),
        'lms_kb': forms.number(form, 'lms_kb', 'LMS threshold (KB)', 0, 0, 2 ** 40,
                               integer=True),
        'lms_frac': forms.number(form, 'lms_frac', 'LMS fraction', 0.0, 0, 1),
        'ddl_processes': forms.number(form, 'ddl_processes', 'DDL processes', 0, 0, 64,
                                      integer=True),
        'ddl_options': (form.get('ddl_options') or '').strip(),
        'gpus': _gpu_list(form.getlist('gpus') if hasattr(form, 'getlist') else
                          form.get('gpus') or []),
        'gpu_count': forms.number(form, 'gpu_count', 'Number of GPUs', 0, 0, 64, integer=True),
        'timeline_iters': iteration_window(form.get('timeline_iters') or ''),
    }
    problem = check_request(GpuRequest.from_params(params), config.gpus)
    if problem:
        raise FormError('GPUs', problem)
    if params['lms'] and not config.gpus:
        raise FormError('Large Model Support', 'LMS manages GPU memory; this machine has no GPU')
    return dataset, params


def iteration_window(text):
    """-timeline_iters' FIRST:END, or '' (no timeline)."""
    text = text.strip()
    match = re.match(r'^(\d+):(\d+)$', text)
    if text and not (match and int(match.group(1)) < int(match.group(2))):
        raise FormError('Timeline', "'{}': expected FIRST:END, the iterations to record, FIRST "
                        "below END (e.g. 20:50), or nothing".format(text))
    return text


def _percent_list(text):
    try:
        values = [float(part) for part in text.replace(' ', '').split(',') if part]
    except ValueError:
        raise FormError('Multistep values (% of training)', "'{}' is not a list of numbers "
                        "(e.g. 50,75)".format(text)) from None
    if any(not 0 < value <= 100 for value in values):
        raise FormError('Multistep values (% of training)', "'{}': each must be in (0, 100]"
                        .format(text))
    return values


def _gpu_list(values):
    if isinstance(values, str):
        values = [values]
    try:
        return sorted({int(value) for value in values if str(value).strip()})
    except ValueError:
        raise FormError('GPUs', "'{}' is not a list of GPU ids".format(','.join(values))) \
            from None


def create(store, form, files, config):
    dataset, params = model_params(form, config, store)
    staging = tempfile.mkdtemp(prefix='.new-', dir=store.folder)
    try:
        write_network(staging, form, files, config, dataset, params)
        return store.create('model', params['name'], params, staging=staging)
    finally:
        if os.path.isdir(staging):
            shutil.rmtree(staging)


def write_network(folder, form, files, config, dataset, params):
    """train_val.prototxt (fitted), deploy.prototxt, solver.prototxt and labels.txt in
    `folder`, the train_val checked by our engine (its error, with the line, names the field)."""
    if params['network'] == 'custom':
        text = form.get('custom_network') or ''
        upload = files.get('custom_network_file') if files else None
        if upload is not None and upload.filename:
            text = upload.read().decode('utf-8', 'replace')
        if not text.strip():
            raise FormError('Custom network', 'is empty; paste a train_val prototxt or upload one')
        source = os.path.join(folder, 'custom.prototxt')
        with open(source, 'w') as output:
            output.write(text)
        upgraded = os.path.join(folder, 'custom_upgraded.prototxt')
        result = subprocess.run([config.tool('upgrade_net_proto_text'), source, upgraded],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=folder)
        if not os.path.isfile(upgraded):
            raise FormError('Custom network', _engine_error(result.stdout, folder))
        net = networks.read_net(upgraded)
    else:
        net = networks.read_net(networks.network_source(config, params['network']))
    counts = dict(datasets.class_counts(dataset, 'train'))
    train_count = sum(counts.values()) or dataset.params['counts']['train']
    val_count = sum(dict(datasets.class_counts(dataset, 'val')).values()) \
        if dataset.params['counts']['val'] else 0
    net = networks.fit(net, dataset, params['batch_size'], has_val=val_count > 0)
    train_val = os.path.join(folder, 'train_val.prototxt')
    networks.write_net(net, train_val)
    shape = datasets.image_shape(dataset.params)
    networks.write_net(networks.deploy(net, shape), os.path.join(folder, 'deploy.prototxt'))
    shutil.copy(dataset.path('labels.txt'), os.path.join(folder, 'labels.txt'))
    batch = _batch_sizes(net)
    params['iters_per_epoch'] = max(1, int(math.ceil(train_count / float(batch[0]))))
    params['train_count'], params['val_count'] = train_count, val_count
    params['uses_mean'] = networks.uses_mean(net)
    check = subprocess.run([sys.executable, '-m', 'caffe_web.check_net', train_val] +
                           (['TEST'] if val_count else []),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=folder,
                           env=_pycaffe_env(config))
    if check.returncode != 0:
        raise FormError('Custom network' if params['network'] == 'custom' else 'Network',
                        _engine_error(check.stdout, folder))
    with open(os.path.join(folder, 'solver.prototxt'), 'w') as output:
        output.write(solver_text(params, val_count, batch[1]))


def _pycaffe_env(config):
    environment = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environment['PYTHONPATH'] = os.pathsep.join([config.pycaffe_dir(), package_parent])
    environment['GLOG_minloglevel'] = '2'
    return environment


def _engine_error(output, folder):
    """The one line of an engine error, without the tool's name and the job folder's path."""
    lines = [line for line in output.decode('utf-8', 'replace').splitlines() if line.strip()]
    line = next((l for l in reversed(lines) if 'error' in l.lower()), lines[-1] if lines else
                'the engine rejected it without a message')
    line = re.sub(r'^[\w_]+: error: ', '', line.strip())
    return line.replace(folder + os.sep, '')


def _batch_sizes(net):
    """(train batch, val batch) of the fitted net's Data layers."""
    pb = networks.caffe_pb2()
    train = val = None
    for layer in net.layer:
        if layer.type == 'Data':
            phases = {rule.phase for rule in layer.include}
            if pb.TEST in phases:
                val = layer.data_param.batch_size
            else:
                train = layer.data_param.batch_size
    return train or 1, val or train or 1


def solver_text(params, val_count, val_batch):
    """The solver; its paths are relative to the job folder, where caffe train runs."""
    per_epoch = params['iters_per_epoch']
    max_iter = int(round(params['epochs'] * per_epoch))
    lines = ['net: "train_val.prototxt"',
             'type: "{}"'.format(params['solver_type']),
             'base_lr: {!r}'.format(params['base_lr']),
             'lr_policy: "{}"'.format(params['lr_policy']),
             'max_iter: {}'.format(max_iter),
             # A few points per epoch on the graph, and never fewer than one a 100 iterations.
             'display: {}'.format(max(1, min(100, per_epoch // 4))),
             'snapshot: {}'.format(max(1, int(round(params['snapshot_epochs'] * per_epoch)))),
             'snapshot_prefix: "snapshot"',
             'solver_mode: {}'.format('GPU' if params['gpus'] or params['gpu_count'] else 'CPU'),
             'weight_decay: 0.0005']
    momentum = {'SGD': 0.9, 'Nesterov': 0.9, 'RMSProp': 0.9, 'Adam': 0.9, 'AdaDelta': 0.95}
    if params['solver_type'] in momentum:
        lines.append('momentum: {}'.format(momentum[params['solver_type']]))
    if params['solver_type'] == 'RMSProp':
        lines.append('rms_decay: 0.98')
    policy = params['lr_policy']
    step = max(1, int(round(max_iter * params['step_percent'] / 100.0)))
    if policy in ('step', 'exp', 'inv', 'sigmoid'):
        lines.append('gamma: {!r}'.format(params['gamma']))
    if policy in ('inv', 'poly'):
        lines.append('power: {!r}'.format(params['power']))
    if policy in ('step', 'sigmoid'):
        lines.append('stepsize: {}'.format(step))
    if policy == 'multistep':
        lines.append('gamma: {!r}'.format(params['gamma']))
        lines.extend('stepvalue: {}'.format(max(1, int(round(max_iter * value / 100.0))))
                     for value in params['step_values'])
    if val_count:
        lines += ['test_iter: {}'.format(int(math.ceil(val_count / float(val_batch)))),
                  'test_interval: {}'.format(max(1, int(round(params['val_epochs'] * per_epoch))))]
    if params['random_seed'] is not None:
        lines.append('random_seed: {}'.format(params['random_seed']))
    return '\n'.join(lines) + '\n'


def snapshots(job, extension='caffemodel'):
    """[(iteration, path)] of the job's snapshots, oldest first."""
    found = []
    for path in glob.glob(job.path('snapshot_iter_*.' + extension)):
        match = _SNAPSHOT.search(path)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def plan(job, config, state):
    from .plans import Stage
    params = job.params
    caffe = config.tool('caffe')
    argv = [caffe, 'train', '-solver', job.path('solver.prototxt')]
    states = snapshots(job, 'solverstate')
    if states:
        argv += ['-snapshot', states[-1][1]]
    gpus = state.get('gpus') or []
    if gpus:
        argv += ['-gpu', ','.join(str(gpu) for gpu in gpus)]
    if params.get('lms'):
        argv += ['-lms', str(params.get('lms_kb') or 0)]
        if params.get('lms_frac'):
            argv += ['-lms_frac', repr(params['lms_frac'])]
    if params.get('timeline_iters'):
        # Each run writes its file when it ends; a resumed run's window may lie behind it (then
        # the file of the run that recorded it stays). With DDL: timeline.rankN.json.
        argv += ['-timeline', job.path('timeline.json'), '-timeline_iters',
                 params['timeline_iters']]
    if params.get('ddl_processes'):
        argv += ['-ddl', params.get('ddl_options') or '']
        mpirun = ['mpirun', '-n', str(params['ddl_processes']), '--oversubscribe']
        if os.geteuid() == 0:
            mpirun.append('--allow-run-as-root')
        argv = mpirun + argv
    return [Stage('Train', 'train.log', argv=argv)]
