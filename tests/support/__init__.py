"""Test support: the emulator, the functions, real API Gateway events."""
