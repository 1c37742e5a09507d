"""The person's proxy: their speech becomes utterances; agents' replies become sound and UI events."""

from gateway.proxy.models import VoiceModels
from gateway.proxy.session import VoiceSession
from gateway.proxy.settings import SessionSettings
from gateway.proxy.turns import TurnRule, TurnTaker, looks_final
from gateway.proxy.utterance import UtteranceParts, speech_dialog_event

__all__ = [
    "SessionSettings",
    "TurnRule",
    "TurnTaker",
    "UtteranceParts",
    "VoiceModels",
    "VoiceSession",
    "looks_final",
    "speech_dialog_event",
]
