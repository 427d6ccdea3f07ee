"""longpuzzle.solvers"""
