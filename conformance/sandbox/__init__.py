"""Run untrusted submissions in a child process with namespaces, limits and a JSON-only protocol.

Grading's only way to execute student code.
"""
