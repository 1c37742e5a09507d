"""Speech as services on the network, over the Wyoming protocol (Home Assistant's).

- :mod:`~gateway.speech.link`: one service's bounded connections, timeouts, backoff and health;
- :mod:`~gateway.speech.asr`, :mod:`~gateway.speech.tts`, :mod:`~gateway.speech.wake`: the
  clients a node uses with ``--stt``/``--tts``/``--wake-service wyoming://HOST:PORT``, behind
  the in-process parts' interfaces;
- :mod:`~gateway.speech.server`: ``ofp-gateway speech serve``, this project's speech as a
  Wyoming server;
- :mod:`~gateway.speech.services`: the settings, and building the remote parts.

docs/speech-services.md explains the choices and what a stock server loses.
"""
