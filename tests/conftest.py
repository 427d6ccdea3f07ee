import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
# Ray (tests/test_cluster.py): a local Ray's processes address each other over loopback only
# (read when ray is first imported), so no test reaches an address but 127.0.0.1
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
