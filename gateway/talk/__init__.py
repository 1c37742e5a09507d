"""``talk``: the terminal front end — one conversation typed (:mod:`.text`) or spoken from a WAV
file through the whole voice pipeline (:mod:`.voice`), the way the page is the browser's. Its
options and their ``from_args`` are in :mod:`.cli`; what a run is told, in :mod:`.settings`.

A front end, not a library: the gateway's parts (the floor host, the user proxy, the agents) do
the work; this drives them for one conversation and prints what happened.
"""
