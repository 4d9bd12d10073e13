"""Bit operations (placeholder until the bit family lands)."""
