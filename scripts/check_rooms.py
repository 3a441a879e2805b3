#!/usr/bin/env python3
"""Checks the library's rooms (docs/ARCHITECTURE.md, "Rooms"): each file of include/caffe and
src/caffe may include only files of its own room and of the rooms below it, and the room rules
that go with them hold. Prints one line per broken rule and exits 1; 0 when all hold.

    scripts/check_rooms.py [CHECKOUT]        # default: the checkout this script is in
"""
import os
import re
import sys

# The rooms, lowest first. A room is a list of path prefixes relative to include/caffe and
# src/caffe (a prefix ending in '/' is a folder; otherwise a file stem, any extension).
ROOMS = [
    ("base", ["common", "log_prefix", "util/", "proto/"]),
    ("memory", ["memory/"]),
    ("kernels", ["kernels/"]),
    ("data", ["blob", "filler"]),
    ("io", ["io/"]),
    ("timeline", ["timeline/"]),
    ("layer", ["layer", "layer_factory", "layer_engine", "layer_fusion", "resumable_layer",
               "data_transformer"]),
    ("net", ["net", "net/"]),
    ("layers", ["layers/"]),
    ("engines", ["layers/cudnn/", "layers/dnnl/"]),
    ("lms", ["lms/"]),
    ("diagnostics", ["diagnostics/"]),
    ("solver", ["solver", "solver_factory", "sgd_solvers", "snapshot_files", "solvers/"]),
    ("parallel", ["parallel/"]),
    # caffe.hpp: the public interface in one include, above everything it includes.
    ("public", ["caffe"]),
]
LEVEL = {name: level for level, (name, _) in enumerate(ROOMS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"caffe/([^"]+)"')
# Where the library may read the environment (one place: docs/ENVIRONMENT.md).
ENVIRONMENT_READER = "util/environment.cpp"
GETENV = re.compile(r"\b(std::)?(getenv|secure_getenv)\s*\(")
# No source file over this many lines (tests, tools and the emulator included).
MAX_LINES = 800


def room_of(path):
    """The room of a path relative to include/caffe or src/caffe, or None (generated, tests)."""
    stem, _ = os.path.splitext(path)
    best = None
    for name, prefixes in ROOMS:
        for prefix in prefixes:
            matches = path.startswith(prefix) if prefix.endswith("/") else stem == prefix
            if matches and (best is None or len(prefix) > best[1]):
                best = (name, len(prefix))
    return best[0] if best else None


def library_files(root):
    for top in ("include/caffe", "src/caffe"):
        base = os.path.join(root, top)
        for folder, _, files in os.walk(base):
            relative_folder = os.path.relpath(folder, base)
            if relative_folder.split(os.sep)[0] == "test":
                continue
            for name in sorted(files):
                if name.endswith((".hpp", ".cpp", ".cu", ".cuh", ".h")):
                    path = os.path.normpath(os.path.join(relative_folder, name))
                    yield os.path.join(top, path), path


def check(root):
    problems = []
    for full, path in library_files(root):
        room = room_of(path)
        if room is None:
            problems.append(f"{full}: in no room (add it to scripts/check_rooms.py's ROOMS)")
            continue
        with open(os.path.join(root, full), encoding="utf-8") as source:
            lines = source.read().split("\n")
        for number, line in enumerate(lines, 1):
            match = INCLUDE.match(line)
            if match:
                target = match.group(1)
                target_room = room_of(target)
                if target_room is None or target_room == room:
                    continue
                if LEVEL[target_room] > LEVEL[room]:
                    problems.append(
                        f"{full}:{number}: room {room} includes caffe/{target} of room "
                        f"{target_room}, which is above it")
            if GETENV.search(line) and path != ENVIRONMENT_READER and not line.lstrip().startswith("//"):
                problems.append(
                    f"{full}:{number}: reads the environment; only src/caffe/{ENVIRONMENT_READER} "
                    f"does (docs/ENVIRONMENT.md)")
    return problems


def check_sizes(root):
    problems = []
    for top in ("include", "src", "tools", "python", "benchmarks", "examples"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".hpp", ".cpp", ".cu", ".cuh", ".h", ".py")):
                    continue
                full = os.path.join(folder, name)
                with open(full, encoding="utf-8", errors="replace") as source:
                    count = sum(1 for _ in source)
                if count > MAX_LINES:
                    problems.append(f"{os.path.relpath(full, root)}: {count} lines; the limit is "
                                    f"{MAX_LINES} (split it by what it does)")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    problems = check(root) + check_sizes(root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_rooms: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("check_rooms: every include goes down or sideways, the environment is read in one "
          "place, and no source file is over %d lines" % MAX_LINES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
