"""Helpers shared by tests in several folders."""
