"""cvt (placeholder until the conversion family lands)."""
