"""Floating-point arithmetic (placeholder until the float family lands)."""
