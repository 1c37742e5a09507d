"""Speech over an agent (issue 38): backchannels, noises, interruptions and the agent's own echo
played into a real ``serve`` over the WebSocket (or WebRTC: ``--transport webrtc``) while the
parrot talks.

The benchmark itself is :mod:`gateway.testing.bench_interruptions` (its docstring says what it
measures); this runs it:

    flock /tmp/bench.lock .venv/bin/python scripts/bench_interruptions.py            # 53 trials
    .venv/bin/python scripts/bench_interruptions.py --limit 2                         # a look
    flock /tmp/bench.lock .venv/bin/python scripts/bench_interruptions.py --transport webrtc \
        --kind backchannel --kind echo                                      # over WebRTC, in parts
"""

import sys

from gateway.testing.bench_interruptions import main

if __name__ == "__main__":
    sys.exit(main())
