"""harness: the context layer of a long-running agent engine.

This module re-exports the public API (see CONTRACT.md) and nothing else.
Re-exports use the ``import X as X`` form so type checkers treat them as public.
"""

# --- tokenizer and prompt assembler (core) ---

# --- hooks ---

# --- instruction files ---

# --- harness, config, agents (main job) ---
