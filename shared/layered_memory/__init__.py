"""layered-memory: a memory layer for LLM chat bots and agents."""
