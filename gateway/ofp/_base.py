"""Shared pydantic configuration: camelCase on the wire, unknown keys kept, nothing mutable."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Base of every wire object.

    Fields are snake_case in Python and camelCase in JSON. Unknown keys are kept (``extra``) so
    that what an agent sent can be recorded and forwarded; each ``to_wire`` decides which of them
    the official schema allows to be emitted again.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=True,
        str_strip_whitespace=False,
    )

    def wire(self, **kwargs: Any) -> dict[str, Any]:
        """The JSON-ready dict of this object, camelCase keys, absent values left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True, **kwargs)
