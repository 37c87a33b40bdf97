#!/usr/bin/env python3
"""make_bin.py EXE DIR STAMP NAME...: DIR/NAME -> EXE for every NAME, then touch STAMP."""
import os
import sys

exe, bindir, stamp, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
os.makedirs(bindir, exist_ok=True)
for name in names:
    link = os.path.join(bindir, name)
    tmp = link + '.tmp'
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.abspath(exe), tmp)
    os.replace(tmp, link)
with open(stamp, 'w') as f:
    f.write('\n'.join(names) + '\n')
