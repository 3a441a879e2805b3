"""A server of this package as a child process on a free port of 127.0.0.1, and headless
chromium to look at it: what the browser tests (web/test) and the benchmark
(benchmarks/web_graph.py) drive."""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

WEB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM, CHROMEDRIVER = '/usr/bin/chromium', '/usr/bin/chromedriver'


def free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class LocalServer(object):
    """`python3 -m caffe_web` in a session of its own (the jobs it starts outlive it, as they
    would a real server's death)."""

    def __init__(self, jobs, data, build, extra=()):
        self.jobs, self.data, self.build, self.extra = jobs, data, build, list(extra)
        self.port = free_port()
        self.url = 'http://127.0.0.1:{}'.format(self.port)
        self.process = None
        self.log_path = os.path.join(os.path.dirname(os.path.abspath(jobs)),
                                     'server-{}.log'.format(self.port))

    def start(self, timeout=60):
        environment = dict(os.environ)
        environment['PYTHONPATH'] = os.pathsep.join([WEB_DIR, os.path.join(self.build,
                                                                             'python')])
        with open(self.log_path, 'ab') as log:
            self.process = subprocess.Popen(
                [sys.executable, '-m', 'caffe_web', '--port', str(self.port), '--jobs',
                 self.jobs, '--data', self.data, '--build', self.build] + self.extra,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=environment)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                urllib.request.urlopen(self.url + '/', timeout=5).read()
                return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError('the server exited: see ' + self.log_path)
                time.sleep(0.2)
        raise RuntimeError('the server did not answer in {} s: see {}'.format(
            timeout, self.log_path))

    def kill(self, number=signal.SIGKILL):
        """Ends the server process alone (kill -9 by default)."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(number)
            self.process.wait(30)

    def get(self, path, timeout=30):
        return urllib.request.urlopen(self.url + path, timeout=timeout).read().decode()


def headless_chromium():
    """(driver, profile folder): Debian's chromium through chromium-driver, headless, with a
    fresh profile and nothing that reaches the network."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    profile = tempfile.mkdtemp(prefix='caffe-web-chromium-')
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                 '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run', '--window-size=1280,1000',
                 '--user-data-dir=' + profile):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    return driver, profile
