"""`python3 -m caffe_web [--host H] [--port P] [--jobs DIR] [--data DIR] [--build DIR]`: the
web server (scripts/web.sh runs it with pycaffe on the path)."""
import argparse
import os
import sys

from .config import SOURCE_DIR, Config, parse_gpu_list


def main(argv=None):
    parser = argparse.ArgumentParser(prog='web.sh', description=(
        'The Caffe web server: make datasets, train and watch models, classify images.'))
    parser.add_argument('--host', default='127.0.0.1',
                        help='address to listen on (default 127.0.0.1: this machine only)')
    parser.add_argument('--port', type=int, default=5000, help='port (default 5000)')
    parser.add_argument('--jobs', default=os.path.join(SOURCE_DIR, 'web', 'jobs'),
                        help='folder of the datasets, models and their logs '
                             '(default: web/jobs in the checkout)')
    parser.add_argument('--data', default=os.path.expanduser('~'),
                        help='data root: every path a form takes must be under it '
                             '(default: your home folder)')
    parser.add_argument('--build', default=os.path.join(SOURCE_DIR, 'build'),
                        help="the Caffe build whose tools and pycaffe run the jobs "
                             "(default: build/ in the checkout)")
    parser.add_argument('--gpus', default=None,
                        help='GPU ids jobs may use, e.g. 0,1, or none (default: those nvidia-smi '
                             'lists)')
    parser.add_argument('--max-upload-mb', type=float, default=16,
                        help='largest upload accepted, in MB (default 16)')
    args = parser.parse_args(argv)
    for flag, folder in (('--data', args.data), ('--build', args.build)):
        if not os.path.isdir(folder):
            parser.error('{} {}: no such folder'.format(flag, folder))
    if not os.path.isfile(os.path.join(args.build, 'bin', 'caffe')):
        parser.error('--build {}: no bin/caffe in it; build Caffe first (scripts/build.sh)'
                     .format(args.build))
    try:
        gpus = parse_gpu_list(args.gpus)
    except ValueError:
        parser.error("--gpus '{}': expected GPU ids such as 0,1, or none".format(args.gpus))
    config = Config(args.jobs, args.data, args.build, gpus, args.max_upload_mb)
    sys.path.insert(0, config.pycaffe_dir())
    from .app import create_app
    app = create_app(config)
    print('Caffe web server on http://{}:{}/ (jobs: {}, data root: {}, {})'.format(
        args.host, args.port, config.jobs_dir, config.data_root,
        'GPUs ' + ','.join(map(str, config.gpus)) if config.gpus else 'no GPU'), flush=True)
    from werkzeug.serving import run_simple
    run_simple(args.host, args.port, app, threaded=True, use_reloader=False)
    return 0


if __name__ == '__main__':
    sys.exit(main())
