"""Form values: each bad one raises FormError naming the field, what was found and what was
expected; the page shows that line beside the form, and the server goes on. Paths must resolve
under the data root, through any symbolic link."""
import math
import os


class FormError(Exception):
    def __init__(self, field, message):
        super().__init__('{}: {}'.format(field, message))
        self.field = field
        self.message = message


def text(form, field, label, default=None, required=True):
    value = (form.get(field) or '').strip()
    if not value:
        if default is not None or not required:
            return default
        raise FormError(label, 'is empty; it is required')
    return value


def number(form, field, label, default=None, minimum=None, maximum=None, integer=False,
           required=True):
    raw = (form.get(field) or '').strip()
    if not raw:
        if default is not None or not required:
            return default
        raise FormError(label, 'is empty; give a number')
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise FormError(label, "'{}' is not {}".format(
            raw, 'a whole number' if integer else 'a number')) from None
    if not integer and not math.isfinite(value):
        raise FormError(label, "'{}' is not a finite number".format(raw))
    if minimum is not None and value < minimum:
        raise FormError(label, '{} is below the least allowed, {}'.format(raw, minimum))
    if maximum is not None and value > maximum:
        raise FormError(label, '{} is above the most allowed, {}'.format(raw, maximum))
    return value


def choice(form, field, label, choices, default=None):
    value = (form.get(field) or '').strip() or default
    if value not in choices:
        raise FormError(label, "'{}' is not one of {}".format(value, ', '.join(choices)))
    return value


def is_under(root, real_path):
    return real_path == root or real_path.startswith(root.rstrip(os.sep) + os.sep)


def path_under_root(root, raw, label, kind='folder'):
    """The real path of `raw` (absolute, or relative to the data root `root`), which must be
    under `root` after every symbolic link is followed, contain no '..', and be a `kind`
    ('folder' or 'file')."""
    raw = (raw or '').strip()
    if not raw:
        raise FormError(label, 'is empty; give a {} under the data root {}'.format(kind, root))
    if '\x00' in raw:
        raise FormError(label, 'contains a NUL character')
    if '..' in raw.replace('\\', '/').split('/'):
        raise FormError(label, "'{}' contains '..'; give a {} under the data root {}".format(
            raw, kind, root))
    real = os.path.realpath(raw if os.path.isabs(raw) else os.path.join(root, raw))
    if not is_under(root, real):
        raise FormError(label, "'{}' is outside the data root {} (it resolves to {})".format(
            raw, root, real))
    if kind == 'folder' and not os.path.isdir(real):
        raise FormError(label, "'{}' is not a folder under the data root {}".format(raw, root))
    if kind == 'file' and not os.path.isfile(real):
        raise FormError(label, "'{}' is not a file under the data root {}".format(raw, root))
    return real
