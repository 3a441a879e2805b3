"""Must-show 1: the whole DIGITS workflow in a real browser (headless chromium): a dataset from
a folder of class subfolders of PNGs (the bundled digits), its images-per-class chart and
Explore DB; LeNet trained on the CPU with the loss graph read from the page as it grows; stop,
resume, and the final weights equal to those of a clone that ran without a stop; Classify one
and Classify many (whose accuracy equals `caffe test`'s on the same files); a screenshot of
each page, checked not to be blank."""
import os
import re
import subprocess
import tarfile

import numpy as np
import pytest

from conftest import (BINARY_DIR, Server, fill_form, screenshot, wait_for,
                      write_class_folders)

TRAIN_IMAGES = 1000   # of the bundled 1500 training digits
VAL_IMAGES = 200      # of the 297 test digits: 4 batches of 50
BATCH = 50
EPOCHS = 40           # 20 iterations an epoch: 800 in all, 10-20 s of LeNet here
SEED = 1701


@pytest.fixture(scope='module')
def server(tools_built, digits, workspace):
    data, jobs = workspace
    (train_images, train_labels), (test_images, test_labels) = digits
    write_class_folders(os.path.join(data, 'digits', 'train'), train_images[:TRAIN_IMAGES],
                        train_labels[:TRAIN_IMAGES])
    val = write_class_folders(os.path.join(data, 'digits', 'val'), test_images[:VAL_IMAGES],
                              test_labels[:VAL_IMAGES])
    with open(os.path.join(data, 'val_list.txt'), 'w') as listing:
        listing.write(''.join('{} {}\n'.format(os.path.relpath(path, data), label)
                              for path, label in val))
    server = Server(jobs, data).start()
    yield server
    server.kill()


def by_css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def status_of(driver):
    return by_css(driver, '#job-status')[0].text


def test_dataset_model_classify_in_a_browser(server, browser, workspace, digits):
    data, jobs = workspace
    (train_images, train_labels), _ = digits
    driver = browser
    driver.get(server.url + '/')
    screenshot(driver, 'home_empty')

    # --- New dataset: the digits' class folders, a separate validation folder, 28x28 gray.
    driver.get(server.url + '/datasets/new')
    fill_form(driver, {'train_folder': 'digits/train', 'val_folder': 'digits/val',
                       'val_percent': '0', 'image_type': 'gray', 'width': 28, 'height': 28,
                       'resize_mode': 'squash', 'encoding': 'png', 'name': 'digits'})
    screenshot(driver, 'dataset_new')
    by_css(driver, '#create')[0].click()
    wait_for(lambda: '/datasets/' in driver.current_url, 30, 'the dataset page')
    dataset_id = driver.current_url.rstrip('/').split('/')[-1]
    # Each stage appears, live, and the job ends done with its charts.
    wait_for(lambda: status_of(driver) == 'done', 120, 'the dataset job to be done')
    stages = [row.get_attribute('data-stage') for row in by_css(driver, '#stages tr[data-stage]')]
    assert stages == ['Create DB (train)', 'Create DB (val)', 'Compute mean',
                      'Count labels (train)', 'Count labels (val)'], stages
    wait_for(lambda: by_css(driver, '#counts-train tr[data-class]'), 20, 'the class counts')
    expected_train = np.bincount(train_labels[:TRAIN_IMAGES], minlength=10)
    shown = {row.get_attribute('data-class'): int(row.get_attribute('data-count'))
             for row in by_css(driver, '#counts-train tr[data-class]')}
    assert shown == {str(d): int(expected_train[d]) for d in range(10)}
    shown_val = sum(int(row.get_attribute('data-count'))
                    for row in by_css(driver, '#counts-val tr[data-class]'))
    assert shown_val == VAL_IMAGES
    wait_for(lambda: driver.execute_script(
        "const i = document.getElementById('mean-image'); return i.complete && "
        "i.naturalWidth === 28;"), 20, 'the mean image')
    assert driver.execute_script('return window.caffeWeb.charts.train.data.datasets[0].data') \
        == [int(c) for c in expected_train]
    screenshot(driver, 'dataset')

    # --- Explore DB: the records of class 3, as stored (PNG), with their labels.
    assert by_css(driver, '#explore-train')[0].get_attribute('href').endswith(
        '/datasets/{}/explore?split=train'.format(dataset_id))
    driver.get(server.url + '/datasets/{}/explore?split=train&label=3'.format(dataset_id))
    total = int(by_css(driver, '#total')[0].get_attribute('data-total'))
    assert total == expected_train[3]
    records = by_css(driver, '#records figure')
    assert len(records) == min(30, total)
    assert {record.get_attribute('data-label') for record in records} == {'3'}
    assert driver.execute_script(
        "return Array.from(document.querySelectorAll('#records img')).every("
        "i => i.complete && i.naturalWidth === 28 && i.src.startsWith('data:image/png'));")
    screenshot(driver, 'explore')

    # --- New model: LeNet, on the CPU (no GPU choice on a machine without one).
    driver.get(server.url + '/models/new?dataset=' + dataset_id)
    assert by_css(driver, '#cpu-only') and not by_css(driver, '#gpu-options')
    model_form = {'dataset': dataset_id, 'network': 'lenet', 'epochs': EPOCHS,
                  'batch_size': BATCH, 'base_lr': '0.01', 'lr_policy': 'step',
                  'step_percent': '50', 'gamma': '0.5', 'snapshot_epochs': '10',
                  'val_epochs': '5', 'random_seed': SEED, 'name': 'lenet stopped'}
    fill_form(driver, model_form)
    screenshot(driver, 'model_new')
    by_css(driver, '#create')[0].click()
    wait_for(lambda: '/models/' in driver.current_url, 60, 'the model page')
    model_id = driver.current_url.rstrip('/').split('/')[-1]

    # The loss graph gains points while it trains, read from the chart in the page.
    def points():
        return driver.execute_script(
            "const c = window.caffeWeb.charts.loss; return c ? c.data.datasets.reduce("
            "(s, d) => s + d.data.length, 0) : 0;")
    first = wait_for(lambda: points() >= 2 and points(), 120, 'the first graph points')
    wait_for(lambda: points() > first, 60, 'the graph to gain points')
    wait_for(lambda: by_css(driver, '#pid')[0].text.isdigit(), 20, 'the process id')
    screenshot(driver, 'model_training')

    # Stop (SIGINT: a snapshot, as Ctrl-C), then resume from it.
    by_css(driver, '#stop')[0].click()
    wait_for(lambda: status_of(driver) == 'stopped', 60, 'the job to stop')
    train_log = open(os.path.join(jobs, model_id, 'train.log')).read()
    stopped_at = int(re.findall(r'Snapshotting solver state to binary proto file .*'
                                r'snapshot_iter_(\d+)\.solverstate', train_log)[-1])
    assert 0 < stopped_at < EPOCHS * TRAIN_IMAGES // BATCH, stopped_at
    wait_for(lambda: by_css(driver, '#resume')[0].is_displayed(), 10, 'the Resume button')
    by_css(driver, '#resume')[0].click()
    wait_for(lambda: status_of(driver) == 'done', 180, 'the resumed job to finish')
    train_log = open(os.path.join(jobs, model_id, 'train.log')).read()
    assert 'snapshot_iter_{}.solverstate'.format(stopped_at) in train_log
    final_iteration = EPOCHS * TRAIN_IMAGES // BATCH
    wait_for(lambda: driver.execute_script(
        "return document.getElementById('snapshot-select').options[0].textContent") ==
        'Epoch #{}'.format(EPOCHS), 20, 'the last snapshot in Select model')

    # Clone (the same form, filled), run without a stop: the same final weights. This one
    # records a timeline of iterations 2 to 5.
    driver.get(server.url + '/models/new?clone=' + model_id)
    assert by_css(driver, 'input[name=random_seed]')[0].get_attribute('value') == str(SEED)
    fill_form(driver, {'name': 'lenet uninterrupted', 'timeline_iters': '2:6'})
    by_css(driver, '#create')[0].click()
    wait_for(lambda: '/models/' in driver.current_url and model_id not in driver.current_url,
             60, 'the clone\'s page')
    clone_id = driver.current_url.rstrip('/').split('/')[-1]
    wait_for(lambda: status_of(driver) == 'done', 180, 'the clone to finish')
    weights = [os.path.join(jobs, job, 'snapshot_iter_{}.caffemodel'.format(final_iteration))
               for job in (model_id, clone_id)]
    import caffe
    nets = [caffe.Net(os.path.join(jobs, model_id, 'deploy.prototxt'), caffe.TEST, weights=w)
            for w in weights]
    for name in nets[0].params:
        for stopped, uninterrupted in zip(nets[0].params[name], nets[1].params[name]):
            assert np.array_equal(stopped.data, uninterrupted.data), name
    screenshot(driver, 'model_done')
    # Its timeline: the table of iterations 2-5 and two of them drawn, in the page.
    driver.get(server.url + '/models/' + clone_id)
    table = by_css(driver, '#timeline-table')[0].text
    assert [line.split()[0] for line in table.splitlines()[1:6]] == ['2', '3', '4', '5',
                                                                      'average'], table
    wait_for(lambda: driver.execute_script(
        "const i = document.getElementById('timeline-drawing');"
        "return i.complete && i.naturalWidth > 0;"), 30, 'the timeline drawing')
    screenshot(driver, 'model_timeline')

    # --- Classify one: a training image, uploaded; its class comes first.
    driver.get(server.url + '/models/' + model_id)
    image_index = 7
    path = os.path.join(data, 'digits', 'train', str(train_labels[image_index]),
                        '{:05d}.png'.format(image_index))
    fill_form(driver, {'image_file': path, 'visualize': True})
    by_css(driver, '#classify-one')[0].click()
    wait_for(lambda: by_css(driver, '#top5 tr[data-label]'), 60, 'the top 5')
    top = by_css(driver, '#top5 tr[data-label]')
    assert len(top) == 5 and top[0].get_attribute('data-name') == str(train_labels[image_index])
    layers = {(layer.get_attribute('data-name'), layer.get_attribute('data-kind'))
              for layer in by_css(driver, '#layers .layer')}
    assert {('conv1', 'activation'), ('conv1', 'weights'), ('ip2', 'weights')} <= layers
    screenshot(driver, 'classify_one')

    # --- Classify many: the validation files; the accuracy is caffe test's on them.
    driver.get(server.url + '/models/' + model_id)
    fill_form(driver, {'list_path': 'val_list.txt'})
    by_css(driver, '#classify-many')[0].click()
    accuracy = float(wait_for(lambda: by_css(driver, '#accuracy'), 60, 'the accuracy')[0]
                     .get_attribute('data-value'))
    assert len(by_css(driver, '#confusion tr')) == 11
    screenshot(driver, 'classify_many')
    result = subprocess.run(
        [os.path.join(BINARY_DIR, 'bin', 'caffe'), 'test', '-model',
         os.path.join(jobs, model_id, 'train_val.prototxt'), '-weights', weights[0],
         '-iterations', str(VAL_IMAGES // BATCH)], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    output = result.stdout.decode('utf-8', 'replace')
    assert result.returncode == 0, output
    tested = float(re.findall(r'\] accuracy = ([0-9.]+)', output)[-1])
    assert abs(accuracy - tested) < 1e-6, (accuracy, tested)
    assert accuracy > 0.5, accuracy

    # --- Download: deploy, weights, mean, labels that classification.bin takes unchanged.
    archive_path = os.path.join(data, 'model.tar.gz')
    with open(archive_path, 'wb') as output_file:
        import urllib.request
        output_file.write(urllib.request.urlopen(
            server.url + '/models/{}/download?iteration={}'.format(model_id, final_iteration))
            .read())
    unpacked = os.path.join(data, 'model')
    with tarfile.open(archive_path) as archive:
        archive.extractall(unpacked)
    classification = os.path.join(BINARY_DIR, 'examples', 'cpp_classification',
                                  'classification.bin')
    if os.path.isfile(classification):
        result = subprocess.run([classification] + [os.path.join(unpacked, name) for name in (
            'deploy.prototxt', 'snapshot_iter_{}.caffemodel'.format(final_iteration),
            'mean.binaryproto', 'labels.txt')] + [path], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        output = result.stdout.decode('utf-8', 'replace')
        assert result.returncode == 0, output
        first_line = [line for line in output.splitlines() if ' - "' in line][0]
        assert first_line.endswith('"{}"'.format(train_labels[image_index])), output

    # --- The home page lists both, newest first, done.
    driver.get(server.url + '/')
    rows = by_css(driver, '#models tr[data-id]')
    assert [row.get_attribute('data-id') for row in rows] == [clone_id, model_id]
    assert {row.get_attribute('data-status') for row in rows} == {'done'}
    screenshot(driver, 'home')
