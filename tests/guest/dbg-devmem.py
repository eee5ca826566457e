#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""dbg-devmem.py: upstream drivers/net/hw/devmem.py with the debug-kernel splat/leak checks
of dbg_lib (its name matches run-selftests' accel filter, so it runs on both pairs)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dbg_lib import run_ksft  # noqa: E402

sys.exit(run_ksft("dbg-devmem.py", "drivers/net/hw/devmem.py"))
