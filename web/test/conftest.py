"""Shared set-up of the web server's tests (ctest web_*; by hand:
CAFFE_BINARY_DIR=build /usr/bin/python3 -m pytest web/test). A server is a real
`python3 -m caffe_web` process on a free port of 127.0.0.1 with its own jobs folder and data
root; the browser is Debian's chromium, headless, driven through chromium-driver by selenium."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

SOURCE_DIR = os.environ.get('CAFFE_SOURCE_DIR', os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
BINARY_DIR = os.environ.get('CAFFE_BINARY_DIR', os.path.join(SOURCE_DIR, 'build'))
WEB_DIR = os.path.join(SOURCE_DIR, 'web')
sys.path.insert(0, WEB_DIR)
sys.path.insert(0, os.path.join(BINARY_DIR, 'python'))
DIGITS_DIR = os.path.join(SOURCE_DIR, 'data', 'digits')

from caffe_web.local_server import (CHROMEDRIVER, CHROMIUM, LocalServer,  # noqa: E402
                                    headless_chromium)


class Server(LocalServer):
    def __init__(self, jobs, data, extra=()):
        super().__init__(jobs, data, BINARY_DIR, extra)


def stop_jobs(jobs):
    """Ends every runner and tool the test's jobs left running (by the pids in their state)."""
    import json
    for name in os.listdir(jobs):
        try:
            with open(os.path.join(jobs, name, 'state.json')) as source:
                state = json.load(source)
        except (OSError, ValueError):
            continue
        for key in ('child', 'runner'):
            process = state.get(key)
            if process:
                try:
                    import psutil
                    if abs(psutil.Process(process['pid']).create_time() - process['start']) < 0.01:
                        os.kill(process['pid'], signal.SIGKILL)
                except Exception:
                    pass


@pytest.fixture(scope='session')
def tools_built():
    for tool in ('caffe', 'convert_imageset', 'compute_image_mean', 'caffe_db',
                 'upgrade_net_proto_text'):
        if not os.path.isfile(os.path.join(BINARY_DIR, 'bin', tool)):
            pytest.skip('no {} in {}/bin (build Caffe first)'.format(tool, BINARY_DIR))
    if not os.path.isdir(os.path.join(BINARY_DIR, 'python', 'caffe')):
        pytest.skip('pycaffe is not built in {}/python'.format(BINARY_DIR))
    for module, package in (('flask', 'python3-flask'), ('psutil', 'python3-psutil'),
                            ('lmdb', 'python3-lmdb'), ('PIL', 'python3-pil')):
        pytest.importorskip(module, reason='the web server needs {} '
                            '(scripts/install_deps.sh)'.format(package))


def read_idx(prefix):
    with open(os.path.join(DIGITS_DIR, prefix + '-images-idx3-ubyte'), 'rb') as source:
        data = source.read()
    count, height, width = np.frombuffer(data[4:16], '>u4')
    images = np.frombuffer(data[16:], np.uint8).reshape(count, height, width)
    with open(os.path.join(DIGITS_DIR, prefix + '-labels-idx1-ubyte'), 'rb') as source:
        labels = np.frombuffer(source.read()[8:], np.uint8)
    return images, labels


@pytest.fixture(scope='session')
def digits():
    """The bundled digits (data/digits/get_digits.sh fetches them where missing): (train
    images, labels), (test images, labels)."""
    if not os.path.isfile(os.path.join(DIGITS_DIR, 'train-images-idx3-ubyte')):
        result = subprocess.run([os.path.join(DIGITS_DIR, 'get_digits.sh')],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if result.returncode != 0:
            pytest.skip('the bundled digits could not be fetched: ' +
                        result.stdout.decode('utf-8', 'replace').strip().splitlines()[-1])
    return read_idx('train'), read_idx('t10k')


def write_class_folders(folder, images, labels, names=None):
    """PNGs in one subfolder per class (as digits.download_data lays them out); returns the
    [(path, label)] written."""
    from PIL import Image
    written = []
    for index, (image, label) in enumerate(zip(images, labels)):
        name = names[label] if names else str(label)
        subfolder = os.path.join(folder, name)
        os.makedirs(subfolder, exist_ok=True)
        path = os.path.join(subfolder, '{:05d}.png'.format(index))
        Image.fromarray(image).save(path)
        written.append((path, int(label)))
    return written


@pytest.fixture(scope='module')
def workspace():
    """A data root and a jobs folder, removed afterwards (processes ended first; kept with
    CAFFE_WEB_KEEP=1)."""
    folder = tempfile.mkdtemp(prefix='caffe-web-test-')
    data, jobs = os.path.join(folder, 'data'), os.path.join(folder, 'jobs')
    os.makedirs(data)
    os.makedirs(jobs)
    yield data, jobs
    stop_jobs(jobs)
    if os.environ.get('CAFFE_WEB_KEEP'):  # for a look at the jobs and the server's log
        print('caffe web test: kept', folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope='module')
def browser():
    """Headless chromium (Debian's chromium + chromium-driver) with a fresh profile."""
    pytest.importorskip('selenium.webdriver', reason='browser tests need python3-selenium')
    for program, package in ((CHROMIUM, 'chromium'), (CHROMEDRIVER, 'chromium-driver')):
        if not os.path.isfile(program):
            pytest.skip('browser tests need {} ({}; scripts/install_deps.sh)'.format(
                program, package))
    driver, profile = headless_chromium()
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait_for(condition, timeout, what, interval=0.2):
    """Polls `condition()` until it returns something true; fails naming `what`."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = condition()
            if last:
                return last
        except Exception as error:  # the page may be between loads
            last = error
        time.sleep(interval)
    raise AssertionError('timed out after {} s waiting for {} (last: {!r})'.format(
        timeout, what, last))


def fill_form(driver, values):
    """Types `values` into the form fields of those names (selects: by value)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    for name, value in values.items():
        field = driver.find_element(By.NAME, name)
        if field.tag_name == 'select':
            Select(field).select_by_value(str(value))
        elif field.get_attribute('type') == 'checkbox':
            if bool(value) != field.is_selected():
                field.click()
        elif field.get_attribute('type') == 'file':
            field.send_keys(value)
        else:
            field.clear()
            field.send_keys(str(value))


def screenshot(driver, name):
    """Saves the page as <name>.png (in $CAFFE_WEB_SCREENSHOTS, else the temporary folder) and
    checks that it is not blank: many colours, and neither all light nor all dark."""
    from PIL import Image
    folder = os.environ.get('CAFFE_WEB_SCREENSHOTS') or os.path.join(tempfile.gettempdir(),
                                                                      'caffe-web-screenshots')
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name + '.png')
    driver.save_screenshot(path)
    with Image.open(path) as image:
        pixels = np.asarray(image.convert('RGB'), dtype=np.float32)
    colours = len(np.unique(pixels.reshape(-1, 3)[::7], axis=0))
    assert colours > 50 and 5 < pixels.std() and pixels.mean() < 250, \
        '{} looks blank: {} colours, std {:.1f}, mean {:.1f}'.format(path, colours,
                                                                    pixels.std(), pixels.mean())
    return path
