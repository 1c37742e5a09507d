"""The test harness, shipped in the package: what the tests and the benchmark scripts share, so
each thing exists once (like pipecat's test utilities). It needs the ``test`` extra
(``pip install ofp-gateway[test]``) and, for speech, espeak-ng; nothing of the gateway imports it.

- ``processes``: ``serve`` and ``agents serve`` on a free port, waited for until they answer
  (``start_gateway``, ``serving``, ``start_agents``, ``free_port``, ``/metrics`` samples);
- ``speech``: synthesised speech (espeak-ng, piper; cached), noise, word error rate, the wake
  phrases, the benchmarks' request clips;
- ``page``: the page's protocol client; ``cluster``: the same through HAProxy, with rejoin;
- ``loopback`` and ``wire_agents``: agents on 127.0.0.1 written inside a test;
- ``records``: a realistic recorded conversation and the stores it goes in;
- ``browser``: Debian's Chromium; ``figures``: median and p95 for the benchmarks;
- ``load`` and ``soak``: N people talking in real time, and sessions coming and going by the
  thousand (``scripts/load.py`` and ``scripts/soak.py`` run them; the tests call them).

Scripts import from here and never from a test module or another script; tests import from
here or their own package's ``helpers.py``, never from a ``conftest.py``, and never run a
script. Fixtures stay in
``conftest.py`` files (the shared ones in ``tests/conftest.py``).
"""
