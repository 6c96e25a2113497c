"""The lecture: the whole computation on one screen (:mod:`.explorer`, notebook 08), the scenes of a 50-minute
lecture as data (:mod:`.scenes`) and the screen that shows them (:mod:`.screen`, ``notebooks/lecture.ipynb``).

It is built on :mod:`mha_lib.explorers` (controls, the browser-drawn picture); the explorers never import it.
"""

from .explorer import compute_lecture, lecture_figure, make_lecture_explorer
from .scenes import SCENES, Scene
from .screen import KEYS_JS, make_lecture_screen

__all__ = ["compute_lecture", "lecture_figure", "make_lecture_explorer", "SCENES", "Scene", "KEYS_JS", "make_lecture_screen"]
