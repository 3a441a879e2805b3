"""The server's settings: where jobs live, the data root every form path must resolve under,
the Caffe build whose tools run the jobs, and the GPUs jobs may use."""
import os
import shutil
import subprocess

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Config(object):
    def __init__(self, jobs_dir, data_root, build_dir=None, gpus=None,
                 max_upload_mb=16):
        self.jobs_dir = os.path.abspath(jobs_dir)
        self.data_root = os.path.realpath(data_root)
        self.build_dir = os.path.abspath(build_dir or os.path.join(SOURCE_DIR, 'build'))
        self.source_dir = SOURCE_DIR
        self.gpus = detect_gpus() if gpus is None else sorted(set(gpus))
        self.max_upload_bytes = int(max_upload_mb * 1024 * 1024)

    def tool(self, name):
        """The path of one of the build's tools (bin/caffe, bin/convert_imageset, ...)."""
        return os.path.join(self.build_dir, 'bin', name)

    def pycaffe_dir(self):
        return os.path.join(self.build_dir, 'python')

    def as_args(self):
        """The command-line form, for the runner processes."""
        return ['--jobs', self.jobs_dir, '--data', self.data_root, '--build', self.build_dir,
                '--gpus', ','.join(str(g) for g in self.gpus) or 'none']


def build_has_gpu_support(build_dir):
    cache = os.path.join(build_dir, 'CMakeCache.txt')
    try:
        with open(cache) as text:
            for line in text:
                if line.startswith('CAFFE_CUDA:') or line.startswith('CAFFE_CUDA_EMU:'):
                    value = line.split('=', 1)[1].strip().upper()
                    if value in ('ON', 'AUTO', 'TRUE', '1'):
                        return True
    except OSError:
        pass
    return False


def detect_gpus():
    """The GPU ids nvidia-smi lists; none where it is absent or finds none."""
    smi = shutil.which('nvidia-smi')
    if not smi:
        return []
    try:
        listing = subprocess.run([smi, '-L'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 timeout=10, check=False).stdout.decode('utf-8', 'replace')
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [index for index, line in enumerate(l for l in listing.splitlines()
                                               if l.startswith('GPU '))]


def parse_gpu_list(text):
    """'0,1' -> [0, 1]; 'none' or '' -> []; None -> None (detect)."""
    if text is None:
        return None
    text = text.strip()
    if text in ('', 'none'):
        return []
    return [int(part) for part in text.split(',')]
