"""The puzzle protocol and everything generic around it.

The engine never imports the renderer (longpuzzle.render); puzzles are found
through the registry (registry.py), never by name in engine code.
"""
