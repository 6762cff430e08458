"""The module never finishes importing. Expected: load_error (timeout while importing)."""
while True:
    pass
