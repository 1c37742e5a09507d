#!/usr/bin/env python3
"""Fit the feedback reader's probe (gateway/voice/feedback_probe.json) on the held-out overlap
sets' phrases and print its leave-one-set-out figures.

The trainer itself is :mod:`gateway.testing.train_feedback` (its docstring says what it fits and
prints); this runs it (about 15 s of embedding, then the fits):

    nice .venv/bin/python scripts/train_feedback_probe.py                  # writes the probe
    .venv/bin/python scripts/train_feedback_probe.py --out /tmp/probe.json --l2 0.01
"""

import sys

from gateway.testing.train_feedback import main

if __name__ == "__main__":
    sys.exit(main())
