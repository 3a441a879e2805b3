#!/usr/bin/env python3
"""Downloads a model's trained weights into its folder and checks their SHA-1.

    python3 scripts/download_model_binary.py models/bvlc_alexnet

The folder's readme.md starts with a front matter block (between two '---' lines) of
`key: value` lines; this reads `caffemodel` (the file name), `caffemodel_url` and `sha1` from it.
A file already there with the right SHA-1 is kept. A download whose SHA-1 differs is deleted and
the script fails. Exit status: 0 done, 1 failed (the reason on stderr), 2 bad arguments.
Standard library only.
"""
import argparse
import hashlib
import os
import sys
import time
import urllib.error
import urllib.request

REQUIRED_FIELDS = ("caffemodel", "caffemodel_url", "sha1")
CHUNK = 1 << 20


class Failure(Exception):
    """A failure to report to the user (one line) before exiting with status 1."""


def read_front_matter(readme):
    """The `key: value` pairs of the block between the first two '---' lines of `readme`."""
    try:
        with open(readme, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Failure("cannot read %s: %s" % (readme, e.strerror))
    if not lines or lines[0].strip() != "---":
        raise Failure("%s does not start with a front matter block ('---' on its first line)"
                      % readme)
    fields = {}
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return fields
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise Failure("%s:%d: expected 'key: value' in the front matter, got %r"
                          % (readme, number, line))
        fields[key.strip()] = value.strip().strip("'\"")
    raise Failure("%s: the front matter block has no closing '---' line" % readme)


def file_sha1(path):
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(url, destination, timeout):
    """Streams `url` into `destination`; returns the SHA-1 of what was written."""
    digest = hashlib.sha1()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, \
                open(destination, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0)
            done = 0
            last_report = 0.0
            while True:
                chunk = response.read(CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                now = time.monotonic()
                if sys.stderr.isatty() and now - last_report > 0.5:
                    last_report = now
                    share = " (%d%%)" % (100 * done // total) if total else ""
                    sys.stderr.write("\r%.1f MB%s" % (done / 1e6, share))
            if sys.stderr.isatty():
                sys.stderr.write("\n")
    except urllib.error.HTTPError as e:
        raise Failure("downloading %s failed: HTTP %d %s" % (url, e.code, e.reason))
    except urllib.error.URLError as e:
        raise Failure("cannot reach %s: %s (is this machine offline?)" % (url, e.reason))
    except (OSError, ValueError) as e:
        raise Failure("downloading %s failed: %s" % (url, e))
    return digest.hexdigest()


def fetch_model(model_dir, timeout):
    readme = os.path.join(model_dir, "readme.md")
    fields = read_front_matter(readme)
    missing = [key for key in REQUIRED_FIELDS if not fields.get(key)]
    if missing:
        raise Failure("%s: the front matter lacks %s (needs %s)"
                      % (readme, ", ".join(missing), ", ".join(REQUIRED_FIELDS)))
    name = fields["caffemodel"]
    if os.path.basename(name) != name or name in (".", ".."):
        raise Failure("%s: caffemodel must be a file name, not a path: %r" % (readme, name))
    expected = fields["sha1"].lower()
    target = os.path.join(model_dir, name)

    stale = os.path.exists(target)
    if stale:
        actual = file_sha1(target)
        if actual == expected:
            print("%s is already present, SHA-1 %s: nothing to do" % (target, actual))
            return
        print("%s is present but its SHA-1 is %s, not %s: downloading it again"
              % (target, actual, expected))

    partial = target + ".part"
    print("downloading %s to %s" % (fields["caffemodel_url"], target))
    try:
        actual = download(fields["caffemodel_url"], partial, timeout)
        if actual != expected:
            raise Failure("the download of %s has SHA-1 %s, but %s says %s; deleted it"
                          % (fields["caffemodel_url"], actual, readme, expected))
        os.replace(partial, target)
    except Failure as e:
        if stale:
            raise Failure("%s (the %s already there does not match either; left as it was)"
                          % (e, target))
        raise
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    print("%s: SHA-1 %s verified" % (target, actual))


def main():
    parser = argparse.ArgumentParser(
        description="Download a model's .caffemodel named in its readme.md and check its SHA-1.")
    parser.add_argument("model_dir", help="the model's folder, e.g. models/bvlc_alexnet")
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds to wait for the server at each step (default 60)")
    args = parser.parse_args()
    if not os.path.isdir(args.model_dir):
        print("download_model_binary: %s is not a folder" % args.model_dir, file=sys.stderr)
        return 1
    try:
        fetch_model(args.model_dir, args.timeout)
    except Failure as e:
        print("download_model_binary: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("download_model_binary: interrupted", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
