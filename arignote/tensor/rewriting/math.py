"""Rules about arithmetic: neutral and absorbing elements, gathering constants, cancellation, powers (canonicalize and specialize)."""
