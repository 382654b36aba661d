"""Probe routers trained anywhere: taps, adapters and the collision-vs-cosine measurement.

:mod:`lshsim.probe.tap` (the :class:`RouterTap` protocol), :mod:`lshsim.probe.hf` (Hugging
Face MoE models), :mod:`lshsim.probe.modules` (product-key memories, any torch module, token-id
hash mappings), :mod:`lshsim.probe.text` (the sentence rows a tap reads) and
:mod:`lshsim.probe.measure` (the rows). ``lshsim probe --hf DIR`` and ``lshsim probe --tap
module:factory`` run it; :mod:`lshsim.t5.probe` probes lshsim's own T5 (``--run``,
``--config``).
"""

from lshsim.probe.tap import LAWS, Capture, RouterTap, load_tap

__all__ = ["LAWS", "Capture", "RouterTap", "load_tap"]
