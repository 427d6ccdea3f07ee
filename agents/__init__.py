"""longpuzzle.agents"""
