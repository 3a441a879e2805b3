"""DIGITS's four resize modes, on PIL images: squash (stretch to the size), crop (scale to cover
it, cut the middle), fill (scale to fit inside it, pad with noise) and half crop-half fill (a
scale halfway between the two: half the difference cut, half padded). The dataset job runs them
as a stage before convert_imageset for every mode but squash (which convert_imageset does
itself); classification runs the dataset's mode on each image it is given."""
import os
import random

import numpy as np
from PIL import Image

MODES = ('squash', 'crop', 'fill', 'half_crop')
IMAGE_EXTENSIONS = ('.png', '.jpg', '.jpeg', '.bmp', '.ppm', '.pgm', '.tif', '.tiff', '.webp')


def _noise(width, height, mode, seed):
    generator = np.random.RandomState(seed)
    channels = 1 if mode == 'L' else 3
    pixels = generator.randint(0, 256, size=(height, width, channels), dtype=np.uint8)
    return Image.fromarray(pixels[:, :, 0] if channels == 1 else pixels, mode)


def resize_image(image, width, height, mode, color, seed=0):
    """`image` (PIL) converted to RGB (color) or L and brought to width x height by `mode`."""
    image = image.convert('RGB' if color else 'L')
    if image.size == (width, height):
        return image
    if mode == 'squash':
        return image.resize((width, height), Image.BILINEAR)
    cover = max(width / image.width, height / image.height)
    fit = min(width / image.width, height / image.height)
    scale = {'crop': cover, 'fill': fit, 'half_crop': (cover + fit) / 2}[mode]
    scaled = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                          Image.BILINEAR)
    canvas = _noise(width, height, scaled.mode, seed)
    # Centre the scaled image on the canvas; where it is larger, its middle is kept.
    left, top = (width - scaled.width) // 2, (height - scaled.height) // 2
    canvas.paste(scaled, (left, top))
    return canvas


def resize_list_stage(data_root, list_path, out_folder, out_list, width, height, mode, color,
                      label_of_line=None):
    """A runner stage (run(log_path, should_stop) -> exit code) that writes each image of the
    list file `list_path` ("path label", paths under `data_root`) resized into `out_folder` as
    PNG and the list of those into `out_list`; unreadable images are skipped with
    convert_imageset's warning line, and progress is logged in its form."""
    def run(log_path, should_stop):
        with open(list_path) as source:
            entries = [line.rstrip('\n').rsplit(' ', 1) for line in source if line.strip()]
        os.makedirs(out_folder, exist_ok=True)
        step = max(1, len(entries) // 50)
        written = 0
        with open(log_path, 'a') as log, open(out_list + '.partial', 'w') as listing:
            for number, (path, label) in enumerate(entries, 1):
                if should_stop():
                    return 1
                name = '{:08d}.png'.format(number)
                try:
                    with Image.open(os.path.join(data_root, path)) as image:
                        resize_image(image, width, height, mode, color,
                                     seed=number).save(os.path.join(out_folder, name))
                except Exception as error:  # PIL raises many types for a bad file
                    log.write("W skipping line {} of '{}': cannot read image '{}': {}\n".format(
                        number, list_path, path, error))
                    continue
                listing.write('{} {}\n'.format(name, label))
                written += 1
                if number % step == 0 or number == len(entries):
                    log.write('I Processed {} files ({} of {} lines, {}%).\n'.format(
                        written, number, len(entries), 100 * number // len(entries)))
                    log.flush()
        os.replace(out_list + '.partial', out_list)
        return 0 if written else 1
    return run


def shuffled(items, seed):
    items = list(items)
    random.Random(seed).shuffle(items)
    return items
