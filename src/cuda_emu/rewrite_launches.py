#!/usr/bin/env python3
"""Turns a .cu file into C++ for the CUDA emulator (docs/CUDA_EMU.md).

Each launch `kernel<<<config>>>(args)` becomes
    ::caffe_emu::Launch(::caffe_emu::MakeConfig(config), cooperative,
                        [&](auto&&... caffe_emu_a) { kernel(caffe_emu_a...); }, args)
(cuda_emu/launch.hpp). `cooperative` is true for kernels that synchronize their blocks: those
whose body calls __syncthreads or BlockReduce, or a function of the file or of a .cuh header it
includes that does (cooperative launches run each thread as a fiber, which costs far more than a
plain call). Headers are not rewritten, so they define kernels but never launch them. A #line
directive keeps compiler messages pointing at the .cu file.

Usage: rewrite_launches.py input.cu output.cpp [root]
(the #line names input.cu relative to `root`, so that the output is the same in every checkout
and ccache can share it between clones)
"""
import os
import re
import sys

SYNC_CALLS = ('__syncthreads', 'BlockReduce(')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+\.cuh)"', re.M)


def included_headers(text, directories, seen=None):
    """The text of the .cuh headers that `text` includes, directly or through one another,
    each looked for in `directories` in order."""
    seen = set() if seen is None else seen
    found = []
    for name in INCLUDE.findall(text):
        for directory in directories:
            path = os.path.normpath(os.path.join(directory, name))
            if os.path.isfile(path):
                if path not in seen:
                    seen.add(path)
                    with open(path) as f:
                        header = f.read()
                    found.append(header)
                    found.extend(included_headers(header, directories, seen))
                break
    return found


def function_bodies(text):
    """Maps each function defined in `text` to its body (every definition of the name)."""
    bodies = {}
    for match in re.finditer(r'\b([A-Za-z_]\w*)\s*\(', text):
        name = match.group(1)
        if name in ('if', 'for', 'while', 'switch', 'return', 'sizeof'):
            continue
        close = matching(text, match.end() - 1, strict=False)
        if close is None:
            continue
        after = close + 1
        while after < len(text) and (text[after].isspace() or text.startswith('const', after)):
            after += 5 if text.startswith('const', after) else 1
        if after >= len(text) or text[after] != '{':
            continue
        end = matching(text, after, '{}', strict=False)
        if end is not None:
            bodies.setdefault(name, []).append(text[after:end + 1])
    return bodies


def synchronizing_functions(text):
    """Names of the file's functions that reach a barrier, directly or through one another."""
    bodies = function_bodies(text)
    syncing = set()
    changed = True
    while changed:
        changed = False
        for name, texts in bodies.items():
            if name in syncing:
                continue
            if any(call in body for body in texts for call in SYNC_CALLS) or any(
                    re.search(r'\b%s\s*[<(]' % re.escape(other), body)
                    for body in texts for other in syncing):
                syncing.add(name)
                changed = True
    return syncing


def kernel_start(text, end):
    """Index where the kernel expression ending at `end` (exclusive) begins: an identifier,
    possibly qualified, possibly followed by template arguments."""
    k = end
    if text[k - 1] == '>':
        depth = 0
        while True:
            k -= 1
            if text[k] == '>':
                depth += 1
            elif text[k] == '<':
                depth -= 1
                if depth == 0:
                    break
        while k > 0 and text[k - 1].isspace():
            k -= 1
    while k > 0 and (text[k - 1].isalnum() or text[k - 1] in '_:'):
        k -= 1
    return k


def matching(text, open_index, pair='()', strict=True):
    """Index of the bracket closing the one at open_index. With strict=False, None when a brace
    or semicolon comes first (the parentheses were a call, not a parameter list)."""
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == pair[0]:
            depth += 1
        elif text[i] == pair[1]:
            depth -= 1
            if depth == 0:
                return i
        elif not strict and pair == '()' and text[i] in '{};':
            return None
    if strict:
        raise ValueError('unbalanced %s at offset %d' % (pair, open_index))
    return None


def rewrite(text, headers=()):
    """`text` with its launches rewritten; `headers` are the texts of the .cuh files it
    includes, whose kernels it may launch."""
    everything = '\n'.join([text] + list(headers))
    syncing = (synchronizing_functions(everything)
               if any(c in everything for c in SYNC_CALLS) else set())
    pieces = []
    position = 0
    while True:
        chevrons = text.find('<<<', position)
        if chevrons < 0:
            break
        end = chevrons
        while text[end - 1].isspace():
            end -= 1
        start = kernel_start(text, end)
        close = text.find('>>>', chevrons)
        paren = close + 3
        while text[paren].isspace():
            paren += 1
        if text[paren] != '(':
            raise ValueError('no argument list after the launch at offset %d' % chevrons)
        last = matching(text, paren)
        kernel = ' '.join(text[start:end].split())
        name = re.match(r'[\w:]*', kernel).group(0).split('::')[-1]
        cooperative = 'true' if name in syncing else 'false'
        config = ' '.join(text[chevrons + 3:close].split())
        args = text[paren + 1:last]
        launch = ('::caffe_emu::Launch(::caffe_emu::MakeConfig(%s), %s, '
                  '[&](auto&&... caffe_emu_a) { %s(caffe_emu_a...); }'
                  % (config, cooperative, kernel))
        # Keep the line count, so later lines keep their numbers.
        lost = text[start:paren + 1].count('\n')
        launch += '\n' * lost
        launch += (', ' + args if args.strip() else '') + ')'
        pieces.append(text[position:start])
        pieces.append(launch)
        position = last + 1
    pieces.append(text[position:])
    return ''.join(pieces)


def main():
    source, target = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else None
    shown = os.path.relpath(source, root) if root else source
    with open(source) as f:
        text = f.read()
    directories = [os.path.dirname(os.path.abspath(source))]
    if root:
        directories.append(os.path.join(root, 'include'))
    try:
        body = rewrite(text, included_headers(text, directories))
    except (ValueError, IndexError) as error:
        sys.exit('%s: %s' % (source, error))
    with open(target, 'w') as f:
        f.write('#line 1 "%s"\n' % shown)
        f.write(body)


if __name__ == '__main__':
    main()
