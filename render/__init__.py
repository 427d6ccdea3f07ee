"""longpuzzle.render"""
