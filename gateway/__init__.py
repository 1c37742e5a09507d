"""ofp-gateway: a voice gateway for the Open Floor Protocol (an Open-Floor host browser)."""

__version__ = "0.1.0"
