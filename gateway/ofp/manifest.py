"""Assistant manifests (Assistant Manifest 1.0.1): who an agent is and what it can do."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from gateway.ofp._base import WireModel

#: The identification keys the 1.1.0 envelope schema allows inside a conversant.
IDENTIFICATION_KEYS = (
    "speakerUri",
    "serviceUrl",
    "organization",
    "conversationalName",
    "department",
    "role",
    "synopsis",
    "openFloorRoles",
)


class Identification(WireModel):
    """The identity of a conversant or agent (manifest ``identification``).

    Lenient: OVON 0.9's ``serviceEndpoint`` is read as ``serviceUrl``; a missing ``speakerUri``
    falls back to the service URL (a URL is a URI); missing names are empty strings.
    """

    speaker_uri: str = ""
    service_url: str = ""
    organization: str = ""
    conversational_name: str = ""
    department: str | None = None
    role: str | None = None
    synopsis: str = ""
    open_floor_roles: dict[str, bool] | None = None

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if v is not None}
        if "serviceEndpoint" in data and "serviceUrl" not in data:
            data["serviceUrl"] = data.pop("serviceEndpoint")
        if not data.get("speakerUri") and data.get("serviceUrl"):
            data["speakerUri"] = data["serviceUrl"]
        roles = data.get("openFloorRoles")
        if isinstance(roles, dict):
            data["openFloorRoles"] = {str(k): bool(v) for k, v in roles.items()}
        elif roles is not None:
            data.pop("openFloorRoles")
        return data

    @property
    def is_convener_capable(self) -> bool:
        """Whether the agent says it is willing to act as convener."""
        return bool(self.open_floor_roles and self.open_floor_roles.get("convener"))

    @property
    def display_name(self) -> str:
        """A name to show a person: the conversational name, else the speaker URI."""
        return self.conversational_name or self.speaker_uri or self.service_url

    def to_wire(self) -> dict[str, Any]:
        """Strict output: only the keys the envelope schema allows (it forbids any other)."""
        out = self.wire()
        return {k: out[k] for k in IDENTIFICATION_KEYS if k in out}


class SupportedLayers(WireModel):
    """The dialogEvent layers a capability takes in and gives out."""

    input: list[str] = Field(default_factory=list)
    output: list[str] = Field(default_factory=list)


class Capability(WireModel):
    """One thing an agent can do, described for search."""

    keyphrases: list[str] = Field(default_factory=list)
    descriptions: list[str] = Field(default_factory=list)
    languages: list[str] | None = None
    supported_layers: SupportedLayers | None = None

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("supportedLayers"), list):
            # Older manifests list layers once for both directions.
            layers = [str(x) for x in data["supportedLayers"]]
            data = {**data, "supportedLayers": {"input": layers, "output": list(layers)}}
        return data


class Manifest(WireModel):
    """An assistant manifest; in ``publishManifests`` it may carry a recommendation ``score``."""

    identification: Identification
    capabilities: list[Capability] = Field(default_factory=list)
    score: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("capabilities"), dict):
            data = {**data, "capabilities": [data["capabilities"]]}
        return data

    def to_wire(self) -> dict[str, Any]:
        """Strict output: validates against assistant-manifest-schema 1.0.1."""
        out: dict[str, Any] = {
            "identification": self.identification.to_wire(),
            "capabilities": [c.wire() for c in self.capabilities],
        }
        if self.score is not None:
            out["score"] = self.score
        return out
