#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Sum a callgrind output's Ir by source line range (bench/run).

    cg_lines.py CALLGRIND_OUT SOURCE FIRST LAST

prints the Ir of the lines FIRST..LAST of SOURCE (inlined code included,
and the inclusive cost of calls made from those lines), then the total.
"""
import re
import sys


def main():
    out, src, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    names = {}
    cur_file = ''
    fl_file = ''
    line = 0
    in_range = 0
    total = 0
    pending_call = False
    with open(out) as f:
        for raw in f:
            raw = raw.rstrip('\n')
            m = re.match(r'^(fl|fi|fe|cfi|cfl)=\((\d+)\)(?: (.*))?$', raw)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                if m.group(1) == 'fl':
                    fl_file = names.get(m.group(2), '')
                if m.group(1) in ('fl', 'fi', 'fe'):
                    cur_file = names.get(m.group(2), '')
                continue
            if raw.startswith('fn='):
                cur_file = fl_file
                continue
            if raw.startswith('calls='):
                pending_call = True
                continue
            m = re.match(r'^([+-]?\d+|\*)\s+(\d+)', raw)
            if not m:
                continue
            pos, cost = m.group(1), int(m.group(2))
            if pos == '*':
                pass
            elif pos[0] in '+-':
                line += int(pos)
            else:
                line = int(pos)
            # A call line's cost is inclusive: count it for the range only
            # (the callee's own lines are counted in the total already).
            hit = cur_file.endswith(src) and first <= line <= last
            if pending_call:
                pending_call = False
                if hit:
                    in_range += cost
                continue
            total += cost
            if hit:
                in_range += cost
    print(in_range, total)


if __name__ == '__main__':
    main()
