"""Agent replies to sound: which feature to play (:mod:`.reply`), SSML (parsed by
:mod:`.ssml`, its ``say-as`` read aloud by :mod:`.say_as`, spoken by :mod:`.ssml_audio`), Piper
text to speech (:mod:`.tts`), a voice per agent (:mod:`.voices`) and audio decoding
(:mod:`.decode`). Everything yields mono int16 PCM chunks at a rate the caller chooses; pacing
them out in real time is :mod:`gateway.audio.playout`'s job.
"""

from gateway.render.decode import AudioDecodeError, Fetch, decode_audio, decode_feature
from gateway.render.reply import render_dialog_event
from gateway.render.ssml import SSMLError, parse_ssml
from gateway.render.ssml_audio import render_segments
from gateway.render.tts import SynthesisError, Synthesizer, SynthesizerBusy, VoiceSettings
from gateway.render.voices import VoiceBook, VoiceConfigError, derived_settings, voices_dir

__all__ = [
    "AudioDecodeError",
    "Fetch",
    "SSMLError",
    "SynthesisError",
    "Synthesizer",
    "SynthesizerBusy",
    "VoiceBook",
    "VoiceConfigError",
    "VoiceSettings",
    "decode_audio",
    "decode_feature",
    "derived_settings",
    "parse_ssml",
    "render_dialog_event",
    "render_segments",
    "voices_dir",
]
