"""Must-show 3: each bad input gets a message in the page naming the field, and the server goes
on: dataset folders outside the data root (an absolute path, '..', a symbolic link), an empty
folder, one class, a corrupt image among good ones (named in the job's page, the rest converted),
a prototxt with a typo (the engine's error with its line), a learning rate that is not a number,
GPUs asked of a machine without any, an upload that is not an image, and one over the size
limit."""
import os

import pytest

from conftest import Server, fill_form, wait_for, write_class_folders

UPLOAD_LIMIT_MB = 1


@pytest.fixture(scope='module')
def server(tools_built, digits, workspace):
    data, jobs = workspace
    (images, labels), _ = digits
    write_class_folders(os.path.join(data, 'small'), images[:200], labels[:200])
    # Corrupt: a PNG name with bytes that are no image, among good ones.
    good = write_class_folders(os.path.join(data, 'corrupt'), images[:40], labels[:40] % 2,
                               names=['even', 'odd'])
    with open(os.path.join(data, 'corrupt', 'odd', 'broken.png'), 'wb') as broken:
        broken.write(b'\x89PNG\r\n\x1a\n this is not an image')
    os.makedirs(os.path.join(data, 'empty'))
    write_class_folders(os.path.join(data, 'oneclass'), images[:5], [0] * 5, names=['zero'])
    outside = os.path.join(os.path.dirname(data), 'outside')
    write_class_folders(outside, images[:4], [0, 1, 0, 1])
    os.symlink(outside, os.path.join(data, 'link'))
    with open(os.path.join(data, 'notes.txt'), 'w') as text:
        text.write('not an image\n')
    with open(os.path.join(data, 'big.bin'), 'wb') as big:
        big.write(os.urandom((UPLOAD_LIMIT_MB + 1) * 1024 * 1024))
    server = Server(jobs, data, ['--max-upload-mb', str(UPLOAD_LIMIT_MB)]).start()
    server.good_corrupt = len(good)
    yield server
    server.kill()


def by_css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def submit_dataset(driver, server, values):
    driver.get(server.url + '/datasets/new')
    fill_form(driver, dict({'width': 28, 'height': 28, 'image_type': 'gray', 'name': 'bad'},
                           **values))
    by_css(driver, '#create')[0].click()


def form_error(driver):
    found = wait_for(lambda: by_css(driver, '#form-error, #error-message'), 30, 'an error')
    return found[0].text


@pytest.mark.parametrize('folder, message', [
    ('/etc', "Training images: '/etc' is outside the data root"),
    ('small/../../outside', "Training images: 'small/../../outside' contains '..'"),
    ('link', "Training images: 'link' is outside the data root"),
    ('empty', "Training images: 'empty' has no class subfolders holding images"),
    ('oneclass', "Training images: 'oneclass' has 1 class (zero); a classifier needs at least 2"),
    ('missing', "Training images: 'missing' is not a folder under the data root"),
])
def test_dataset_folder_errors_name_the_field(server, browser, folder, message):
    submit_dataset(browser, server, {'train_folder': folder})
    assert form_error(browser).startswith(message), form_error(browser)
    # The form keeps what was typed, and the server goes on.
    assert by_css(browser, 'input[name=train_folder]')[0].get_attribute('value') == folder
    assert 'Datasets' in server.get('/')


def test_bad_number_names_the_field(server, browser):
    submit_dataset(browser, server, {'train_folder': 'small', 'width': 'wide'})
    assert form_error(browser) == "Image width: 'wide' is not a whole number"


@pytest.fixture(scope='module')
def small_dataset(server, browser):
    submit_dataset(browser, server, {'train_folder': 'small', 'val_percent': '20',
                                     'name': 'small'})
    wait_for(lambda: by_css(browser, '#job-status')[0].text == 'done', 120, 'the dataset')
    return browser.current_url.rstrip('/').split('/')[-1]


def test_corrupt_image_is_named_and_the_rest_converted(server, browser):
    submit_dataset(browser, server, {'train_folder': 'corrupt', 'val_percent': '0',
                                     'name': 'corrupt'})
    wait_for(lambda: by_css(browser, '#job-status')[0].text == 'done', 120, 'the dataset')
    skipped = wait_for(lambda: by_css(browser, '#skipped li'), 20, 'the skipped images')
    assert len(skipped) == 1 and 'odd/broken.png' in skipped[0].text, skipped[0].text
    counts = sum(int(row.get_attribute('data-count'))
                 for row in by_css(browser, '#counts-train tr[data-class]'))
    assert counts == server.good_corrupt


def submit_model(driver, server, dataset, values):
    driver.get(server.url + '/models/new?dataset=' + dataset)
    fill_form(driver, dict({'dataset': dataset, 'network': 'lenet', 'epochs': 1,
                            'batch_size': 20, 'name': 'bad model'}, **values))
    by_css(driver, '#create')[0].click()


TYPO_NET = """name: "typo"
layer {
  name: "data" type: "Data" top: "data" top: "label"
  include { phase: TRAIN }
  data_param { batch_size: 20 }
}
layer {
  name: "ip" tpye: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 2 }
}
"""


def test_prototxt_typo_shows_the_engines_error_with_its_line(server, browser, small_dataset):
    submit_model(browser, server, small_dataset, {'network': 'custom',
                                                  'custom_network': TYPO_NET})
    message = form_error(browser)
    assert message.startswith('Custom network: custom.prototxt:8:'), message
    assert 'tpye' in message, message


def test_non_numeric_learning_rate_names_the_field(server, browser, small_dataset):
    submit_model(browser, server, small_dataset, {'base_lr': 'fast'})
    assert form_error(browser) == "Base learning rate: 'fast' is not a number"


def test_gpus_on_a_machine_without_one_are_refused(server, small_dataset):
    import urllib.error
    import urllib.parse
    import urllib.request
    form = urllib.parse.urlencode({'dataset': small_dataset, 'network': 'lenet', 'name': 'gpu',
                                   'gpus': '0'}).encode()
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(server.url + '/models/new', form, timeout=60)
    assert error.value.code == 400
    assert 'GPUs: this machine has no GPU' in error.value.read().decode()


@pytest.fixture(scope='module')
def trained_model(server, browser, small_dataset):
    submit_model(browser, server, small_dataset, {'epochs': 1, 'name': 'tiny'})
    wait_for(lambda: by_css(browser, '#job-status')[0].text == 'done', 180, 'the model')
    return browser.current_url.rstrip('/').split('/')[-1]


def test_upload_that_is_not_an_image_names_the_field(server, browser, workspace, trained_model):
    data, _ = workspace
    browser.get(server.url + '/models/' + trained_model)
    fill_form(browser, {'image_file': os.path.join(data, 'notes.txt')})
    by_css(browser, '#classify-one')[0].click()
    assert form_error(browser).startswith("Image file: 'notes.txt' is not an image")


def test_upload_over_the_size_limit_is_refused(server, browser, workspace, trained_model):
    data, _ = workspace
    browser.get(server.url + '/models/' + trained_model)
    fill_form(browser, {'image_file': os.path.join(data, 'big.bin')})
    by_css(browser, '#classify-one')[0].click()
    assert form_error(browser).startswith(
        "Upload: the request is larger than this server's limit of {} MB".format(
            UPLOAD_LIMIT_MB))
    assert 'Models' in server.get('/')
