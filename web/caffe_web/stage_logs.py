"""What a stage's log tells the page: progress in percent (convert_imageset's and
compute_image_mean's "Processed N files" lines), the images skipped as unreadable, the label
histogram caffe_db prints, and the one line that says why a stage failed."""
import re

_PROCESSED_OF = re.compile(r'Processed (\d+) files \((\d+) of (\d+) lines')
_PROCESSED = re.compile(r'Processed (\d+) files\.')
_SKIPPED = re.compile(r"skipping line (\d+) of '([^']*)': (.*)$")
_GLOG = re.compile(r'^[IWEF]\d{4,8} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]+\] ')


def read_lines(path):
    try:
        with open(path, errors='replace') as log:
            return log.read().splitlines()
    except FileNotFoundError:
        return []


def progress(path, total=None):
    """The fraction done (0..1) of a stage whose log is `path`, or None when it says nothing yet.
    `total`: the count of records a stage works through, for logs that only count
    (compute_image_mean)."""
    fraction = None
    for line in read_lines(path):
        found = _PROCESSED_OF.search(line)
        if found:
            fraction = int(found.group(2)) / max(1, int(found.group(3)))
            continue
        found = _PROCESSED.search(line)
        if found and total:
            fraction = min(1.0, int(found.group(1)) / total)
    return fraction


def skipped_images(path):
    """[(line number, message)] for each image the stage skipped as unreadable."""
    skipped = []
    for line in read_lines(path):
        found = _SKIPPED.search(line)
        if found:
            skipped.append((int(found.group(1)), found.group(3)))
    return skipped


def label_counts(lines):
    """caffe_db stats's "labels (N distinct):" block -> {label: count}."""
    counts = {}
    inside = False
    for line in lines:
        if line.startswith('labels ('):
            inside = True
            continue
        if inside:
            found = re.match(r'^  (-?\d+): (\d+)$', line)
            if not found:
                break
            counts[int(found.group(1))] = int(found.group(2))
    return counts


def error_line(path):
    """The line that says why a stage failed: the last "tool: message" line our tools print on
    stderr, else the last glog error (E/F), else the log's last line."""
    lines = [line for line in read_lines(path) if line.strip() and not line.startswith('# ')]
    for line in reversed(lines):
        if not _GLOG.match(line) and re.match(r'^[\w./-]+: ', line):
            return line.strip()
    for line in reversed(lines):
        if line[:1] in ('E', 'F') and _GLOG.match(line):
            return _GLOG.sub('', line).strip()
    return lines[-1].strip() if lines else 'it ended without a message (exit status in the log)'
