"""Threaded conversations (SynthPAI's engagement model): settings, parent choice, prompts, engine, tables."""
