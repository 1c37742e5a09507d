"""The person's proxy: their speech becomes utterances; agents' replies become sound and UI events.

Nothing is imported here: a command line that only declares the turn rule's options
(:mod:`gateway.proxy.cli`) must not load the session and its models. Import from the modules.
"""
