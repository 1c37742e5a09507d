"""Language models: the embedded llama.cpp runtime (:mod:`gateway.llm.embedded`) that the
assistant agent and the semantic end-of-turn signal run on when no remote model is named."""
