"""The embedded floor manager (OFP 1.1.0 §2.2): a pure state machine per conversation."""

from gateway.floor.manager import Delivery, Floor, FloorBusy, Refused, Route, route_for

__all__ = ["Delivery", "Floor", "FloorBusy", "Refused", "Route", "route_for"]
